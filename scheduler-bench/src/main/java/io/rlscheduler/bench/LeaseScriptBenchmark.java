package io.rlscheduler.bench;

import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.ClaimResult;
import io.rlscheduler.core.internal.ClaimStatus;
import io.rlscheduler.core.internal.HeartbeatResult;
import io.rlscheduler.core.internal.HeartbeatStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.SubmitResult;
import io.rlscheduler.core.internal.WriteResult;
import io.rlscheduler.core.internal.WriteStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Throughput, in operations per second, of the lease core's Lua scripts against a real Redis,
 * next to a plain {@code SET} round trip on the same server and client as the baseline.
 *
 * <p>Every trial runs against its own server: a redis-server started in {@code @Setup(Level.Trial)}
 * with the testkit's {@code TestRedis} (or the external server named by {@code REDIS_URL}), and
 * killed in the trial's teardown, with a fresh namespace per trial. Persistence of a started server
 * is the parameter {@code aof} ({@code off} by default; see {@link LeaseFixture#open(String)}).
 *
 * <p>Every benchmark but the {@code *InFlight16} ones makes sequential round trips from one thread
 * and waits for each answer, so they compare like with like: the SET baseline pays the same client
 * path (command written by the caller, answer decoded on Lettuce's I/O thread, caller woken up).
 * <ul>
 *   <li>{@code setRoundTrip}: one {@code SET} of a 16-byte value (sync API): one round trip.</li>
 *   <li>{@code submit}: one {@code submit} of a new task into a growing queue.</li>
 *   <li>{@code heartbeat}: one {@code heartbeat} of a worker holding two RUNNING tasks, renewing its
 *       liveness and both task leases.</li>
 *   <li>{@code claim}: one {@code claim(maxTasks=1)} that assigns one task. The claimed task is
 *       finished, and the queue refilled when it falls below 1,000 tasks, in a
 *       {@code Level.Invocation} teardown, which JMH keeps out of the measured time; so every
 *       claim sees a worker holding no task and a queue of 1,000 to 11,000 tasks.</li>
 *   <li>{@code claim8}: one {@code claim(maxTasks=8)} that assigns eight tasks (all eight GPUs of
 *       the worker); reported per task ({@code @OperationsPerInvocation(8)}). Cleared like
 *       {@code claim}; the teardown fails the run unless each invocation got exactly eight.</li>
 *   <li>{@code claimAckFinish}: a task's whole lifecycle, three scripts in sequence: claim one task,
 *       acknowledge it, finish it as SUCCEEDED.</li>
 *   <li>{@code setInFlight16}, {@code heartbeatInFlight16}: 16 calls issued at once on the async
 *       API, then all awaited; reported per call. Not a round-trip figure: it shows how far
 *       pipelining on one connection gets past the round-trip bound.</li>
 * </ul>
 * Before measuring, each trial performs its operation once and fails unless it succeeded (SET
 * answered OK, the heartbeat renewed two leases, the claim assigned a task, ...); the measured
 * operations check their answers too, so a broken benchmark fails instead of printing numbers.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
public class LeaseScriptBenchmark {

    static final String WORKER = "w-bench";
    static final String SESSION = "s-1";
    static final int IN_FLIGHT = 16;

    /** What every state has: the trial's server, client and core, with its persistence setting. */
    @State(Scope.Thread)
    public abstract static class Server {

        /** Persistence of a started redis-server: {@code off}, {@code everysec} or {@code always}. */
        @Param({"off"})
        public String aof;

        LeaseFixture fx;
        LeaseCore core;

        void open() {
            fx = LeaseFixture.open(aof);
            core = fx.core();
        }

        void close() {
            if (fx != null) {
                fx.close();
                fx = null;
            }
        }
    }

    /** The baseline: a plain connection and a key in the trial's namespace. */
    public static class SetState extends Server {
        RedisCommands<String, String> sync;
        RedisAsyncCommands<String, String> async;
        String key;
        final String value = "0123456789abcdef";

        @Setup(Level.Trial)
        public void setUp() {
            open();
            sync = fx.connection().sync();
            async = fx.connection().async();
            key = fx.key("set");
            String ok = sync.set(key, value);
            if (!"OK".equals(ok) || !value.equals(sync.get(key))) {
                throw new IllegalStateException("SET answered " + ok + ", GET " + sync.get(key));
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    /** A registered worker holding two RUNNING tasks (claimed and acknowledged in setup). */
    public static class HeartbeatState extends Server {
        List<TaskLease> held;

        @Setup(Level.Trial)
        public void setUp() {
            open();
            LeaseFixture.await(core.register(LeaseFixture.worker(WORKER, SESSION)));
            fx.submitMany(2);
            ClaimResult claim = LeaseFixture.await(core.claim(WORKER, SESSION, 2, "r-setup"));
            if (claim.getStatus() != ClaimStatus.OK || claim.getAssignments().size() != 2) {
                throw new IllegalStateException("setup claim answered " + claim);
            }
            held = new ArrayList<>();
            for (Assignment a : claim.getAssignments()) {
                TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
                WriteResult ack = LeaseFixture.await(core.acknowledge(lease, WORKER, SESSION));
                if (ack.getStatus() != WriteStatus.APPLIED || ack.getCurrentState() != TaskState.RUNNING) {
                    throw new IllegalStateException("setup acknowledge answered " + ack);
                }
                held.add(lease);
            }
            held = List.copyOf(held);
            check(LeaseFixture.await(core.heartbeat(WORKER, SESSION, held)));
        }

        static HeartbeatResult check(HeartbeatResult r) {
            if (r.getStatus() != HeartbeatStatus.OK || r.getRenewedTasks() != 2 || !r.getRevokedTasks().isEmpty()) {
                throw new IllegalStateException("heartbeat answered " + r);
            }
            return r;
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    /** An empty queue and a task factory. */
    public static class SubmitState extends Server {

        @Setup(Level.Trial)
        public void setUp() {
            open();
            SubmitResult r = LeaseFixture.await(core.submit(fx.nextTask()));
            if (!r.isCreated() || r.getTask().getState() != TaskState.QUEUED) {
                throw new IllegalStateException("setup submit answered " + r);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    /**
     * A registered, idle worker (64 CPU slots, 8 GPUs) and a queue of 1-GPU tasks that never runs
     * dry: below {@link #LOW_WATER} queued tasks, {@link #REFILL} more are submitted, outside the
     * measured time. Claimed tasks are finished outside the measured time too.
     */
    public static class ClaimState extends Server {
        static final int LOW_WATER = 1_000;
        static final int REFILL = 10_000;

        /** Tasks this state put into the queue and has not seen claimed; checked against Redis. */
        long queued;
        private long requestCounter;
        /** The last claim of the measured operation, finished by the invocation teardown. */
        ClaimResult claimed;
        int requested;

        @Setup(Level.Trial)
        public void setUp() {
            open();
            LeaseFixture.await(core.register(LeaseFixture.worker(WORKER, SESSION)));
            refill();
            // The measured path once: claim a task, and finish it.
            claimed = LeaseFixture.await(core.claim(WORKER, SESSION, 1, nextRequestId()));
            requested = 1;
            afterInvocation();
        }

        String nextRequestId() {
            return "r-" + (++requestCounter);
        }

        /** Finishes what the measured claim took (failing unless it got all it asked for), refills the queue. */
        @TearDown(Level.Invocation)
        public void afterInvocation() {
            ClaimResult r = claimed;
            if (r != null) {
                claimed = null;
                if (r.getStatus() != ClaimStatus.OK || r.getAssignments().size() != requested) {
                    throw new IllegalStateException("claim of " + requested + " answered " + r);
                }
                List<TaskLease> leases = new ArrayList<>(r.getAssignments().size());
                for (Assignment a : r.getAssignments()) {
                    leases.add(new TaskLease(a.getTaskId(), a.getEpoch()));
                }
                fx.finishAll(leases, WORKER, SESSION);
                queued -= leases.size();
            }
            if (queued < LOW_WATER) {
                refill();
            }
        }

        private void refill() {
            fx.submitMany(REFILL);
            queued += REFILL;
        }

        /** After each iteration: the queue in Redis holds exactly what this state expects. */
        @TearDown(Level.Iteration)
        public void checkQueue() {
            long depth = LeaseFixture.await(core.queueDepth());
            if (depth != queued) {
                throw new IllegalStateException("queue holds " + depth + " tasks, expected " + queued);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Sequential round trips
    // ------------------------------------------------------------------------------------------

    /** Baseline: one SET of a small value, one Redis round trip. */
    @Benchmark
    public String setRoundTrip(SetState s) {
        String ok = s.sync.set(s.key, s.value);
        if (!"OK".equals(ok)) {
            throw new IllegalStateException("SET answered " + ok);
        }
        return ok;
    }

    /** One submit script: a new task into the queue. */
    @Benchmark
    public SubmitResult submit(SubmitState s) {
        SubmitResult r = s.core.submit(s.fx.nextTask()).join();
        if (!r.isCreated()) {
            throw new IllegalStateException("submit answered " + r);
        }
        return r;
    }

    /** One heartbeat script: liveness and two task leases renewed. */
    @Benchmark
    public HeartbeatResult heartbeat(HeartbeatState s) {
        return HeartbeatState.check(s.core.heartbeat(WORKER, SESSION, s.held).join());
    }

    /** One claim script assigning one task; the teardown checks it and finishes the task. */
    @Benchmark
    public ClaimResult claim(ClaimState s) {
        s.requested = 1;
        return s.claimed = s.core.claim(WORKER, SESSION, 1, s.nextRequestId()).join();
    }

    /** One claim script assigning eight tasks; reported per task. */
    @Benchmark
    @OperationsPerInvocation(8)
    public ClaimResult claim8(ClaimState s) {
        s.requested = 8;
        return s.claimed = s.core.claim(WORKER, SESSION, 8, s.nextRequestId()).join();
    }

    /** A whole lifecycle, three scripts in sequence: claim one task, acknowledge it, finish it. */
    @Benchmark
    public WriteResult claimAckFinish(ClaimState s) {
        ClaimResult claim = s.core.claim(WORKER, SESSION, 1, s.nextRequestId()).join();
        if (claim.getStatus() != ClaimStatus.OK || claim.getAssignments().size() != 1) {
            throw new IllegalStateException("claim answered " + claim);
        }
        Assignment a = claim.getAssignments().get(0);
        TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
        WriteResult ack = s.core.acknowledge(lease, WORKER, SESSION).join();
        if (ack.getStatus() != WriteStatus.APPLIED) {
            throw new IllegalStateException("acknowledge answered " + ack);
        }
        WriteResult done = s.core.finish(lease, WORKER, SESSION, TaskState.SUCCEEDED, 0, null, LeaseFixture.METRICS).join();
        if (done.getStatus() != WriteStatus.APPLIED) {
            throw new IllegalStateException("finish answered " + done);
        }
        s.queued--;
        return done;
    }

    // ------------------------------------------------------------------------------------------
    // 16 in flight on one connection (not round-trip figures)
    // ------------------------------------------------------------------------------------------

    /** 16 SETs issued at once on the async API, then awaited; reported per SET. */
    @Benchmark
    @OperationsPerInvocation(IN_FLIGHT)
    public void setInFlight16(SetState s) {
        @SuppressWarnings("unchecked")
        CompletableFuture<String>[] pending = new CompletableFuture[IN_FLIGHT];
        for (int i = 0; i < IN_FLIGHT; i++) {
            pending[i] = s.async.set(s.key, s.value).toCompletableFuture();
        }
        for (CompletableFuture<String> f : pending) {
            String ok = f.join();
            if (!"OK".equals(ok)) {
                throw new IllegalStateException("SET answered " + ok);
            }
        }
    }

    /** 16 heartbeats of the same worker issued at once, then awaited; reported per heartbeat. */
    @Benchmark
    @OperationsPerInvocation(IN_FLIGHT)
    public void heartbeatInFlight16(HeartbeatState s) {
        @SuppressWarnings("unchecked")
        CompletableFuture<HeartbeatResult>[] pending = new CompletableFuture[IN_FLIGHT];
        for (int i = 0; i < IN_FLIGHT; i++) {
            pending[i] = s.core.heartbeat(WORKER, SESSION, s.held);
        }
        for (CompletableFuture<HeartbeatResult> f : pending) {
            HeartbeatState.check(f.join());
        }
    }
}
