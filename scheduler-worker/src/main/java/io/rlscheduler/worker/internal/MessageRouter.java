package io.rlscheduler.worker.internal;

import com.google.protobuf.MessageLite;
import io.netty.channel.Channel;
import io.rlscheduler.protocol.CancelTask;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.MessageType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands what comes from the master to the mechanism it is for, and forgets an ended attempt once
 * its lines have been delivered. Called on the link's event loop; does not block.
 */
public final class MessageRouter implements MasterLink.Listener {

    private static final Logger log = LoggerFactory.getLogger(MessageRouter.class);

    private final Attempts attempts;
    private final AttemptRunner runner;
    private final LogShipper shipper;
    private final LeaseKeeper leases;

    public MessageRouter(Attempts attempts, AttemptRunner runner, LogShipper shipper, LeaseKeeper leases) {
        this.attempts = attempts;
        this.runner = runner;
        this.shipper = shipper;
        this.leases = leases;
    }

    @Override
    public void onReady(Channel channel, String masterId) {
        for (Attempt a : attempts.all()) {
            shipper.reconnected(channel, a);
        }
        channel.flush();
        shipper.flush();
    }

    @Override
    public void onMessage(Channel channel, MessageLite msg) {
        if (msg instanceof ExecuteTask task) {
            runner.execute(channel, task);
        } else if (msg instanceof CancelTask cancel) {
            runner.cancel(cancel.getTaskId(), cancel.getEpoch());
        } else if (msg instanceof LogAck ack) {
            Attempt a = attempts.find(ack.getTaskId(), ack.getEpoch());
            if (a != null) {
                shipper.acknowledged(a, ack);
                forgetIfDelivered(a);
            }
        } else if (msg instanceof HeartbeatAck ack) {
            if (ack.getLivenessRenewedUntilUnixMs() > 0) {
                leases.renewedByMaster(ack.getSequence());
            }
        } else if (msg instanceof ErrorReply error) {
            onError(error);
        }
    }

    private void onError(ErrorReply error) {
        Attempt a = attempts.find(error.getTaskId(), error.getEpoch());
        if (a != null && refusesLines(error.getCode()) && error.getOffendingType() == MessageType.LOG_BATCH.getCode()) {
            shipper.refused(a);
            forgetIfDelivered(a);
        } else {
            log.warn("master reported {}: {} (task {} epoch {})", error.getCode(), error.getMessage(),
                    error.getTaskId(), error.getEpoch());
        }
    }

    /** Whether the master answered that it takes no more lines of the attempt (it is not, or no longer, this worker's). */
    private static boolean refusesLines(ErrorCode code) {
        return code == ErrorCode.ERROR_CODE_STALE_EPOCH || code == ErrorCode.ERROR_CODE_NOT_HOLDER
                || code == ErrorCode.ERROR_CODE_UNKNOWN_TASK;
    }

    private void forgetIfDelivered(Attempt attempt) {
        attempts.forgetIfDelivered(attempt);
    }

    @Override
    public void onDisconnected(Channel channel) {
        // Attempts go on; their lines wait for the next connection.
    }

    @Override
    public void onWritable(Channel channel) {
        // The socket drained what the last flush could not hand it: send on at once instead of
        // waiting for the next flush tick (which would cap a chatty task's lines/s).
        shipper.flush();
    }
}
