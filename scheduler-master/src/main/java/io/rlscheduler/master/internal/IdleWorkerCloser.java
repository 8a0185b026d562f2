package io.rlscheduler.master.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes an authenticated worker connection from which nothing at all has come for
 * {@link WorkerLimits#idleTimeoutMillis()} (by default three heartbeat intervals, at least 5 s:
 * a worker heartbeats every interval, so only a peer that stopped is closed), with one log line.
 * A connection that has not authenticated is left to the handshake timeout; one whose reads the
 * {@link InboundThrottle} paused is not idle, its bytes wait in the socket. Netty's
 * {@link IdleStateHandler} keeps the time, on the channel's event loop.
 *
 * <p>Stateful: one instance per channel.
 */
final class IdleWorkerCloser extends IdleStateHandler {

    private static final Logger log = LoggerFactory.getLogger(IdleWorkerCloser.class);

    private final WorkerLimits limits;
    private final Supplier<ConnectedWorker> worker;

    /**
     * @param limits the idle timeout, and the counter of closes
     * @param worker the connection's authenticated worker, null before the handshake (read on the event loop)
     */
    IdleWorkerCloser(WorkerLimits limits, Supplier<ConnectedWorker> worker) {
        super(limits.idleTimeoutMillis(), 0, 0, TimeUnit.MILLISECONDS);
        this.limits = limits;
        this.worker = worker;
    }

    @Override
    protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
        ConnectedWorker w = worker.get();
        if (evt.state() != IdleState.READER_IDLE || w == null || !ctx.channel().config().isAutoRead()) {
            return;
        }
        limits.closedIdle();
        log.warn("closing the connection of worker {} (session {}) from {}: nothing received for {} ms",
                w.getWorkerId(), w.getSessionId(), ctx.channel().remoteAddress(), limits.idleTimeoutMillis());
        ctx.close();
    }
}
