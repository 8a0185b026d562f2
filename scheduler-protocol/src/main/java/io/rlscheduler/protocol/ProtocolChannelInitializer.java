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
 *  inbound  -&gt;  frameDecoder (new per channel) -&gt; handler (new per channel) -&gt; protocolErrors (new)
 *  outbound &lt;-  frameEncoder (shared)
 * </pre>
 *
 * The application handler receives immutable protobuf messages and writes them; it never sees a
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

    private final ProtocolOptions options;
    private final FrameEncoder encoder;
    private final Supplier<? extends ChannelHandler> handlerFactory;

    /**
     * Creates an initializer.
     *
     * @param options        codec settings; must not be null
     * @param handlerFactory returns the application handler for each new channel; must not be null
     */
    public ProtocolChannelInitializer(ProtocolOptions options, Supplier<? extends ChannelHandler> handlerFactory) {
        this.options = Objects.requireNonNull(options, "options");
        this.handlerFactory = Objects.requireNonNull(handlerFactory, "handlerFactory");
        this.encoder = new FrameEncoder(options.getMaxFrameLength());
    }

    @Override
    protected void initChannel(Channel ch) {
        ChannelHandler handler = Objects.requireNonNull(handlerFactory.get(), "handlerFactory returned null");
        ChannelPipeline pipeline = ch.pipeline();
        pipeline.addLast(DECODER, new FrameDecoder(options.getMaxFrameLength()));
        pipeline.addLast(ENCODER, encoder);
        pipeline.addLast(HANDLER, handler);
        pipeline.addLast(ERRORS, new ProtocolErrorHandler());
    }
}
