package io.rlscheduler.protocol;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Sets up the protocol pipeline of a new channel:
 *
 * <pre>
 *  inbound  -&gt;  [tls -&gt; tlsErrors] -&gt; frameDecoder (new per channel) -&gt; handler (new per channel)
 *                                        -&gt; protocolErrors (new)
 *  outbound &lt;-  [tls] &lt;- frameEncoder (shared)
 * </pre>
 *
 * <p>With a {@link TlsContext}, a new {@code SslHandler} ({@code tls}) comes first and
 * {@code tlsErrors} after it, which logs a TLS failure (a plaintext peer, a refused handshake) in
 * one line and closes the connection. Everything behind them sees plaintext frames, so the
 * handshake proof runs inside TLS.
 *
 * <p>The application handler receives immutable protobuf messages and writes them; it never sees a
 * {@code ByteBuf}. Every stateful handler is created afresh for each channel, so the same
 * initializer serves a server's many connections and a client's every reconnect. The supplier must
 * return a new instance on each call unless the handler is {@code @Sharable}.
 *
 * <p>Thread-safe: one instance may be given to a server or client bootstrap.
 */
public final class ProtocolChannelInitializer extends ChannelInitializer<Channel> {

    /** Pipeline name of the {@link FrameDecoder}. */
    public static final String DECODER = "frameDecoder";
    /** Pipeline name of the {@link FrameEncoder}. */
    public static final String ENCODER = "frameEncoder";
    /** Pipeline name of the application handler. */
    public static final String HANDLER = "handler";
    /** Pipeline name of the {@link ProtocolErrorHandler}. */
    public static final String ERRORS = "protocolErrors";
    /** Pipeline name of the {@code SslHandler}, first in the pipeline when TLS is on. */
    public static final String TLS = "tls";
    /** Pipeline name of the handler that logs TLS failures, right after {@link #TLS}. */
    public static final String TLS_ERRORS = "tlsErrors";

    private final ProtocolOptions options;
    private final FrameEncoder encoder;
    private final Supplier<? extends ChannelHandler> handlerFactory;
    /** Null: plaintext. */
    private final TlsContext tls;

    /**
     * Creates an initializer of plaintext pipelines.
     *
     * @param options        codec settings; must not be null
     * @param handlerFactory returns the application handler for each new channel; must not be null
     */
    public ProtocolChannelInitializer(ProtocolOptions options, Supplier<? extends ChannelHandler> handlerFactory) {
        this(options, null, handlerFactory);
    }

    /**
     * Creates an initializer.
     *
     * @param options        codec settings; must not be null
     * @param tls            TLS for every channel (a client's bound to its server with
     *                       {@link TlsContext#forPeer}), or null for plaintext
     * @param handlerFactory returns the application handler for each new channel; must not be null
     */
    public ProtocolChannelInitializer(ProtocolOptions options, TlsContext tls, Supplier<? extends ChannelHandler> handlerFactory) {
        this.options = Objects.requireNonNull(options, "options");
        this.handlerFactory = Objects.requireNonNull(handlerFactory, "handlerFactory");
        this.encoder = new FrameEncoder(options.getMaxFrameLength());
        this.tls = tls;
    }

    @Override
    protected void initChannel(Channel ch) {
        ChannelHandler handler = Objects.requireNonNull(handlerFactory.get(), "handlerFactory returned null");
        ChannelPipeline pipeline = ch.pipeline();
        if (tls != null) {
            pipeline.addLast(TLS, tls.newHandler(ch.alloc()));
            pipeline.addLast(TLS_ERRORS, new TlsErrorHandler(tls.isServer(), tls.getHandshakeTimeoutMillis()));
        }
        pipeline.addLast(DECODER, new FrameDecoder(options.getMaxFrameLength()));
        pipeline.addLast(ENCODER, encoder);
        pipeline.addLast(HANDLER, handler);
        pipeline.addLast(ERRORS, new ProtocolErrorHandler());
    }
}
