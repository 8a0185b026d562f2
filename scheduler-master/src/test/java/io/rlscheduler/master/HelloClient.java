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
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.WorkerKey;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;

/**
 * A hand-made worker connection for tests over real sockets: answers the master's challenge
 * with the hello a {@link HelloMaker} builds (the shared secret's proof, a worker key's
 * signature, or anything a test wants to try) and records everything the master sends. One per
 * connection; thread-safe for reading what it received.
 */
public final class HelloClient extends SimpleChannelInboundHandler<MessageLite> implements AutoCloseable {

    /** Builds the hello answering a challenge, with the client's nonce. */
    public interface HelloMaker {
        Hello make(Challenge challenge, ByteString clientNonce);
    }

    private final HelloMaker maker;
    private final ByteString clientNonce = HandshakeProof.newNonce();
    private final List<MessageLite> received = new CopyOnWriteArrayList<>();
    private volatile Channel channel;

    private HelloClient(HelloMaker maker) {
        this.maker = maker;
    }

    /** Connects to a master on {@code group}; the hello goes out as soon as the challenge arrives. */
    public static HelloClient connect(EventLoopGroup group, InetSocketAddress master, HelloMaker maker) {
        HelloClient client = new HelloClient(maker);
        client.channel = new Bootstrap().group(group).channel(NettyTransport.nio().clientChannel())
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> client))
                .connect(master).syncUninterruptibly().channel();
        return client;
    }

    /** A hello proving the shared secret. */
    public static HelloMaker secret(byte[] secret, String workerId, String sessionId) {
        return (challenge, nonce) -> base(workerId, sessionId, nonce)
                .setProof(HandshakeProof.helloProof(secret, challenge.getServerNonce(), nonce, workerId, sessionId)).build();
    }

    /** A hello signed with a worker key, saying it is {@code workerId} (whatever worker the key is of). */
    public static HelloMaker key(WorkerKey key, String workerId, String sessionId) {
        return (challenge, nonce) -> base(workerId, sessionId, nonce).setKeyId(key.getKeyId())
                .setSignature(io.rlscheduler.protocol.WorkerKeyProof.sign(privateKeyOf(key), challenge.getServerNonce(), nonce,
                        workerId, sessionId, key.getKeyId()))
                .build();
    }

    /** The key's private part, from its material (tests only: a worker never needs it alone). */
    private static byte[] privateKeyOf(WorkerKey key) {
        String material = key.toMaterial();
        return java.util.Base64.getUrlDecoder().decode(material.substring(material.lastIndexOf(':') + 1));
    }

    /** Registers a worker id and session in Redis, as a worker does before its hello. */
    public static void register(io.lettuce.core.RedisClient client, io.rlscheduler.core.CoreOptions options, String workerId,
                                String sessionId) {
        try (io.rlscheduler.core.internal.LeaseCore core = io.rlscheduler.core.internal.LeaseCore.create(client, options)) {
            core.register(new io.rlscheduler.core.internal.WorkerRegistration(workerId, sessionId, java.util.Map.of(), 1,
                    1L << 30, List.of())).join();
        }
    }

    private static Hello.Builder base(String workerId, String sessionId, ByteString nonce) {
        return Hello.newBuilder().setProtocolMajor(FrameFormat.VERSION).setProtocolMinor(FrameFormat.MINOR_VERSION)
                .setWorkerId(workerId).setSessionId(sessionId).setClientNonce(nonce);
    }

    /** Returns the connection. */
    public Channel channel() {
        return channel;
    }

    /** Returns the nonce this client's hello carries. */
    public ByteString clientNonce() {
        return clientNonce;
    }

    /** Returns what the master sent, in order. */
    public List<MessageLite> received() {
        return received;
    }

    /** Returns the master's challenge, once it came. */
    public Optional<Challenge> challenge() {
        return first(Challenge.class);
    }

    /** Waits up to {@code within} for the master's acceptance; fails if it rejected instead. */
    public HelloAccepted awaitAccepted(Duration within) {
        await().atMost(within).until(() -> first(HelloAccepted.class).isPresent() || first(HelloRejected.class).isPresent());
        return first(HelloAccepted.class).orElseThrow(() -> new AssertionError("rejected: " + first(HelloRejected.class)));
    }

    /** Waits up to {@code within} for the master's rejection and the close that follows it. */
    public HelloRejected awaitRejected(Duration within) {
        await().atMost(within).until(() -> first(HelloRejected.class).isPresent() && !channel.isActive());
        return first(HelloRejected.class).orElseThrow();
    }

    private <T> Optional<T> first(Class<T> type) {
        return received.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
        received.add(msg);
        if (msg instanceof Challenge challenge) {
            ctx.writeAndFlush(maker.make(challenge, clientNonce));
        }
    }

    /** Closes the connection and waits for it. */
    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }
}
