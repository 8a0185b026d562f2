package io.rlscheduler.bench.harness;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.internal.HeartbeatStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.ResourceUsage;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Many simulated workers in this JVM, each as a real worker looks to the master and to Redis, at a
 * fraction of a real worker's threads and memory: for {@link Heartbeats}, thousands of workers
 * against one master.
 *
 * <p>Each registers in Redis ({@link LeaseCore#register}: 64 CPU slots, 512 GiB, GPUs 0-3, no
 * labels), connects to the master over TCP through the real handshake ({@link HandshakeProof},
 * checking the master's proof, heartbeat interval and liveness lease, as {@code MasterLink} does),
 * and every interval sends a {@code Heartbeat} frame of an idle 4-GPU machine (about 250 bytes),
 * which the master answers with a {@code HeartbeatAck}; as a real idle worker does
 * ({@code LeaseKeeper}), it renews its liveness in Redis itself ({@link LeaseCore#heartbeat}, no
 * tasks) unless the acknowledgements say the master renews it for it, recently enough
 * ({@code LeaseKeeper.leftToMaster}). Lighter than a real worker: all share one event-loop group of
 * {@code threads} threads and {@code redisConnections} pipelined Redis connections, and a worker
 * sends its frame without waiting for its renewal's answer. A worker's heartbeats run on its
 * channel's event loop, due at {@code anchor + (index / workers + k) * interval}: spread evenly
 * across the interval.
 *
 * <p>Measured, for what is sent while the window is open ({@link #openWindow()},
 * {@link #closeWindow()}): each heartbeat's handling time (frame written to acknowledgement read,
 * on the same event-loop thread, so including that thread's wait), each renewal's round trip, how
 * late each heartbeat left, and counts of everything sent, answered, lost or unexpected. A lease
 * lapse is detected exactly, by the Redis clock: each renewal (the worker's own, or the master's
 * as its acknowledgement reports it) answers the new liveness deadline,
 * so one made at or after the previous deadline shows the worker was DOWN in between, however
 * briefly.
 */
final class SimulatedWorkers implements AutoCloseable {

    /** How to simulate. */
    record Settings(int workers, int threads, int redisConnections, int concurrency, String idPrefix) {
    }

    /** Counts so far. "In window" counts only what happened while the measurement window was open. */
    record Counts(int connected, long sent, long acked, long sentInWindow, long ackedInWindow, long renewed,
                  long renewedInWindow, long renewalFailures, long renewalsInFlight, long unexpected, long disconnects,
                  long overdue, int lapsedWorkers, long longestLapseMillis, int lapsedInWindow,
                  long longestLapseInWindowMillis, long problems, long masterRenewed, long masterRenewedInWindow) {

        /** Returns the heartbeats sent and not (yet) acknowledged. */
        long unanswered() {
            return sent - acked;
        }
    }

    /** Heartbeats a worker remembers while awaiting their acknowledgement; a power of two. */
    private static final int RING = 8;
    private static final int CPU_SLOTS = 64;
    private static final long MEMORY_BYTES = 512L << 30;
    private static final List<Integer> GPU_IDS = List.of(0, 1, 2, 3);
    private static final int MAX_PROBLEMS_KEPT = 20;

    private final Settings settings;
    private final InetSocketAddress master;
    private final byte[] secret;
    private final long intervalNanos;
    private final long intervalMillis;
    private final long livenessMillis;
    private final CoreOptions coreOptions;
    private final NettyTransport transport = NettyTransport.best();
    private final ProtocolOptions protocolOptions = ProtocolOptions.defaults();
    private final EventLoopGroup group;
    private final RedisClient redisClient;
    private final List<LeaseCore> cores = new ArrayList<>();
    private final SimulatedWorker[] workers;
    private final ResourceUsage resources;
    private final Semaphore handshakes;
    private final CountDownLatch ready;
    private final AtomicReference<String> startFailure = new AtomicReference<>();

    private volatile boolean ticking = true;
    /** Ticks running now: each counts itself before it reads {@link #ticking}. */
    private final java.util.concurrent.atomic.AtomicInteger ticksRunning = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closing;
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;

    private final LongAdder sent = new LongAdder();
    private final LongAdder acked = new LongAdder();
    private final LongAdder sentInWindow = new LongAdder();
    private final LongAdder ackedInWindow = new LongAdder();
    private final LongAdder renewed = new LongAdder();
    private final LongAdder renewedInWindow = new LongAdder();
    private final LongAdder renewalFailures = new LongAdder();
    /** Renewals the master made for the workers (acknowledgements with a deadline), all and in the window. */
    private final LongAdder masterRenewed = new LongAdder();
    private final LongAdder masterRenewedInWindow = new LongAdder();
    private final AtomicLong renewalsInFlight = new AtomicLong();
    private final LongAdder unexpected = new LongAdder();
    private final LongAdder disconnects = new LongAdder();
    private final LongAdder overdue = new LongAdder();
    private final Set<String> lapsed = ConcurrentHashMap.newKeySet();
    private final AtomicLong longestLapseMillis = new AtomicLong();
    private final Set<String> lapsedInWindow = ConcurrentHashMap.newKeySet();
    private final AtomicLong longestLapseInWindowMillis = new AtomicLong();
    private final AtomicLong problemCount = new AtomicLong();
    private final List<String> problems = new ArrayList<>(); // the first MAX_PROBLEMS_KEPT; guarded by itself
    private final AtomicInteger connected = new AtomicInteger();

    private final SampleRecorder handling;
    private final SampleRecorder renewal;
    private final SampleRecorder lateness;

    /**
     * Creates the workers (nothing is registered or connected yet: see {@link #connectAll}).
     *
     * @param settings       how many, on how many threads and Redis connections
     * @param redis          the Redis server
     * @param core           namespace and lease settings, the master's
     * @param master         the master's RPC address
     * @param secret         the shared secret
     * @param windowHeartbeats the most heartbeats the measurement window may hold (sizes the sample buffers)
     */
    SimulatedWorkers(Settings settings, RedisURI redis, CoreOptions core, InetSocketAddress master, byte[] secret,
                     long windowHeartbeats) {
        this.settings = settings;
        this.master = master;
        this.secret = secret.clone();
        this.intervalMillis = core.getHeartbeatInterval().toMillis();
        this.intervalNanos = core.getHeartbeatInterval().toNanos();
        this.livenessMillis = core.getLivenessLease().toMillis();
        this.coreOptions = core;
        int capacity = (int) Math.min(Integer.MAX_VALUE - 8, windowHeartbeats + windowHeartbeats / 4 + 1024);
        this.handling = new SampleRecorder(capacity);
        this.renewal = new SampleRecorder(capacity);
        this.lateness = new SampleRecorder(capacity);
        this.handshakes = new Semaphore(settings.concurrency());
        this.ready = new CountDownLatch(settings.workers());
        this.resources = idleMachine();
        this.group = transport.newGroup(settings.threads(), "bench-sim-workers");
        this.redisClient = RedisClient.create(redis);
        try {
            for (int i = 0; i < settings.redisConnections(); i++) {
                cores.add(LeaseCore.create(redisClient, core));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.workers = new SimulatedWorker[settings.workers()];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new SimulatedWorker(i, (EventLoop) group.next(), cores.get(i % cores.size()));
        }
    }

    /** What every simulated worker reports: an idle machine with 64 CPUs and 4 GPUs. */
    private static ResourceUsage idleMachine() {
        ResourceUsage.Builder r = ResourceUsage.newBuilder().setCpuCount(64).setCpuSlots(CPU_SLOTS).setCpuLoad(0.25)
                .setMemoryTotalBytes(MEMORY_BYTES).setMemoryUsedBytes(9L << 30);
        for (int g : GPU_IDS) {
            r.addGpus(GpuStatus.newBuilder().setIndex(g)
                    .setUuid(String.format(Locale.ROOT, "GPU-%08x-4b1e-9c3d-7a52-%012x", 0x5eed0000 + g, 0xabcdef12L * (g + 1)))
                    .setName("NVIDIA A100-SXM4-80GB").setMemoryTotalBytes(80L << 30).setMemoryUsedBytes(0)
                    .setUtilizationPercent(0));
        }
        return r.build();
    }

    /** Returns the id of worker {@code index}. */
    String workerId(int index) {
        return String.format(Locale.ROOT, "%s%05d", settings.idPrefix(), index);
    }

    /**
     * Registers, connects and starts every worker, at most {@code concurrency} of them between
     * registration and accepted handshake at a time, and returns once all are connected. The first
     * worker goes alone, up to its first renewal, so that the register and heartbeat scripts are
     * loaded into Redis's script cache once (the lease core sends a script's whole source when
     * Redis does not know it yet, and every one of thousands of concurrent first callers would).
     *
     * @throws IllegalStateException if a worker cannot register or connect, or not all are connected within {@code timeout}
     */
    void connectAll(Duration timeout) throws InterruptedException {
        long anchor = System.nanoTime();
        long deadline = anchor + timeout.toNanos();
        long nextReport = anchor + TimeUnit.SECONDS.toNanos(5);
        for (int i = 0; i < workers.length; i++) {
            while (!handshakes.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                checkStart(deadline, timeout);
            }
            checkStart(deadline, timeout);
            if (System.nanoTime() - nextReport > 0) {
                System.out.printf(Locale.ROOT, "# connecting: %,d of %,d workers connected after %.0f s%n", connected.get(),
                        workers.length, (System.nanoTime() - anchor) / 1e9);
                nextReport += TimeUnit.SECONDS.toNanos(5);
            }
            workers[i].start(anchor);
            if (i == 0) {
                while (ready.getCount() == workers.length || renewed.sum() == 0) {
                    checkStart(deadline, timeout);
                    Thread.sleep(5); // start-up polling, before anything is measured
                }
            }
        }
        while (!ready.await(100, TimeUnit.MILLISECONDS)) {
            checkStart(deadline, timeout);
        }
    }

    private void checkStart(long deadline, Duration timeout) {
        if (startFailure.get() != null) {
            throw new IllegalStateException("a simulated worker could not start: " + startFailure.get()
                    + " (" + connected.get() + " of " + workers.length + " connected)");
        }
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("only " + connected.get() + " of " + workers.length
                    + " simulated workers connected within " + timeout + "; problems: " + problems());
        }
    }

    /** Opens the measurement window now. */
    void openWindow() {
        windowStart = System.nanoTime();
    }

    /** Closes the measurement window now. */
    void closeWindow() {
        windowEnd = System.nanoTime();
    }

    private boolean inWindow(long nanos) {
        return nanos - windowStart >= 0 && nanos - windowEnd < 0;
    }

    /**
     * Stops the heartbeats (and renewals) and waits at most {@code timeout} for those sent to be
     * answered. The connections stay open until {@link #close()}.
     */
    void stopHeartbeats(Duration timeout) throws InterruptedException {
        ticking = false;
        long deadline = System.nanoTime() + timeout.toNanos();
        // A tick counts itself before it reads "ticking": once none runs, none sends any more; then
        // wait for the answers.
        while ((ticksRunning.get() > 0 || counts().unanswered() > 0 || renewalsInFlight.get() > 0)
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
    }

    /** Returns the counts so far. */
    Counts counts() {
        return new Counts(connected.get(), sent.sum(), acked.sum(), sentInWindow.sum(), ackedInWindow.sum(), renewed.sum(),
                renewedInWindow.sum(), renewalFailures.sum(), renewalsInFlight.get(), unexpected.sum(), disconnects.sum(),
                overdue.sum(), lapsed.size(), longestLapseMillis.get(), lapsedInWindow.size(),
                longestLapseInWindowMillis.get(), problemCount.get(), masterRenewed.sum(), masterRenewedInWindow.sum());
    }

    /** Returns the handling times (heartbeat written → acknowledgement read) of heartbeats sent in the window. */
    SampleRecorder handlingTimes() {
        return handling;
    }

    /** Returns the round trips of the lease renewals started in the window. */
    SampleRecorder renewalTimes() {
        return renewal;
    }

    /** Returns how late each heartbeat of the window was started against its schedule. */
    SampleRecorder tickLateness() {
        return lateness;
    }

    /**
     * Returns the ids of the workers whose liveness lease lapsed between two renewals: at any time,
     * or (when {@code inWindow}) noticed by a renewal started in the measurement window.
     */
    Set<String> lapsedWorkers(boolean inWindow) {
        return Set.copyOf(inWindow ? lapsedInWindow : lapsed);
    }

    /** Returns the first problems seen (unexpected messages, failed renewals, disconnects). */
    List<String> problems() {
        synchronized (problems) {
            return List.copyOf(problems);
        }
    }

    private void problem(String message) {
        problemCount.incrementAndGet();
        synchronized (problems) {
            if (problems.size() < MAX_PROBLEMS_KEPT) {
                problems.add(message);
            }
        }
    }

    /** Closes every connection and the Redis client. */
    @Override
    public void close() {
        closing = true;
        ticking = false;
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        cores.forEach(LeaseCore::close);
        redisClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    /**
     * One simulated worker, and the handler of its one connection (never shared: the worker
     * connects once and does not reconnect; a disconnect is a failure of the run). Its fields are
     * confined to its event loop, but for {@link #liveUntil}, which the Redis client's thread updates.
     */
    private final class SimulatedWorker extends SimpleChannelInboundHandler<MessageLite> {
        private final int index;
        private final String workerId;
        private final String sessionId;
        private final EventLoop loop;
        private final LeaseCore core;
        private final ByteString clientNonce = HandshakeProof.newNonce();
        private final AtomicBoolean settled = new AtomicBoolean();
        private final long[] ringSequence = new long[RING];
        private final long[] ringSentNanos = new long[RING];
        private ByteString serverNonce;
        private Channel channel;
        private long sequence;
        private long firstTickNanos;
        private long ticks;
        private ScheduledFuture<?> ticker;
        private long liveUntil; // guarded by this
        /** When an acknowledgement last said the master renewed this worker's lease; 0: never. On the loop. */
        private long masterRenewedAt;

        SimulatedWorker(int index, EventLoop loop, LeaseCore core) {
            super(MessageLite.class);
            this.index = index;
            this.workerId = workerId(index);
            this.sessionId = "s-" + java.util.UUID.randomUUID();
            this.loop = loop;
            this.core = core;
        }

        /** Registers in Redis; then, on the event loop, starts the heartbeats and connects. */
        void start(long anchorNanos) {
            core.register(new WorkerRegistration(workerId, sessionId, Map.of(), CPU_SLOTS, MEMORY_BYTES, GPU_IDS))
                    .whenComplete((result, error) -> {
                        if (error != null) {
                            failStart("cannot register: " + error);
                        } else {
                            loop.execute(() -> {
                                startTicking(anchorNanos);
                                connect();
                            });
                        }
                    });
        }

        private void startTicking(long anchorNanos) {
            long phase = intervalNanos * index / workers.length;
            long now = System.nanoTime();
            long delay = Math.floorMod(anchorNanos + phase - now, intervalNanos);
            firstTickNanos = now + delay;
            ticker = loop.scheduleAtFixedRate(this::tick, delay, intervalNanos, TimeUnit.NANOSECONDS);
        }

        private void connect() {
            new Bootstrap().group(loop).channel(transport.clientChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                    .handler(new ProtocolChannelInitializer(protocolOptions, () -> this))
                    .connect(master)
                    .addListener(f -> {
                        if (!f.isSuccess()) {
                            failStart("cannot connect to " + master + ": " + f.cause());
                        }
                    });
        }

        private void failStart(String why) {
            String message = workerId + ": " + why;
            problem(message);
            startFailure.compareAndSet(null, message);
            if (settled.compareAndSet(false, true)) {
                handshakes.release();
            }
        }

        private void tick() {
            ticksRunning.incrementAndGet();
            try {
                if (!ticking) {
                    ticker.cancel(false);
                    return;
                }
                long now = System.nanoTime();
                long due = firstTickNanos + ticks++ * intervalNanos;
                boolean measured = inWindow(now);
                if (measured) {
                    lateness.add(Math.max(0, now - due));
                }
                long byMaster = masterRenewedAt;
                if (byMaster == 0 || !io.rlscheduler.worker.internal.LeaseKeeper.leftToMaster(coreOptions, now - byMaster)) {
                    renew(now, measured);
                }
                if (channel != null && channel.isActive()) {
                    send(now, measured);
                }
            } finally {
                ticksRunning.decrementAndGet();
            }
        }

        private void renew(long startNanos, boolean measured) {
            renewalsInFlight.incrementAndGet();
            core.heartbeat(workerId, sessionId, List.of()).whenComplete((result, error) -> {
                long end = System.nanoTime();
                renewalsInFlight.decrementAndGet();
                if (error != null || result.getStatus() != HeartbeatStatus.OK) {
                    renewalFailures.increment();
                    problem(workerId + ": lease renewal failed: " + (error != null ? error : result.getStatus()));
                    return;
                }
                renewed.increment();
                if (measured) {
                    renewedInWindow.increment();
                    renewal.add(end - startNanos);
                }
                liveUntil(result.getLivenessDeadlineMillis(), measured);
            });
        }

        /** Notes a renewal's new deadline; a renewal at or after the previous deadline means a lapse. */
        private synchronized void liveUntil(long deadline, boolean measured) {
            long renewedAt = deadline - livenessMillis; // the Redis clock at the renewal
            if (liveUntil > 0 && renewedAt >= liveUntil) {
                lapsed.add(workerId);
                longestLapseMillis.accumulateAndGet(renewedAt - liveUntil, Math::max);
                if (measured) {
                    lapsedInWindow.add(workerId);
                    longestLapseInWindowMillis.accumulateAndGet(renewedAt - liveUntil, Math::max);
                }
            }
            liveUntil = Math.max(liveUntil, deadline);
        }

        private void send(long now, boolean measured) {
            long seq = ++sequence;
            int slot = (int) (seq & (RING - 1));
            if (ringSequence[slot] != 0) {
                overdue.increment(); // still unanswered RING heartbeats later; its late answer will not be matched
            }
            ringSequence[slot] = seq;
            ringSentNanos[slot] = now;
            sent.increment();
            if (measured) {
                sentInWindow.increment();
            }
            channel.writeAndFlush(Heartbeat.newBuilder().setWorkerId(workerId).setSessionId(sessionId).setSequence(seq)
                    .setSentAtUnixMs(System.currentTimeMillis()).setResources(resources).build(), channel.voidPromise());
        }

        private void onAck(HeartbeatAck ack) {
            long now = System.nanoTime();
            long seq = ack.getSequence();
            int slot = (int) (seq & (RING - 1));
            if (seq == 0 || ringSequence[slot] != seq) {
                unexpected.increment();
                problem(workerId + ": acknowledgement of heartbeat " + seq + ", which is not awaited");
                return;
            }
            ringSequence[slot] = 0;
            acked.increment();
            if (inWindow(now)) {
                ackedInWindow.increment();
            }
            long sentAt = ringSentNanos[slot];
            if (inWindow(sentAt)) {
                handling.add(now - sentAt);
            }
            if (ack.getLivenessRenewedUntilUnixMs() > 0) {
                if (masterRenewedAt == 0 || sentAt - masterRenewedAt > 0) {
                    masterRenewedAt = sentAt; // as LeaseKeeper dates it: from the heartbeat's send
                }
                masterRenewed.increment();
                if (inWindow(sentAt)) {
                    masterRenewedInWindow.increment();
                }
                liveUntil(ack.getLivenessRenewedUntilUnixMs(), inWindow(sentAt));
            }
            if (ack.getRevokedTasksCount() > 0) {
                unexpected.increment();
                problem(workerId + ": the master revoked tasks of an idle worker: " + ack.getRevokedTasksList());
            }
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
            if (channel != null) {
                if (msg instanceof HeartbeatAck ack) {
                    onAck(ack);
                } else {
                    unexpected.increment();
                    problem(workerId + ": unexpected " + msg.getClass().getSimpleName() + " from the master");
                }
                return;
            }
            if (msg instanceof Challenge challenge) {
                if (challenge.getProtocolMajor() != FrameFormat.VERSION) {
                    failStart("the master speaks protocol " + challenge.getProtocolMajor());
                    ctx.close();
                    return;
                }
                serverNonce = challenge.getServerNonce();
                ctx.writeAndFlush(Hello.newBuilder()
                        .setProtocolMajor(FrameFormat.VERSION).setProtocolMinor(FrameFormat.MINOR_VERSION)
                        .setWorkerId(workerId).setSessionId(sessionId).addCapabilities("python3")
                        .setClientNonce(clientNonce)
                        .setProof(HandshakeProof.helloProof(secret, serverNonce, clientNonce, workerId, sessionId))
                        .build());
            } else if (msg instanceof HelloAccepted accept && serverNonce != null) {
                ByteString expected = HandshakeProof.acceptProof(secret, clientNonce, serverNonce, accept.getMasterId());
                if (!HandshakeProof.matches(expected, accept.getProof())) {
                    failStart("the master did not prove the shared secret");
                    ctx.close();
                } else if (accept.getHeartbeatIntervalMs() != intervalMillis || accept.getLivenessLeaseMs() != livenessMillis) {
                    failStart("the master announces heartbeat interval " + accept.getHeartbeatIntervalMs()
                            + " ms and liveness lease " + accept.getLivenessLeaseMs() + " ms, the workers use "
                            + intervalMillis + " and " + livenessMillis);
                    ctx.close();
                } else if (settled.compareAndSet(false, true)) {
                    channel = ctx.channel();
                    connected.incrementAndGet();
                    handshakes.release();
                    ready.countDown();
                }
            } else {
                failStart("the handshake was answered with " + msg.getClass().getSimpleName() + ": " + msg);
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (channel == null) {
                failStart("the connection closed during the handshake");
            } else if (!closing) {
                connected.decrementAndGet();
                disconnects.increment();
                problem(workerId + ": the master closed the connection");
            }
            ctx.fireChannelInactive();
        }
    }
}
