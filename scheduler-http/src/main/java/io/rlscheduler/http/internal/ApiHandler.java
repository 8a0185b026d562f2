package io.rlscheduler.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes each whole request off the event loop: a malformed one is answered here at once, every
 * other goes to the request threads, where {@link Routes} reads Redis, disk or the store. Requests
 * on one connection are answered in order: the next is read only once the previous one answered
 * (auto-read is off while one is being handled).
 */
final class ApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(ApiHandler.class);

    private final Routes routes;
    private final ExecutorService requests;

    ApiHandler(Routes routes, ExecutorService requests, Settings settings) {
        this.routes = routes;
        this.requests = requests;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        DecoderResult decoded = request.decoderResult();
        if (!decoded.isSuccess()) {
            Responses.error(ctx.channel(), false, ApiException.badRequest("malformed HTTP request: "
                    + (decoded.cause() == null ? "unreadable" : decoded.cause().getMessage())), null);
            return;
        }
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        FullHttpRequest retained = request.retainedDuplicate();
        ctx.channel().config().setAutoRead(false);
        Exchange exchange = new Exchange(ctx.channel(), retained, keepAlive);
        exchange.onFinish = () -> {
            retained.release();
            ctx.channel().config().setAutoRead(true);
        };
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
            retained.release();
            ctx.channel().config().setAutoRead(true);
            Responses.error(ctx.channel(), false, new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE",
                    "the server is too busy; retry"), java.util.Map.of("Retry-After", "1"));
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("HTTP connection {} closed after {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
