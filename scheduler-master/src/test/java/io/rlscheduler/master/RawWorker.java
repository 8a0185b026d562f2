package io.rlscheduler.master;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

import static org.awaitility.Awaitility.await;

/**
 * A peer on a real socket that speaks the protocol by hand: it answers the master's challenge
 * with a valid hello for its worker id (or stays silent), then sends what a test tells it and
 * keeps everything it receives. For tests of what an authenticated peer can and cannot do.
 */
final class RawWorker extends SimpleChannelInboundHandler<MessageLite> {

    final List<MessageLite> received = new CopyOnWriteArrayList<>();
    private final byte[] secret;
    private final String workerId;
    private final boolean sayHello;
    private volatile Channel channel;

    private RawWorker(byte[] secret, String workerId, boolean sayHello) {
        this.secret = secret.clone();
        this.workerId = workerId;
        this.sayHello = sayHello;
    }

    /** Connects and authenticates as {@code workerId}; returns once the master accepted it. */
    static RawWorker authenticated(EventLoopGroup group, InetSocketAddress master, byte[] secret, String workerId) {
        RawWorker peer = connect(group, master, secret, workerId, true);
        await().atMost(Duration.ofSeconds(10)).until(() -> peer.has(m -> m instanceof HelloAccepted));
        return peer;
    }

    /** Connects and never says hello. */
    static RawWorker silent(EventLoopGroup group, InetSocketAddress master) {
        return connect(group, master, new byte[0], "", false);
    }

    private static RawWorker connect(EventLoopGroup group, InetSocketAddress master, byte[] secret, String workerId,
                                     boolean sayHello) {
        RawWorker peer = new RawWorker(secret, workerId, sayHello);
        peer.channel = new Bootstrap().group(group).channel(NettyTransport.nio().clientChannel())
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> peer))
                .connect(master).syncUninterruptibly().channel();
        return peer;
    }

    Channel channel() {
        return channel;
    }

    /** Writes and flushes a message. */
    void send(MessageLite message) {
        channel.writeAndFlush(message);
    }

    /** Returns whether a message it received matches. */
    boolean has(Predicate<MessageLite> match) {
        return received.stream().anyMatch(match);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
        received.add(msg);
        if (msg instanceof Challenge challenge && sayHello) {
            ByteString nonce = HandshakeProof.newNonce();
            ctx.writeAndFlush(Hello.newBuilder().setProtocolMajor(FrameFormat.VERSION)
                    .setProtocolMinor(FrameFormat.MINOR_VERSION).setWorkerId(workerId).setSessionId(workerId + "-session")
                    .setClientNonce(nonce)
                    .setProof(HandshakeProof.helloProof(secret, challenge.getServerNonce(), nonce, workerId,
                            workerId + "-session"))
                    .build());
        }
    }
}
