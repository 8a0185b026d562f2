package io.rlscheduler.master.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Holds an authenticated worker connection to its inbound rate: a token bucket of
 * {@link WorkerLimits#inboundBurst()} bytes, refilled at {@link WorkerLimits#inboundRate()} bytes
 * per second, from which every byte read after the handshake is taken. When a read leaves it in
 * debt, the channel stops reading (auto-read off) until the bucket is back at zero, on a timer of
 * the channel's event loop; meanwhile the worker's bytes wait in the socket buffers and TCP holds
 * its writes back. Nothing is dropped, buffered here or delayed inside the pipeline: what was
 * read is passed on at once. Bytes before the handshake succeeded are not counted.
 *
 * <p>Stands before the frame decoder, so it counts the bytes as they come off the socket (after
 * TLS, where there is TLS). Netty's {@code ChannelTrafficShapingHandler} pauses reads the same way,
 * but it measures averages over a check interval with a timer per channel always running, has no
 * burst, and counts from the first byte, the handshake included; this handler keeps no timer
 * unless it has paused, and a burst lets a worker catch up after a reconnect at full speed.
 *
 * <p>Stateful: one instance per channel; confined to its event loop.
 */
final class InboundThrottle extends ChannelInboundHandlerAdapter {

    private static final double NANOS_PER_SECOND = 1e9;

    private final WorkerLimits limits;
    private final BooleanSupplier authenticated;
    private double tokens;
    private long refilledAt;
    private boolean started;
    private boolean clockRunning;
    private boolean paused;

    /**
     * @param limits        the rate and burst, and the counter of pauses
     * @param authenticated whether the connection's handshake succeeded (read on the event loop)
     */
    InboundThrottle(WorkerLimits limits, BooleanSupplier authenticated) {
        this.limits = limits;
        this.authenticated = authenticated;
        this.tokens = limits.inboundBurst();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf bytes && (started || (started = authenticated.getAsBoolean()))) {
            take(ctx, bytes.readableBytes());
        }
        ctx.fireChannelRead(msg);
    }

    private void take(ChannelHandlerContext ctx, int bytes) {
        refill(ctx);
        tokens -= bytes;
        if (tokens < 0 && !paused) {
            paused = true;
            limits.throttled();
            ctx.channel().config().setAutoRead(false);
            resumeLater(ctx);
        }
    }

    /** Schedules the end of the pause for when the debt is paid. */
    private void resumeLater(ChannelHandlerContext ctx) {
        long delay = (long) Math.ceil(-tokens * NANOS_PER_SECOND / limits.inboundRate());
        ctx.executor().schedule(() -> resume(ctx), Math.max(1, delay), TimeUnit.NANOSECONDS);
    }

    private void resume(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive()) {
            return;
        }
        refill(ctx);
        if (tokens < 0) {
            resumeLater(ctx); // the timer fired early
            return;
        }
        paused = false;
        ctx.channel().config().setAutoRead(true); // reads at once what waits in the socket
    }

    /** Adds the tokens earned since the last refill; the first one, at the first byte counted, starts the clock. */
    private void refill(ChannelHandlerContext ctx) {
        long now = ctx.executor().ticker().nanoTime();
        if (clockRunning) {
            tokens = Math.min(limits.inboundBurst(),
                    tokens + (now - refilledAt) * (double) limits.inboundRate() / NANOS_PER_SECOND);
        }
        clockRunning = true;
        refilledAt = now;
    }
}
