package io.rlscheduler.http.internal;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.protocol.NettyTransport;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLException;

/**
 * The HTTP server: Netty's codec and aggregator (bodies up to the size limit, larger ones answered
 * 413 as JSON), then {@link ApiHandler}, which hands each request to the request threads. Owns its
 * event loops, its request threads and its live streams.
 */
public final class ApiServer {

    /** Requests waiting for a request thread past this many are answered 503. */
    private static final int REQUEST_QUEUE = 4096;

    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final Channel channel;
    private final ExecutorService requests;
    private final ChannelGroup open;
    private final Streams streams;

    private ApiServer(EventLoopGroup boss, EventLoopGroup io, Channel channel, ExecutorService requests, ChannelGroup open,
                      Streams streams) {
        this.boss = boss;
        this.io = io;
        this.channel = channel;
        this.requests = requests;
        this.open = open;
        this.streams = streams;
    }

    public static ApiServer start(SchedulerMaster master, Settings settings, PrometheusMeterRegistry registry) {
        SslContext ssl = null;
        if (settings.tlsChain() != null) {
            try {
                ssl = SslContextBuilder.forServer(settings.tlsChain().toFile(), settings.tlsKey().toFile()).build();
            } catch (SSLException | IllegalArgumentException e) {
                throw new SchedulerException("the HTTP API's TLS files could not be read: " + e.getMessage(), false, e);
            }
        }
        NettyTransport transport = NettyTransport.best();
        EventLoopGroup boss = transport.newGroup(1, "rls-http-boss");
        EventLoopGroup io = transport.newGroup(2, "rls-http-io");
        AtomicInteger threadNumber = new AtomicInteger();
        ThreadPoolExecutor requests = new ThreadPoolExecutor(settings.requestThreads(), settings.requestThreads(), 60,
                TimeUnit.SECONDS, new ArrayBlockingQueue<>(REQUEST_QUEUE), r -> {
                    Thread t = new Thread(r, "rls-http-request-" + threadNumber.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        requests.allowCoreThreadTimeOut(true);
        ChannelGroup open = new DefaultChannelGroup("rls-http", GlobalEventExecutor.INSTANCE);
        Streams streams = new Streams(io.next(), settings);
        Routes routes = new Routes(master, settings, registry, streams, requests);
        SslContext sslContext = ssl;
        try {
            Channel channel = new ServerBootstrap()
                    .group(boss, io)
                    .channel(transport.serverChannel())
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            open.add(ch);
                            ChannelPipeline p = ch.pipeline();
                            if (sslContext != null) {
                                p.addLast(sslContext.newHandler(ch.alloc()));
                            }
                            p.addLast(new HttpServerCodec(8192, 16 * 1024, 16 * 1024));
                            p.addLast(new JsonAggregator(settings.maxRequestBytes()));
                            p.addLast(new ChunkedWriteHandler());
                            p.addLast(new ApiHandler(routes, requests, settings));
                        }
                    })
                    .bind(settings.bindHost(), settings.port()).syncUninterruptibly().channel();
            return new ApiServer(boss, io, channel, requests, open, streams);
        } catch (RuntimeException e) {
            io.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            requests.shutdownNow();
            throw new SchedulerException("the HTTP API could not listen on " + settings.bindHost() + ":" + settings.port()
                    + ": " + e, false, e);
        }
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    public void close() {
        channel.close().syncUninterruptibly();
        streams.closeAll();
        open.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        requests.shutdown();
        try {
            if (!requests.awaitTermination(2, TimeUnit.SECONDS)) {
                requests.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            requests.shutdownNow();
        }
        io.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * The aggregator, answering a body over the limit with the API's JSON 413 and then closing the
     * connection once the client has sent the rest of the body, which is read and dropped: a
     * client that writes its whole request before it reads (most do) would otherwise meet a
     * closed socket while still sending and lose the answer. What is dropped is bounded, in bytes
     * ({@link #DRAIN_BYTES}) and time ({@link #DRAIN_TIME_MS}); past either the connection closes.
     */
    private static final class JsonAggregator extends HttpObjectAggregator {
        static final long DRAIN_BYTES = 16L << 20;
        static final long DRAIN_TIME_MS = 10_000;

        private final int max;
        private boolean draining;
        private long drained;

        JsonAggregator(int max) {
            super(max);
            this.max = max;
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            if (!(oversized instanceof HttpRequest)) {
                ctx.close();
                return;
            }
            Responses.errorThenClose(ctx.channel(), new ApiException(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    "PAYLOAD_TOO_LARGE", "the request body is larger than " + max + " bytes"));
            long length = HttpUtil.getContentLength(oversized, -1L);
            if (length > DRAIN_BYTES || oversized instanceof FullHttpMessage) {
                ctx.channel().close(); // too much to wait for, or nothing more to come
                return;
            }
            draining = true;
            ctx.executor().schedule(() -> {
                ctx.channel().close();
            }, DRAIN_TIME_MS, TimeUnit.MILLISECONDS);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (!draining) {
                super.channelRead(ctx, msg);
                return;
            }
            boolean last = msg instanceof LastHttpContent;
            if (msg instanceof HttpContent content) {
                drained += content.content().readableBytes();
            }
            ReferenceCountUtil.release(msg);
            if (last || drained > DRAIN_BYTES) {
                draining = false;
                ctx.channel().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        }
    }
}
