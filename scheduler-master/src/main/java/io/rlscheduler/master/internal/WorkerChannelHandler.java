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
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.MessageType;
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
 * <p>Sends a {@link Challenge} with a fresh nonce on connect and accepts nothing but a
 * {@link Hello} until its {@link Handshake} admitted the worker (the proof of the shared secret
 * or of the worker's key, the version, the identity and its session in Redis); anything else is
 * answered {@code NOT_AUTHENTICATED}, logged with the peer, and the connection closed, as is a
 * connection without an admitted hello within the handshake timeout. After acceptance it
 * answers heartbeats, keeping the last on the worker's {@link ConnectedWorker} (for health),
 * and hands log batches to the log manager (acknowledging what is written) once
 * {@link TaskFrameGate} found the worker's session holds their attempt, as it checks the
 * worker's acknowledgements: a frame of another's attempt writes nothing. How an attempt ended
 * it learns from Redis, not from the worker ({@link TaskWatcher}). Nothing here blocks the event
 * loop: the log manager and Redis are asynchronous.
 *
 * <p>When the log manager lacks lines the worker sent (a batch began beyond its next line, or a
 * write failed), the worker is asked to resend ({@code LogAck.resend}): at once
 * for a gap, but once per acknowledged value (the batches already on their way behind it meet
 * the same gap and must not each cause another resend); {@link #RESEND_AFTER_FAILURE_MILLIS}
 * after a failed write (a disk that is full stays full for a while), one pending per attempt, the
 * delay doubling up to {@link #RESEND_AFTER_FAILURE_MAX_MILLIS} while writes keep failing (each
 * resend rereads the file and resends every unacknowledged line); while one is pending, a gap
 * asks for nothing more.
 *
 * <p>A log batch for an attempt beyond those the connection may have open is refused first
 * ({@link OpenAttempts}); an acknowledgement says when the task's log is cut at its size limit
 * ({@code LogAck.cut}). The other limits on authenticated workers stand before the frame decoder
 * ({@link WorkerPipeline}) and read {@link #authenticatedWorker()}.
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
    private final Handshake handshake;
    private ConnectedWorker worker;
    /** Checks task-scoped frames against the attempts' holders; made once the worker is accepted. */
    private TaskFrameGate gate;
    private ScheduledFuture<?> handshakeTimeout;
    private final OpenAttempts openAttempts;

    public WorkerChannelHandler(MasterContext context) {
        this.context = context;
        this.openAttempts = context.openAttempts.forConnection();
        this.handshake = new Handshake(context, serverNonce);
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
            if (hb.getRunningTasksCount() == 0) {
                renewIdle(ctx, hb.getSequence());
            } else {
                ctx.write(HeartbeatAck.newBuilder().setSequence(hb.getSequence()).build()); // flushed in channelReadComplete
            }
        } else if (msg instanceof LogBatch batch) {
            onLogBatch(ctx, batch);
        } else if (msg instanceof ExecuteTaskAck ack) {
            onExecuteTaskAck(ack);
        } else if (msg instanceof ErrorReply error) {
            log.warn("worker {} reported an error: {} {}", worker.getWorkerId(), error.getCode(), error.getMessage());
        } else {
            MessageType type = MessageType.forMessage(msg);
            ctx.writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_INVALID_REQUEST)
                    .setMessage(type + " is not sent by workers").setOffendingType(type.getCode()).build());
        }
    }

    /**
     * An idle worker's heartbeat: its liveness lease is renewed here, together with the other idle
     * workers' (one script run for many), and the acknowledgement says until when, so that the
     * worker need not renew it itself. The acknowledgement goes when Redis has answered, off the
     * event loop's thread; without a renewal (Redis failed, or the worker is one the renewal does
     * not serve) it goes without the deadline, and the worker renews the lease itself.
     */
    private void renewIdle(ChannelHandlerContext ctx, long sequence) {
        CompletableFuture<Long> renewal;
        try {
            renewal = context.renewIdle.apply(worker.getWorkerId(), worker.getSessionId());
        } catch (RuntimeException e) {
            renewal = CompletableFuture.failedFuture(e);
        }
        renewal.whenComplete((deadline, error) -> {
            HeartbeatAck.Builder ack = HeartbeatAck.newBuilder().setSequence(sequence);
            if (error == null && deadline != null && deadline > 0) {
                ack.setLivenessRenewedUntilUnixMs(deadline);
            } else if (error != null) {
                log.debug("worker {}: its liveness lease was not renewed for it: {}", worker.getWorkerId(), error.toString());
            }
            ctx.writeAndFlush(ack.build());
        });
    }

    /** Hands the hello to the connection's {@link Handshake}; once admitted, the worker is served here. */
    private void handshake(ChannelHandlerContext ctx, Hello hello) {
        handshake.onHello(ctx, hello, admitted -> {
            handshakeTimeout.cancel(false);
            worker = admitted;
            gate = new TaskFrameGate(context.holders, context.holderStats, ctx.channel(), worker.getWorkerId(),
                    worker.getSessionId());
        });
    }

    /**
     * An acknowledgement changes nothing in Redis here (the worker records it there): checked, logged
     * when a refusal, and noted as the holder's last frame but its lines ({@link AttemptHolders#acknowledged}).
     */
    private void onExecuteTaskAck(ExecuteTaskAck ack) {
        if (!TaskIds.isValid(ack.getTaskId())) {
            worker.getChannel().writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_INVALID_REQUEST)
                    .setMessage("invalid task id").setOffendingType(MessageType.EXECUTE_TASK_ACK.getCode()).build());
            return;
        }
        gate.admit(ack.getTaskId(), ack.getEpoch(), MessageType.EXECUTE_TASK_ACK, new TaskFrameGate.Admitted() {
            @Override
            public void run() {
                context.holders.acknowledged(ack.getTaskId(), ack.getEpoch());
                if (!ack.getAccepted()) {
                    log.warn("worker {} refused task {} epoch {}: {} {}", worker.getWorkerId(), ack.getTaskId(),
                            ack.getEpoch(), ack.getErrorCode(), ack.getMessage());
                }
            }

            @Override
            public void unchecked(Throwable why) {
                log.debug("cannot check who holds task {}: {}", ack.getTaskId(), why.toString());
            }
        });
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
        gate.admit(batch.getTaskId(), batch.getEpoch(), MessageType.LOG_BATCH, new TaskFrameGate.Admitted() {
            @Override
            public void run() {
                if (openAttempts.admit(ctx, batch)) {
                    write(ctx, batch);
                } // else answered LIMIT_EXCEEDED: the connection has its most attempts open
            }

            @Override
            public void unchecked(Throwable why) {
                log.warn("cannot check who holds task {}: {}; its lines are asked for again later", batch.getTaskId(),
                        why.toString());
                resendLater(ctx, batch.getTaskId(), batch.getEpoch());
            }
        });
    }

    /** Writes a batch of an attempt the worker holds, and answers what was written. */
    private void write(ChannelHandlerContext ctx, LogBatch batch) {
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
                        .setAckedSequence(result.acked()).setCut(result.cut());
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

    /** Returns the worker this connection authenticated as, or null before the handshake succeeded. On the event loop. */
    ConnectedWorker authenticatedWorker() {
        return worker;
    }
}
