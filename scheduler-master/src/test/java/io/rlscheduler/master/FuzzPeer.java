package io.rlscheduler.master;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.rlscheduler.protocol.CancelTask;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.MessageType;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolException;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.RejectReason;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import static org.awaitility.Awaitility.await;

/**
 * A worker's side of the protocol made by hand from the real codec, one connection at a time: it
 * authenticates with the shared secret as a real worker does (and checks the master's proof), then
 * writes whatever bytes it is given, and files every answer of the master under its type. An
 * answer is typed when it decodes to a message a master sends a worker (an {@link ErrorReply}
 * with a known {@link ErrorCode}, a {@link LogAck}, a {@link HeartbeatAck}, an
 * {@link ExecuteTask} or a {@link CancelTask}); a close is an answer too. Anything else (bytes
 * that are not a frame, a message a master never sends, an error without a code, a second
 * challenge) is a violation.
 *
 * <p>Liveness per batch: {@link #marker(long)} sends a heartbeat and waits for its acknowledgement
 * or for the connection to close, so a master that stops answering fails the test at the batch
 * that did it. Driven from one test thread; answers arrive on the client's event loop.
 */
final class FuzzPeer implements AutoCloseable {

    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(10);
    private static final int MAX_VIOLATIONS = 50;
    /** What a handshake completes with when the connection closed before an answer. */
    private static final HelloRejected CLOSED_UNANSWERED = HelloRejected.getDefaultInstance();

    private final EventLoopGroup group;
    private final InetSocketAddress master;
    private final byte[] secret;
    private final String workerId;
    private final String sessionId;
    private final Map<String, LongAdder> answers = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final Queue<ExecuteTask> assigned = new ConcurrentLinkedQueue<>();
    private final AtomicInteger connections = new AtomicInteger();
    private volatile Connection current;

    FuzzPeer(EventLoopGroup group, InetSocketAddress master, byte[] secret, String workerId, String sessionId) {
        this.group = group;
        this.master = master;
        this.secret = secret;
        this.workerId = workerId;
        this.sessionId = sessionId;
    }

