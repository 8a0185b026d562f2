package io.rlscheduler.worker.internal;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ClientTlsOptions;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.protocol.TlsContext;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's connection to a master. Connects to the configured masters in turn; answers the
 * master's challenge with a proof of its credential ({@link HelloCredential}: its own worker key,
 * or the shared secret) and checks the master's proof in return; after any failure, rejection or
 * disconnect tries again after an exponential backoff with jitter (at once when a standby names
 * the leader; after the longest backoff when this worker id was revoked). With TLS settings
 * ({@link #useTls}) every connection is TLS first, the handshake inside it. Every
 * connection gets a fresh pipeline and handler: the handler holds one connection's handshake
 * state, which must not carry over to the next. Thread-safe.
 */
public final class MasterLink {

    private static final Logger log = LoggerFactory.getLogger(MasterLink.class);
    /**
     * How long a connection may bring nothing before it counts as dead, in this worker's heartbeat
     * intervals (the master answers every heartbeat; a heartbeat may wait up to two intervals for
     * Redis first). A master whose host died sends no reset: without this the worker would stay on the
     * dead connection until TCP gives up, about a quarter of an hour, its lines and heartbeats going
     * nowhere and the new leader never hearing from it.
     */
    static final int SILENT_HEARTBEATS = 5;
    /** The least silence that counts, whatever the heartbeat interval: 1 s. */
    static final long MIN_SILENCE_MILLIS = 1_000;
    /** Before the handshake ends (the interval is not known yet): 30 s. */
    static final long HANDSHAKE_SILENCE_MILLIS = 30_000;
    /** The failure count set by a revocation: far enough along that every retry waits the longest backoff. */
    private static final int REVOKED_FAILURES = 64;

    /** Receives what happens on the link; called on the link's event loop, must not block. */
    public interface Listener {
        /** The handshake succeeded; {@code channel} is ready for every message. */
        void onReady(Channel channel, String masterId);

        /** A message arrived on a ready channel. */
        void onMessage(Channel channel, MessageLite message);

        /** The ready channel closed. */
        void onDisconnected(Channel channel);

        /** The ready channel can take writes again after its outbound buffer had filled up. */
        void onWritable(Channel channel);
    }

    private final List<InetSocketAddress> masters;
    private final NettyTransport transport;
    private final EventLoopGroup group;
    private final ProtocolOptions protocolOptions;
    private final HelloCredential credential;
    private final String workerId;
    private final String sessionId;
    private final Map<String, String> labels;
    private final long minBackoffMillis;
    private final long maxBackoffMillis;
    private final long silenceLimitMillis;
    /** Set once by {@link #start}, before the first connection. */
    private volatile Listener listener;
    private final AtomicInteger failures = new AtomicInteger();
    private final AtomicInteger next = new AtomicInteger();
    private volatile Channel ready;
    /** The liveness lease the connected master announced (ms), which it renews idle workers' with; 0 before one did. */
    private volatile long masterLivenessLeaseMillis;
    private volatile boolean stopped;
    private volatile String lastRejection = "";
    /** The leader a standby named; tried before the configured list until a connection to it fails. */
    private volatile InetSocketAddress leaderHint;
    /** Null: plaintext. Set by {@link #useTls} before {@link #start}. */
    private volatile TlsContext tls;

    /**
     * @param heartbeatInterval how often this worker sends heartbeats, each answered by the master:
     *                          a connection silent for {@value #SILENT_HEARTBEATS} of them (at least
     *                          {@value #MIN_SILENCE_MILLIS} ms) is closed and made again
     */
    public MasterLink(List<InetSocketAddress> masters, NettyTransport transport, EventLoopGroup group,
                      ProtocolOptions protocolOptions, HelloCredential credential, String workerId, String sessionId,
                      Map<String, String> labels, Duration minBackoff, Duration maxBackoff, Duration heartbeatInterval) {
        this.silenceLimitMillis = Math.max(MIN_SILENCE_MILLIS, SILENT_HEARTBEATS * heartbeatInterval.toMillis());
        this.masters = List.copyOf(masters);
        this.transport = transport;
        this.group = group;
        this.protocolOptions = protocolOptions;
        this.credential = credential;
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.labels = Map.copyOf(labels);
        this.minBackoffMillis = minBackoff.toMillis();
        this.maxBackoffMillis = maxBackoff.toMillis();
    }

    /**
     * Makes every connection TLS with these settings: the TLS context is built here, once, and
     * bound to each master dialled. Call before {@link #start}; the TLS handshake must end within
     * {@value #HANDSHAKE_SILENCE_MILLIS} ms.
     *
     * @throws io.rlscheduler.protocol.TlsConfigException if the JDK refuses the settings' material
     */
    public void useTls(ClientTlsOptions options) {
        this.tls = TlsContext.forClient(options, Duration.ofMillis(HANDSHAKE_SILENCE_MILLIS));
    }

    /** Starts connecting; {@code listener} hears of every connection and message from here on. */
    public void start(Listener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
        connect();
    }

    /** Returns the authenticated channel, or null while not connected. */
    public Channel readyChannel() {
        return ready;
    }

    /**
     * Returns the liveness lease the master last connected to announced in its {@code HelloAccepted}
     * (ms): the lease it renews this worker's with when it renews it; 0 before any accepted.
     */
    public long masterLivenessLeaseMillis() {
        return masterLivenessLeaseMillis;
    }

    /** Writes and flushes {@code message} on the authenticated channel; drops it while not connected. */
    public void send(MessageLite message) {
        Channel channel = ready;
        if (channel != null) {
            channel.writeAndFlush(message);
        }
    }

    /** Returns the reason the last master gave for rejecting this worker, or the empty string. */
    public String getLastRejection() {
        return lastRejection;
    }

    /** Stops reconnecting and closes the current connection. */
    public void stop() {
        stopped = true;
        Channel channel = ready;
        if (channel != null) {
            channel.close();
        }
    }

    private void connect() {
        if (stopped) {
            return;
        }
        InetSocketAddress hint = leaderHint;
        InetSocketAddress address = hint != null ? hint : masters.get(Math.floorMod(next.getAndIncrement(), masters.size()));
        ChannelFuture future = new Bootstrap().group(group).channel(transport.clientChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5_000)
                .handler(new ProtocolChannelInitializer(protocolOptions, tls == null ? null : tls.forPeer(address),
                        () -> new Handler(address)))
                .connect(address);
        future.addListener(f -> {
            if (!f.isSuccess()) {
                log.debug("cannot connect to master {}: {}", address, f.cause().toString());
                if (address.equals(leaderHint)) {
                    leaderHint = null;
                }
                retryLater();
            } else {
                future.channel().closeFuture().addListener(c -> {
                    if (ready == future.channel()) {
                        ready = null;
                        listener.onDisconnected(future.channel());
                        log.info("connection to master {} closed", address);
                    }
                    retryLater();
                });
            }
        });
    }

    private void retryLater() {
        if (stopped) {
            return;
        }
        int n = failures.incrementAndGet();
        long backoff = Math.min(maxBackoffMillis, minBackoffMillis << Math.min(n - 1, 20));
        long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
        group.schedule(this::connect, jittered, TimeUnit.MILLISECONDS);
    }

    /** What an operator should know of a rejection, after its message. */
    private String advice(RejectReason reason) {
        return switch (reason) {
            case REJECT_REASON_DUPLICATE_SESSION -> "; another process says it is worker " + workerId
                    + " (two machines configured with one worker id?): this one keeps trying, with backoff, and never"
                    + " pushes the registered one off";
            case REJECT_REASON_UNKNOWN_WORKER -> "; this worker registers again at its next heartbeat";
            case REJECT_REASON_KEY_REVOKED -> "; this worker id was revoked: it cannot connect until an operator issues"
                    + " it a new key";
            case REJECT_REASON_BAD_KEY -> "; the hello was made with " + credential.describe()
                    + ": install the worker's current key (a key file is read again at every connection)";
            default -> "";
        };
    }

    private static InetSocketAddress parse(String hostPort) {
        int colon = hostPort == null ? -1 : hostPort.lastIndexOf(':');
        if (colon <= 0) {
            return null;
        }
        try {
            return InetSocketAddress.createUnresolved(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** One connection's handler: handshake, then relays messages. Never shared between channels. */
    private final class Handler extends SimpleChannelInboundHandler<MessageLite> {
        private final InetSocketAddress address;
        private final ByteString clientNonce = HandshakeProof.newNonce();
        private ByteString serverNonce;
        /** The proof sent in this connection's hello, which the master's acceptance must match. */
        private HelloCredential.Proven proven;
        private boolean accepted;
        /** On the channel's event loop only: when something was last read, and the silence that counts. */
        private long lastReadNanos;
        private long silenceLimitNanos = TimeUnit.MILLISECONDS.toNanos(HANDSHAKE_SILENCE_MILLIS);
        /** Whether the last check found the connection silent too long: a second one in a row closes it. */
        private boolean silentBefore;
        private io.netty.util.concurrent.ScheduledFuture<?> silenceCheck;

        Handler(InetSocketAddress address) {
            this.address = address;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            lastReadNanos = System.nanoTime();
            scheduleSilenceCheck(ctx);
            super.channelActive(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (silenceCheck != null) {
                silenceCheck.cancel(false);
            }
            super.channelInactive(ctx);
        }

        /**
         * Checks every half limit whether the connection brought nothing for the limit; closes it
         * (the link reconnects) at the second such check in a row, so that a JVM frozen or
         * starved past the limit does not drop a live connection for the reads waiting for it.
         */
        private void scheduleSilenceCheck(ChannelHandlerContext ctx) {
            if (silenceCheck != null) {
                silenceCheck.cancel(false);
            }
            long period = Math.max(1, silenceLimitNanos / 2);
            silenceCheck = ctx.executor().scheduleWithFixedDelay(() -> {
                long silent = System.nanoTime() - lastReadNanos;
                if (silent < silenceLimitNanos) {
                    silentBefore = false;
                } else if (!silentBefore) {
                    silentBefore = true;
                } else {
                    log.warn("master {} sent nothing for {} ms (it answers every heartbeat); closing the connection"
                            + " to reconnect", address, TimeUnit.NANOSECONDS.toMillis(silent));
                    ctx.close();
                }
            }, period, period, TimeUnit.NANOSECONDS);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
            if (accepted && ctx.channel().isWritable()) {
                listener.onWritable(ctx.channel());
            }
            super.channelWritabilityChanged(ctx);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
            lastReadNanos = System.nanoTime();
            silentBefore = false;
            if (accepted) {
                listener.onMessage(ctx.channel(), msg);
                return;
            }
            if (msg instanceof Challenge challenge) {
                if (challenge.getProtocolMajor() != FrameFormat.VERSION) {
                    log.error("master {} speaks protocol {}, this worker {}", address, challenge.getProtocolMajor(),
                            FrameFormat.VERSION);
                    ctx.close();
                    return;
                }
                serverNonce = challenge.getServerNonce();
                Hello.Builder hello = Hello.newBuilder()
                        .setProtocolMajor(FrameFormat.VERSION).setProtocolMinor(FrameFormat.MINOR_VERSION)
                        .setWorkerId(workerId).setSessionId(sessionId).putAllLabels(labels)
                        .addCapabilities("python3").setClientNonce(clientNonce);
                try {
                    proven = credential.prove(hello, serverNonce, clientNonce);
                } catch (IllegalStateException e) {
                    log.error("worker {} cannot say hello: {}", workerId, e.getMessage());
                    ctx.close();
                    return;
                }
                ctx.writeAndFlush(hello.build());
            } else if (msg instanceof HelloAccepted accept && proven != null) {
                if (!proven.provesMaster(accept)) {
                    log.error("master {} did not prove it knows {}; disconnecting", address, credential.describe());
                    ctx.close();
                    return;
                }
                accepted = true;
                silenceLimitNanos = TimeUnit.MILLISECONDS.toNanos(silenceLimitMillis);
                scheduleSilenceCheck(ctx);
                failures.set(0);
                lastRejection = "";
                masterLivenessLeaseMillis = accept.getLivenessLeaseMs();
                ready = ctx.channel();
                log.info("worker {} connected to master {} at {}", workerId, accept.getMasterId(), address);
                listener.onReady(ctx.channel(), accept.getMasterId());
            } else if (msg instanceof HelloRejected rejected
                    && rejected.getReason() == RejectReason.REJECT_REASON_NOT_LEADER) {
                InetSocketAddress leader = parse(rejected.getLeaderAddress());
                log.info("master {} is a standby; the leader is at {}", address, leader == null ? "(unknown)" : leader);
                leaderHint = leader;
                failures.set(0);
                ctx.close();
            } else if (msg instanceof HelloRejected rejected) {
                lastRejection = rejected.getReason() + ": " + rejected.getMessage();
                log.error("master {} rejected worker {}: {}{}", address, workerId, lastRejection, advice(rejected.getReason()));
                if (rejected.getReason() == RejectReason.REJECT_REASON_KEY_REVOKED) {
                    failures.set(REVOKED_FAILURES); // nothing changes soon: retry at the longest backoff
                }
                ctx.close();
            } else if (msg instanceof ErrorReply error) {
                log.error("master {} answered the handshake with {}: {}", address, error.getCode(), error.getMessage());
                ctx.close();
            } else {
                log.warn("master {} sent {} before the handshake ended; disconnecting", address,
                        msg.getClass().getSimpleName());
                ctx.close();
            }
        }
    }
}
