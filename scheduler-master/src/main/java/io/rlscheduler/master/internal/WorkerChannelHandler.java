package io.rlscheduler.master.internal;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.ExecuteTaskAck;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.MessageType;
import io.rlscheduler.protocol.RejectReason;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's side of one worker connection. Stateful: one instance per channel.
 *
 * <p>Sends a {@link Challenge} with a fresh nonce on connect and accepts nothing but a valid
 * {@link Hello} until the worker has proven it knows the shared secret; anything else, a bad
 * proof, an unsupported version (a major other than this master's, or a minor below
 * {@link FrameFormat#MIN_MINOR_VERSION}) or an invalid identity is answered (rejection or
 * {@code NOT_AUTHENTICATED}), logged with the peer, and the connection closed. The worker never
 * enters the registry. After acceptance it answers heartbeats, keeping the last on the worker's
 * {@link ConnectedWorker} (for health), and hands log batches to the log manager (acknowledging
 * what is written). How an attempt ended it learns from Redis, not from the worker
 * ({@link TaskWatcher}). Nothing here blocks the event loop: the log manager and Redis are
 * asynchronous.
 *
 * <p>When the log manager lacks lines the worker sent (a batch began beyond its next line, or a
 * write failed), the worker is asked to resend ({@code LogAck.resend}): at once
 * for a gap, but once per acknowledged value (the batches already on their way behind it meet
 * the same gap and must not each cause another resend); {@link #RESEND_AFTER_FAILURE_MILLIS}
 * after a failed write (a disk that is full stays full for a while), one pending per attempt, the
 * delay doubling up to {@link #RESEND_AFTER_FAILURE_MAX_MILLIS} while writes keep failing (each
 * resend rereads the file and resends every unacknowledged line); while one is pending, a gap
 * asks for nothing more.
 */
public final class WorkerChannelHandler extends SimpleChannelInboundHandler<MessageLite> {

    private static final Logger log = LoggerFactory.getLogger(WorkerChannelHandler.class);

    /** How long after a failed log write the worker is asked to resend. */
    static final long RESEND_AFTER_FAILURE_MILLIS = 2_000;
    /** The longest delay between resends while an attempt's log writes keep failing. */
    static final long RESEND_AFTER_FAILURE_MAX_MILLIS = 60_000;

    private final MasterContext context;
    private final ByteString serverNonce = HandshakeProof.newNonce();
    /**
     * Per attempt ("task#epoch") with a gap: the acknowledged value a resend was asked at. Touched
     * by the log manager's callbacks (its I/O threads, or the event loop for a future already done).
     */
    private final Map<String, Long> resendAsked = new ConcurrentHashMap<>();
    /** Attempts whose resend after a failed write is scheduled. */
    private final Set<String> resendScheduled = ConcurrentHashMap.newKeySet();
    /** Attempts whose writes failed: the delay before the next resend, until a write succeeds. */
    private final Map<String, Long> resendDelay = new ConcurrentHashMap<>();
    private ConnectedWorker worker;
    private ScheduledFuture<?> handshakeTimeout;

    public WorkerChannelHandler(MasterContext context) {
        this.context = context;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(Challenge.newBuilder()
                .setProtocolMajor(FrameFormat.VERSION).setProtocolMinor(FrameFormat.MINOR_VERSION)
                .setServerNonce(serverNonce).setMasterId(context.masterId).build());
        handshakeTimeout = ctx.executor().schedule(() -> {
            if (worker == null && ctx.channel().isActive()) {
                log.warn("closing connection {}: no valid hello within {} ms", ctx.channel().remoteAddress(),
                        context.handshakeTimeoutMillis);
                ctx.close();
            }
        }, context.handshakeTimeoutMillis, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        if (worker != null && context.registry.remove(worker.getWorkerId(), ctx.channel())) {
            log.info("worker {} (session {}) disconnected from {}", worker.getWorkerId(), worker.getSessionId(),
                    ctx.channel().remoteAddress());
        }
        ctx.fireChannelInactive();
    }

    /**
     * Flushes the acknowledgements written while handling what this read brought (a worker
     * sends log batches and heartbeats in bursts): one system call for all of them, not one each.
     */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
        ctx.fireChannelReadComplete();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
        if (worker == null) {
            if (msg instanceof Hello hello) {
                handshake(ctx, hello);
            } else {
                MessageType type = MessageType.forMessage(msg);
                log.warn("closing connection {}: {} before a successful hello", ctx.channel().remoteAddress(), type);
                ctx.writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_NOT_AUTHENTICATED)
                                .setMessage("authenticate with HELLO first").setOffendingType(type.getCode()).build())
                        .addListener(ChannelFutureListener.CLOSE);
            }
            return;
        }
        if (msg instanceof Heartbeat hb) {
            worker.heartbeat(hb);
            ctx.write(HeartbeatAck.newBuilder().setSequence(hb.getSequence()).build()); // flushed in channelReadComplete
        } else if (msg instanceof LogBatch batch) {
            onLogBatch(ctx, batch);
        } else if (msg instanceof ExecuteTaskAck ack) {
            if (!ack.getAccepted()) {
                log.warn("worker {} refused task {} epoch {}: {} {}", worker.getWorkerId(), ack.getTaskId(),
                        ack.getEpoch(), ack.getErrorCode(), ack.getMessage());
            }
        } else if (msg instanceof ErrorReply error) {
            log.warn("worker {} reported an error: {} {}", worker.getWorkerId(), error.getCode(), error.getMessage());
        } else {
            MessageType type = MessageType.forMessage(msg);
            ctx.writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_INVALID_REQUEST)
                    .setMessage(type + " is not sent by workers").setOffendingType(type.getCode()).build());
        }
    }

    private void handshake(ChannelHandlerContext ctx, Hello hello) {
        String peer = String.valueOf(ctx.channel().remoteAddress());
        if (hello.getProtocolMajor() != FrameFormat.VERSION) {
            reject(ctx, RejectReason.REJECT_REASON_UNSUPPORTED_VERSION,
                    "protocol major " + hello.getProtocolMajor() + " is not supported; this master speaks " + FrameFormat.VERSION);
            return;
        }
        if (hello.getProtocolMinor() < FrameFormat.MIN_MINOR_VERSION) {
            reject(ctx, RejectReason.REJECT_REASON_UNSUPPORTED_VERSION, "protocol " + FrameFormat.VERSION + "."
                    + hello.getProtocolMinor() + " is not supported; this master speaks " + FrameFormat.VERSION + "."
                    + FrameFormat.MIN_MINOR_VERSION + " and later");
            return;
        }
        if (!TaskIds.isValid(hello.getWorkerId()) || !TaskIds.isValid(hello.getSessionId())) {
            reject(ctx, RejectReason.REJECT_REASON_INVALID_IDENTITY,
                    "worker id and session id must be 1 to 128 of [A-Za-z0-9._-]");
            return;
        }
        String certificateMismatch = CertificateIdentity.mismatch(ctx.channel(), hello.getWorkerId());
        if (certificateMismatch != null) {
            reject(ctx, RejectReason.REJECT_REASON_INVALID_IDENTITY, certificateMismatch);
            return;
        }
        ByteString expected = HandshakeProof.helloProof(context.secret, serverNonce, hello.getClientNonce(),
                hello.getWorkerId(), hello.getSessionId());
        if (hello.getClientNonce().size() != HandshakeProof.NONCE_LENGTH || !HandshakeProof.matches(expected, hello.getProof())) {
            reject(ctx, RejectReason.REJECT_REASON_AUTHENTICATION_FAILED,
                    "authentication failed: the proof does not match this master's shared secret");
            return;
        }
        if (sendToLeader(ctx, hello.getWorkerId())) {
            return;
        }
        handshakeTimeout.cancel(false);
        worker = new ConnectedWorker(hello.getWorkerId(), hello.getSessionId(), hello.getLabelsMap(), ctx.channel());
        ConnectedWorker previous = context.registry.add(worker);
        if (previous != null && previous.getChannel() != ctx.channel()) {
            log.info("worker {} reconnected; closing its previous connection {}", worker.getWorkerId(),
                    previous.getChannel().remoteAddress());
            previous.getChannel().close();
        }
        // Checked again once in the registry: a master that lost the leadership between the check
        // above and the add closed only the connections it found there (leadership is written
        // before that snapshot is taken), and a worker left on a standby would never get work.
        if (sendToLeader(ctx, hello.getWorkerId())) {
            return; // its close removes it from the registry
        }
        int minor = Math.min(FrameFormat.MINOR_VERSION, hello.getProtocolMinor());
        ctx.writeAndFlush(HelloAccepted.newBuilder()
                .setProtocolMinor(minor).setMasterId(context.masterId)
                .setProof(HandshakeProof.acceptProof(context.secret, hello.getClientNonce(), serverNonce, context.masterId))
                .setHeartbeatIntervalMs(context.coreOptions.getHeartbeatInterval().toMillis())
                .setLivenessLeaseMs(context.coreOptions.getLivenessLease().toMillis())
                .setTaskLeaseMs(context.coreOptions.getTaskLease().toMillis())
                .build());
        log.info("worker {} (session {}) connected from {}", worker.getWorkerId(), worker.getSessionId(), peer);
        context.dispatcher.trigger();
    }

    /** Unless this master leads: sends the worker to the leader (NOT_LEADER), closes, and returns true. */
    private boolean sendToLeader(ChannelHandlerContext ctx, String workerId) {
        io.rlscheduler.core.internal.LeaderStatus leader = context.leadership.get();
        if (leader != null && leader.isSelf()) {
            return false;
        }
        String address = leader == null ? "" : leader.getAddress();
        log.info("worker {} connected to standby master {}; sending it to the leader {}", workerId,
                context.masterId, address.isEmpty() ? "(unknown)" : address);
        ctx.writeAndFlush(HelloRejected.newBuilder().setReason(RejectReason.REJECT_REASON_NOT_LEADER)
                        .setMessage("master " + context.masterId + " is a standby").setLeaderAddress(address).build())
                .addListener(ChannelFutureListener.CLOSE);
        return true;
    }

    private void reject(ChannelHandlerContext ctx, RejectReason reason, String message) {
        log.warn("rejected worker connection {}: {}", ctx.channel().remoteAddress(), message);
        ctx.writeAndFlush(HelloRejected.newBuilder().setReason(reason).setMessage(message).build())
                .addListener(ChannelFutureListener.CLOSE);
    }

    private void onLogBatch(ChannelHandlerContext ctx, LogBatch batch) {
        if (!TaskIds.isValid(batch.getTaskId())) {
            ctx.writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_INVALID_REQUEST)
                    .setMessage("invalid task id").setOffendingType(MessageType.LOG_BATCH.getCode()).build());
            return;
        }
        if (batch.getAcknowledged() < 0) {
            // uint64 beyond 2^63 - 1: no worker of ours sends it.
            ctx.writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_INVALID_REQUEST)
                    .setMessage("acknowledged must be below 2^63").setTaskId(batch.getTaskId())
                    .setEpoch(batch.getEpoch()).setOffendingType(MessageType.LOG_BATCH.getCode()).build());
            return;
        }
        CompletableFuture<TaskLogManager.Written> written = context.logs.write(batch.getTaskId(), batch.getEpoch(),
                batch.getAcknowledged(), batch.getChunksList());
        written.whenComplete((result, error) -> {
            if (error instanceof IllegalArgumentException invalid) {
                log.warn("worker {} sent a malformed log batch for task {}: {}", worker.getWorkerId(),
                        batch.getTaskId(), invalid.getMessage());
                ctx.channel().writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_INVALID_REQUEST)
                        .setMessage(String.valueOf(invalid.getMessage())).setTaskId(batch.getTaskId())
                        .setEpoch(batch.getEpoch()).setOffendingType(MessageType.LOG_BATCH.getCode()).build());
            } else if (error != null) {
                log.error("cannot write log of task {}: {}", batch.getTaskId(), error.toString());
                resendLater(ctx, batch.getTaskId(), batch.getEpoch());
            } else if (result.acked() >= 0) {
                LogAck.Builder ack = LogAck.newBuilder().setTaskId(batch.getTaskId()).setEpoch(batch.getEpoch())
                        .setAckedSequence(result.acked());
                if (result.gap()) {
                    String key = batch.getTaskId() + '#' + batch.getEpoch();
                    Long asked = resendAsked.put(key, result.acked());
                    if ((asked == null || asked != result.acked()) && !resendScheduled.contains(key)) {
                        log.info("task {} epoch {}: lines after {} are missing from its log; the worker is asked to resend",
                                batch.getTaskId(), batch.getEpoch(), result.acked());
                        ack.setResend(true);
                    }
                } else if (!resendAsked.isEmpty() || !resendDelay.isEmpty()) {
                    String key = batch.getTaskId() + '#' + batch.getEpoch();
                    resendAsked.remove(key);
                    resendDelay.remove(key);
                }
                ctx.channel().writeAndFlush(ack.build());
            } else {
                ctx.channel().writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_STALE_EPOCH)
                        .setMessage("log batch of a stale attempt").setTaskId(batch.getTaskId())
                        .setEpoch(batch.getEpoch()).setOffendingType(MessageType.LOG_BATCH.getCode()).build());
            }
        });
    }

    /**
     * Asks the worker, after {@link #RESEND_AFTER_FAILURE_MILLIS} (doubling while writes keep
     * failing), to resend the attempt's unacknowledged lines (acknowledging nothing new: the
     * worker keeps what it has).
     */
    private void resendLater(ChannelHandlerContext ctx, String taskId, long epoch) {
        String key = taskId + '#' + epoch;
        if (!resendScheduled.add(key)) {
            return;
        }
        Long previous = resendDelay.get(key);
        long delay = previous == null ? RESEND_AFTER_FAILURE_MILLIS : Math.min(previous * 2, RESEND_AFTER_FAILURE_MAX_MILLIS);
        resendDelay.put(key, delay);
        ctx.channel().eventLoop().schedule(() -> {
            resendScheduled.remove(key);
            if (ctx.channel().isActive()) {
                ctx.channel().writeAndFlush(LogAck.newBuilder().setTaskId(taskId).setEpoch(epoch).setAckedSequence(0)
                        .setResend(true).build());
            }
        }, delay, TimeUnit.MILLISECONDS);
    }
}