    /**
     * Opens a connection and authenticates on it. A refusal as a duplicate session (the master has
     * not yet let go of this session's previous connection) is tried again, for up to the answer
     * timeout.
     *
     * @throws AssertionError if the master refuses the hello otherwise, or does not answer it
     */
    void connect() {
        long deadline = System.nanoTime() + ANSWER_TIMEOUT.toNanos();
        while (true) {
            Connection connection = new Connection();
            current = connection;
            connection.channel = new Bootstrap().group(group).channel(NettyTransport.nio().clientChannel())
                    .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> connection))
                    .connect(master).syncUninterruptibly().channel();
            connections.incrementAndGet();
            HelloRejected rejected = awaitAnswer(connection.handshake, "the answer to a valid hello");
            if (rejected == null) {
                return;
            }
            awaitAnswer(connection.closed, "the close after a rejected hello");
            if (rejected == CLOSED_UNANSWERED) {
                throw new AssertionError("the master closed the connection without answering a valid hello of " + workerId);
            }
            if (rejected.getReason() != RejectReason.REJECT_REASON_DUPLICATE_SESSION || System.nanoTime() > deadline) {
                throw new AssertionError("a valid hello of " + workerId + " was rejected: " + rejected);
            }
        }
    }

    /** Returns whether the current connection is open (and authenticated). */
    boolean isOpen() {
        Connection c = current;
        return c != null && c.channel.isActive() && c.handshake.isDone();
    }

    /** Writes the frames back to back, in one to three writes cut at random points. */
    void send(List<byte[]> frames, Random random) {
        int total = frames.stream().mapToInt(f -> f.length).sum();
        byte[] all = new byte[total];
        int at = 0;
        for (byte[] f : frames) {
            System.arraycopy(f, 0, all, at, f.length);
            at += f.length;
        }
        int[] cuts = random.ints(random.nextInt(3), 0, total + 1).sorted().toArray();
        Channel channel = current.channel;
        int from = 0;
        for (int c = 0; c <= cuts.length; c++) {
            int to = c < cuts.length ? cuts[c] : total;
            if (to > from) {
                channel.writeAndFlush(Unpooled.wrappedBuffer(all, from, to - from));
            }
            from = to;
        }
    }

    /**
     * Sends a heartbeat with {@code sequence} and waits for its acknowledgement or a close.
     *
     * @return true if acknowledged, false if the connection closed first
     * @throws AssertionError if neither comes within the answer timeout
     */
    boolean marker(long sequence) {
        Connection c = current;
        CompletableFuture<Boolean> acked = new CompletableFuture<>();
        c.marker = sequence;
        c.markerAcked = acked;
        c.closed.thenRun(() -> acked.complete(false));
        c.channel.writeAndFlush(Unpooled.wrappedBuffer(WorkerFrameFuzzer.encode(Heartbeat.newBuilder()
                .setWorkerId(workerId).setSessionId(sessionId).setSequence(sequence).build())));
        return awaitAnswer(acked, "the acknowledgement of marker heartbeat " + sequence);
    }

    /** Shuts the output down after a frame that broke the framing, and waits for the master to close. */
    void halfCloseAndAwaitClose() {
        Connection c = current;
        c.halfClosed = true;
        ((SocketChannel) c.channel).shutdownOutput();
        awaitAnswer(c.closed, "the close after a half-close");
    }

    /** Waits for the master to send this peer an assignment. */
    ExecuteTask awaitAssignment() {
        await().atMost(ANSWER_TIMEOUT).pollInterval(Duration.ofMillis(5)).until(() -> !assigned.isEmpty());
        return assigned.poll();
    }

    /** Returns the answers so far by type (and error code, reject reason, kind of close). */
    Map<String, Long> answers() {
        Map<String, Long> copy = new TreeMap<>();
        answers.forEach((k, v) -> copy.put(k, v.sum()));
        return copy;
    }

    /** Returns the answers that were not typed, with the connection they came on; at most 50. */
    List<String> violations() {
        return List.copyOf(violations);
    }

    /** Returns how many connections were opened. */
    int connections() {
        return connections.get();
    }

    @Override
    public void close() {
        Connection c = current;
        if (c != null) {
            c.channel.close().syncUninterruptibly();
        }
    }

    private static <T> T awaitAnswer(CompletableFuture<T> future, String what) {
        try {
            return future.get(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("the master did not send " + what + " within " + ANSWER_TIMEOUT);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private void count(String answer) {
        answers.computeIfAbsent(answer, k -> new LongAdder()).increment();
    }

    private void violation(Connection c, String what) {
        if (violations.size() < MAX_VIOLATIONS) {
            violations.add("connection " + c.number + ": " + what);
        }
    }

    /** One connection's handler: its handshake, its marker, its close. */
    private final class Connection extends SimpleChannelInboundHandler<MessageLite> {
        final int number = connections.get() + 1;
        /** Completed with null once accepted, or with the rejection. */
        final CompletableFuture<HelloRejected> handshake = new CompletableFuture<>();
        final CompletableFuture<Void> closed = new CompletableFuture<>();
        volatile Channel channel;
        volatile long marker = -1;
        volatile CompletableFuture<Boolean> markerAcked;
        volatile boolean halfClosed;
        private ByteString clientNonce;
        private ByteString serverNonce;
        private int messages;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
            boolean first = messages++ == 0;
            if (msg instanceof Challenge challenge) {
                if (!first) {
                    violation(this, "a second challenge " + challenge);
                    return;
                }
                serverNonce = challenge.getServerNonce();
                clientNonce = HandshakeProof.newNonce();
                ctx.writeAndFlush(Hello.newBuilder().setProtocolMajor(FrameFormat.VERSION)
                        .setProtocolMinor(FrameFormat.MINOR_VERSION).setWorkerId(workerId).setSessionId(sessionId)
                        .setClientNonce(clientNonce)
                        .setProof(HandshakeProof.helloProof(secret, serverNonce, clientNonce, workerId, sessionId)).build());
                count("handshake: CHALLENGE");
            } else if (first) {
                violation(this, "the first message is not a challenge: " + MessageType.forMessage(msg));
            } else if (msg instanceof HelloAccepted accepted) {
                if (handshake.isDone() || !HandshakeProof.matches(HandshakeProof.acceptProof(secret, clientNonce,
                        serverNonce, accepted.getMasterId()), accepted.getProof())) {
                    violation(this, "an unasked or unproven HelloAccepted " + accepted);
                }
                count("handshake: HELLO_ACCEPTED");
                handshake.complete(null);
            } else if (msg instanceof HelloRejected rejected) {
                count("handshake: HELLO_REJECTED " + rejected.getReason());
                if (handshake.isDone()) {
                    violation(this, "a HelloRejected after the handshake: " + rejected);
                }
                handshake.complete(rejected);
            } else if (!handshake.isDone()) {
                violation(this, MessageType.forMessage(msg) + " before the handshake ended: " + msg);
            } else if (msg instanceof HeartbeatAck ack) {
                count("HEARTBEAT_ACK");
                CompletableFuture<Boolean> acked = markerAcked;
                if (acked != null && ack.getSequence() == marker) {
                    acked.complete(true);
                }
            } else if (msg instanceof ErrorReply error) {
                count("ERROR " + error.getCode());
                if (error.getCode() == ErrorCode.UNRECOGNIZED || error.getCode() == ErrorCode.ERROR_CODE_UNSPECIFIED) {
                    violation(this, "an error without a known code: " + error);
                }
            } else if (msg instanceof LogAck || msg instanceof ExecuteTask || msg instanceof CancelTask) {
                count(MessageType.forMessage(msg).name());
                if (msg instanceof ExecuteTask task) {
                    assigned.add(task);
                }
            } else {
                violation(this, "a " + MessageType.forMessage(msg) + ", which a master never sends a worker: " + msg);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof ProtocolException e) {
                violation(this, "bytes that are not a frame: " + e.getViolation() + " " + e.getMessage());
            } else if (cause instanceof IOException) {
                count("close: reset");
            } else {
                violation(this, "an unexpected failure: " + cause);
            }
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            count(halfClosed ? "close: after our half-close" : "close: by the master");
            closed.complete(null);
            handshake.complete(CLOSED_UNANSWERED);
            ctx.fireChannelInactive();
        }
    }
}
