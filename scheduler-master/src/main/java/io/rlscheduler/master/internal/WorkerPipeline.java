package io.rlscheduler.master.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import java.util.Objects;

/**
 * Sets up a worker connection's pipeline at the master: the protocol's
 * ({@link ProtocolChannelInitializer}, whose application handler is a new
 * {@link WorkerChannelHandler}), with the limits on authenticated workers put before its frame
 * decoder:
 *
 * <pre>
 *  inbound  -&gt;  [what the protocol puts first] -&gt; idleWorkers -&gt; inboundThrottle -&gt; frameDecoder -&gt; handler -&gt; ...
 * </pre>
 *
 * Both read the connection's {@link WorkerChannelHandler} to learn whether it has authenticated.
 * Thread-safe: one instance serves every connection of the server.
 */
final class WorkerPipeline extends ChannelInitializer<Channel> {

    /** Pipeline name of the {@link IdleWorkerCloser}. */
    static final String IDLE = "idleWorkers";
    /** Pipeline name of the {@link InboundThrottle}. */
    static final String THROTTLE = "inboundThrottle";

    private final ProtocolChannelInitializer protocol;
    private final WorkerLimits limits;

    WorkerPipeline(ProtocolChannelInitializer protocol, WorkerLimits limits) {
        this.protocol = Objects.requireNonNull(protocol, "protocol");
        this.limits = Objects.requireNonNull(limits, "limits");
    }

    @Override
    protected void initChannel(Channel ch) {
        ChannelPipeline pipeline = ch.pipeline();
        pipeline.addLast(protocol); // a registered channel: it sets up the protocol's handlers here and now
        WorkerChannelHandler handler = pipeline.get(WorkerChannelHandler.class);
        pipeline.addBefore(ProtocolChannelInitializer.DECODER, IDLE, new IdleWorkerCloser(limits, handler::authenticatedWorker));
        pipeline.addBefore(ProtocolChannelInitializer.DECODER, THROTTLE,
                new InboundThrottle(limits, () -> handler.authenticatedWorker() != null));
    }
}
