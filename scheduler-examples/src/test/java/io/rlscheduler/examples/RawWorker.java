package io.rlscheduler.examples;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A hand-made worker connection for drills of what a peer with valid credentials may try: it
 * says a valid HELLO with the shared secret under its own worker id and session, then sends
 * whatever the test makes, and keeps every frame the master sends back.
 */
final class RawWorker implements AutoCloseable {

    final List<MessageLite> received = new CopyOnWriteArrayList<>();
    private final EventLoopGroup group = NettyTransport.nio().newGroup(1, "raw-worker");
    private final Channel channel;

    private RawWorker(InetSocketAddress master, String secret, String workerId, String sessionId) {
        byte[] key = secret.getBytes(StandardCharsets.UTF_8);
        ByteString clientNonce = HandshakeProof.newNonce();
        SimpleChannelInboundHandler<MessageLite> handler = new SimpleChannelInboundHandler<>() {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
                received.add(msg);
                if (msg instanceof Challenge c) {
                    ctx.writeAndFlush(Hello.newBuilder().setProtocolMajor(FrameFormat.VERSION)
                            .setProtocolMinor(FrameFormat.MINOR_VERSION).setWorkerId(workerId).setSessionId(sessionId)
                            .setClientNonce(clientNonce)
                            .setProof(HandshakeProof.helloProof(key, c.getServerNonce(), clientNonce, workerId, sessionId))
                            .build());
                }
            }
        };
        this.channel = new Bootstrap().group(group).channel(NettyTransport.nio().clientChannel())
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> handler))
                .connect(master).syncUninterruptibly().channel();
    }

    /** Connects and waits until the master accepted the hello. */
    static RawWorker connect(InetSocketAddress master, String secret, String workerId, String sessionId) {
        RawWorker w = new RawWorker(master, secret, workerId, sessionId);
        await().atMost(Duration.ofSeconds(10)).until(() -> w.received.stream().anyMatch(m -> m instanceof HelloAccepted));
        return w;
    }

    void send(MessageLite msg) {
        channel.writeAndFlush(msg).syncUninterruptibly();
    }

    boolean isActive() {
        return channel.isActive();
    }

    /** The error replies received that name the task. */
    List<ErrorReply> errors(String taskId) {
        return received.stream().filter(m -> m instanceof ErrorReply e && e.getTaskId().equals(taskId))
                .map(m -> (ErrorReply) m).toList();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
