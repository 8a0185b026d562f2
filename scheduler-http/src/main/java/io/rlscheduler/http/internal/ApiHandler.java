package io.rlscheduler.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes each whole request off the event loop: a malformed one is answered here at once, every
 * other goes to the request threads, where {@link Routes} reads Redis, disk or the store. Requests
 * on one connection are answered one at a time, in order: those pipelined behind the one being
 * handled wait here (at most 16, else the connection is closed). A connection that carries a
 * stream serves nothing else.
 */
final class ApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(ApiHandler.class);

    private final Routes routes;
    private final ExecutorService requests;

    ApiHandler(Routes routes, ExecutorService requests, Settings settings) {
        this.routes = routes;
        this.requests = requests;
    }

    /** Requests pipelined behind the one being handled; most a connection may queue. */
    private static final int MAX_WAITING = 16;

    // All on the connection's event loop.
    private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
    private boolean busy;
    /** Set once this connection carries a stream: nothing else is served on it. */
    private boolean streaming;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (streaming) {
            ctx.close(); // a request on a connection that carries a stream: its answer would land inside the stream
            return;
        }
        FullHttpRequest retained = request.retainedDuplicate();
        if (busy) {
            if (waiting.size() >= MAX_WAITING) {
                retained.release();
                ctx.close();
                return;
            }
            waiting.add(retained); // answered in order, once those before it have been
            return;
        }
        start(ctx, retained);
    }

    private void start(ChannelHandlerContext ctx, FullHttpRequest request) {
        DecoderResult decoded = request.decoderResult();
        if (!decoded.isSuccess()) {
            request.release();
            Responses.error(ctx.channel(), false, ApiException.badRequest("malformed HTTP request: "
                    + (decoded.cause() == null ? "unreadable" : decoded.cause().getMessage())), null);
            return;
        }
        busy = true;
        Exchange exchange = new Exchange(ctx.channel(), request, HttpUtil.isKeepAlive(request));
        exchange.onFinish = () -> ctx.executor().execute(() -> {
            request.release();
            busy = false;
            streaming |= exchange.streaming;
            FullHttpRequest next = waiting.poll();
            if (next != null) {
                if (streaming || !ctx.channel().isActive()) {
                    next.release();
                    ctx.close();
                } else {
                    start(ctx, next);
                }
            }
        });
        try {
            requests.execute(() -> {
                try {
                    routes.handle(exchange);
                } finally {
                    if (!exchange.deferred) {
                        exchange.finish();
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            exchange.finish();
            Responses.error(ctx.channel(), false, new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE",
                    "the server is too busy; retry"), java.util.Map.of("Retry-After", "1"));
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        for (FullHttpRequest r; (r = waiting.poll()) != null; ) {
            r.release();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("HTTP connection {} closed after {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
