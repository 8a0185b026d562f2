package io.rlscheduler.bench.harness;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.testkit.TestRedis;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code heartbeats}: how many heartbeats per second one master handles from {@code workers}
 * simulated workers (10,000 by default) that each heartbeat every {@code intervalMs} (1 s), over
 * real sockets and with real leases in Redis, and whether every worker stays IDLE meanwhile.
 *
 * <p><b>Set-up.</b> One Redis (the testkit's {@code TestRedis}, or {@code REDIS_URL}; AOF off by
 * default as in the other benchmarks). One real master in a JVM of its own ({@link MasterProcess}:
 * {@code -Xmx1g}, so "under 1 GiB of heap" holds by construction or the master dies of an
 * {@code OutOfMemoryError}), its default settings but the lease settings below and the period of
 * its backstop dispatch round ({@code masterDispatchIntervalMs}, the master's default 1 s), so its
 * CPU and heap are measured apart from the clients. The simulated workers ({@link SimulatedWorkers})
 * live in this JVM: each registers in Redis, connects over loopback TCP and goes through the real
 * handshake, then every interval renews its liveness lease in Redis and sends a {@code Heartbeat}
 * frame, which the master answers with a {@code HeartbeatAck}. Master and workers use the same lease
 * settings: heartbeat interval {@code intervalMs}, liveness lease {@code livenessMs} (3 s, three
 * intervals, as the defaults' 10 s and 30 s), task lease the default.
 *
 * <p><b>Run.</b> All workers connect (at most {@code connectConcurrency} handshakes at a time),
 * then {@code warmup} seconds of heartbeats unmeasured, then {@code duration} seconds measured.
 * Right after the connecting, then every {@code checkEvery} seconds until the end of the
 * measurement and once more at its end, {@link LeaseCore#listWorkers} (the read-only
 * {@code workers} script, states by the Redis clock) must show every worker IDLE; any worker seen
 * otherwise is counted. Between those checks, each renewal's answer shows exactly whether the
 * worker's liveness had lapsed since the previous one ({@link SimulatedWorkers}). Both are counted
 * apart for the measurement and for what came before it (connecting and warm-up, when thousands of
 * registrations and handshakes, and the dispatch rounds each handshake triggers in the master,
 * load Redis far more than the steady state does). The harness's Redis clients wait up to
 * {@link #REDIS_TIMEOUT} for an answer (a real worker waits 30 s for its registration), so a
 * saturated Redis shows as slow renewals and lapsed leases, not as a failed start.
 *
 * <p><b>Figures</b> (over the measured window): the value, heartbeats handled per second
 * (acknowledgements received in the window / its length); the handling time of each heartbeat sent
 * in the window (frame written → acknowledgement read, in the client, so including the client's
 * own event-loop wait) p50/p90/p99/p99.9/max; the lease renewals' round trips; the master JVM's CPU
 * in cores (from {@code /proc/<pid>/stat}: every thread, GC and JIT included) and by thread group;
 * its heap (the most used between samples, including the size before each collection, and the most
 * left after a collection); Redis's CPU and commands per heartbeat; this JVM's CPU (the clients).
 *
 * <p><b>Baseline:</b> the offered rate, {@code workers / interval}: what a master that answers
 * every heartbeat in time handles, so the ratio is handled / offered, 1.0 at best. No external
 * system is a fair yardstick for "answers 10,000 connections each once a second", and the offered
 * rate is the rate the goal asks for; the rate actually sent in the window is in params
 * ({@code sent_per_s}), which falls below the offered rate only if the clients lag.
 *
 * <p><b>Goal</b>: all workers stay IDLE (none falsely PENDING or DOWN), the
 * master under one core and under 1 GiB of heap; recorded as {@code goal_met}. <b>Correctness</b>
 * (the run fails, after printing every figure, if not): during the measurement no worker seen
 * other than IDLE or with a lapsed lease, no state check without an answer; in the whole run every
 * heartbeat sent acknowledged (none lost, none unexpected), every renewal answered OK, no
 * connection lost, the master alive at the end. Workers seen other than IDLE before the
 * measurement are reported ({@code before_measurement}) and printed, but do not fail the run.
 */
public final class Heartbeats implements EndToEndBenchmark {

    /** The master JVM's maximum heap: the goal's bound. */
    static final String MASTER_MAX_HEAP = "1g";

    private static final double MIB = 1 << 20;

    /** Command timeout of the harness's and the workers' Redis clients. */
    private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(30);

    @Override
    public String name() {
        return "heartbeats";
    }

    @Override
    public String description() {
        return "heartbeats/s one master (own JVM, -Xmx" + MASTER_MAX_HEAP + ") handles from N simulated workers (real sockets,"
                + " real leases), all IDLE?; baseline the offered rate";
    }

    @Override
    public List<Param> parameters() {
        return List.of(
                new Param("workers", "10000", "simulated workers, each with its own connection and lease"),
                new Param("intervalMs", "1000", "heartbeat interval of workers and master, ms"),
                new Param("livenessMs", "3000", "liveness lease of workers and master, ms (> intervalMs)"),
                new Param("duration", "60", "seconds measured"),
                new Param("warmup", "10", "seconds of heartbeats after all workers connected, not measured"),
                new Param("checkEvery", "5", "seconds between checks that every worker is IDLE (and progress lines)"),
                new Param("clientThreads", "2", "event loops shared by all simulated workers"),
                new Param("redisConnections", "4", "Redis connections shared by all simulated workers"),
                new Param("connectConcurrency", "500", "most workers between registration and accepted handshake at once"),
                new Param("masterDispatchIntervalMs", Long.toString(
                        io.rlscheduler.master.MasterOptions.DEFAULT_DISPATCH_INTERVAL.toMillis()),
                        "period of the master's backstop dispatch round, ms (its default)"),
                new Param("aof", "off", "persistence of the started Redis: off, everysec or always"));
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        // CoreOptions checks interval < liveness lease.
        CoreOptions core = CoreOptions.builder().namespace(LocalCluster.freshNamespace())
                .heartbeatInterval(Duration.ofMillis(p.getInt("intervalMs", 50)))
                .livenessLease(Duration.ofMillis(p.getInt("livenessMs", 51))).build();
        requireOpenFiles("this JVM", ProcStat.openFilesLimit("self"), p.getInt("workers", 1));

        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        Path workDir = Files.createTempDirectory("rls-bench-heartbeats-");
        boolean failed = true;
        try (TestRedis redis = TestRedis.fromEnvironment()) {
            RedisClient client = RedisClient.create(redisUri(redis));
            try (StatefulRedisConnection<String, String> connection = client.connect();
                 LeaseCore observer = LeaseCore.create(client, core)) {
                RedisCommands<String, String> admin = connection.sync();
                String persistence = LocalCluster.configure(redis, admin, p.get("aof"));
                params.put("redis", persistence);
                try {
                    BenchResult result = measure(p, core, redis, admin, observer, workDir, params);
                    failed = false;
                    return result;
                } finally {
                    if (redis.isExternal()) {
                        LocalCluster.deleteNamespace(admin, core.getNamespace());
                    }
                }
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            if (failed && Files.exists(workDir.resolve("master.log"))) {
                System.out.println("# the master's output is kept in " + workDir.resolve("master.log"));
            } else {
                LocalCluster.deleteTree(workDir);
            }
        }
    }

    private BenchResult measure(BenchParams p, CoreOptions core, TestRedis redis, RedisCommands<String, String> admin,
                                LeaseCore observer, Path workDir, Map<String, Object> params) throws Exception {
        int workers = p.getInt("workers", 1);
        int intervalMs = p.getInt("intervalMs", 50);
        int duration = p.getInt("duration", 1);
        int warmup = p.getInt("warmup", 0);
        int checkEvery = p.getInt("checkEvery", 1);
        double offered = workers * 1000.0 / intervalMs;
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        String redisUrl = redis.isExternal() ? TestRedis.externalUrl().orElseThrow()
                : "redis://" + redis.getHost() + ":" + redis.getPort();
        System.out.printf(Locale.ROOT, "# %s: %s; %,d workers every %d ms (%,.0f heartbeats/s offered), liveness lease %d ms%n",
                name(), params.get("redis"), workers, intervalMs, offered, core.getLivenessLease().toMillis());

        try (MasterProcess master = MasterProcess.start(redisUrl, core, secret, workDir,
                Duration.ofMillis(p.getInt("masterDispatchIntervalMs", 1)), MASTER_MAX_HEAP)) {
            requireOpenFiles("the master JVM", master.openFilesLimit(), workers);
            System.out.printf(Locale.ROOT, "# master: pid %d, %s, max heap %.0f MiB, %s, at %s%n", master.pid(),
                    master.transport(), master.maxHeapBytes() / MIB, master.gc(), master.address());
            long windowHeartbeats = (long) Math.ceil(offered * (duration + 1));
            SimulatedWorkers.Settings settings = new SimulatedWorkers.Settings(workers, p.getInt("clientThreads", 1),
                    p.getInt("redisConnections", 1), p.getInt("connectConcurrency", 1), "hb-worker-");
            try (SimulatedWorkers sim = new SimulatedWorkers(settings, redisUri(redis), core, master.address(), secret,
                    windowHeartbeats)) {
                long connectStart = System.nanoTime();
                long masterCpuAtConnect = master.cpuNanos();
                try {
                    sim.connectAll(Duration.ofSeconds(30 + workers / 200));
                } catch (IllegalStateException e) {
                    double s = (System.nanoTime() - connectStart) / 1e9;
                    List<MasterProcess.Sample> samples = master.samples();
                    System.out.printf(Locale.ROOT, "# connecting failed after %.1f s with %,d of %,d connected; meanwhile the"
                                    + " master used %.2f cores, its heap last peaked at %.0f MiB; Redis: %s%n", s,
                            sim.counts().connected(), workers, (master.cpuNanos() - masterCpuAtConnect) / 1e9 / s,
                            samples.isEmpty() ? 0 : samples.get(samples.size() - 1).peak() / MIB, redisMemory(admin));
                    System.out.println("# the master's warnings: " + master.problems());
                    System.out.println("# the workers' first problems: " + sim.problems());
                    throw e;
                }
                double connectSeconds = (System.nanoTime() - connectStart) / 1e9;
                System.out.printf(Locale.ROOT, "# %,d workers registered and connected in %.1f s%n", workers, connectSeconds);
                StateChecks states = new StateChecks(observer, workers, "hb-worker-");
                Progress progress = new Progress(sim, master);

                // Warm-up: heartbeats as measured, not counted.
                long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmup);
                states.check();
                runUntil(warmupEnd, checkEvery, states, progress, "warm-up");

                // Measurement.
                Map<String, RedisStats.Usage> redisBefore = RedisStats.commandStats(admin);
                double redisCpuBefore = CpuUsage.redisCpuSeconds(admin);
                long benchCpuBefore = processCpuNanos();
                Map<String, Long> clientThreadsBefore = ProcStat.threadCpuNanos(ProcessHandle.current().pid());
                Map<String, Long> threadsBefore = master.threadCpuNanos();
                long masterCpuBefore = master.cpuNanos();
                long windowStartMillis = System.currentTimeMillis();
                String loadBefore = Machine.loadAverage();
                sim.openWindow();
                states.measuring = true;
                long windowStart = System.nanoTime();
                System.out.println("# measurement starts at " + java.time.LocalTime.now() + ", load average " + loadBefore);
                runUntil(windowStart + TimeUnit.SECONDS.toNanos(duration), checkEvery, states, progress, "measuring");
                sim.closeWindow();
                long windowNanos = System.nanoTime() - windowStart;
                long masterCpu = master.cpuNanos() - masterCpuBefore;
                Map<String, Long> threadsAfter = master.threadCpuNanos();
                long benchCpu = processCpuNanos() - benchCpuBefore;
                Map<String, Long> clientThreadsAfter = ProcStat.threadCpuNanos(ProcessHandle.current().pid());
                double redisCpu = CpuUsage.redisCpuSeconds(admin) - redisCpuBefore;
                long windowEndMillis = System.currentTimeMillis();
                SimulatedWorkers.Counts window = sim.counts();
                Map<String, Object> redisCommands = RedisStats.difference(redisBefore, RedisStats.commandStats(admin),
                        Math.max(1, window.ackedInWindow()));
                System.out.println("# measurement ends at " + java.time.LocalTime.now());
                states.check(); // the last check, while the workers still heartbeat
                sim.stopHeartbeats(Duration.ofSeconds(5));
                SimulatedWorkers.Counts end = sim.counts();
                boolean masterAlive = master.isAlive();
                List<MasterProcess.Sample> samples = master.samples();
                List<String> masterProblems = master.problems();

                double seconds = windowNanos / 1e9;
                double handled = window.ackedInWindow() / seconds;
                double masterCores = masterCpu / (double) windowNanos;
                Heap heap = Heap.of(samples, windowStartMillis, windowEndMillis);
                params.put("offered_per_s", Stats.round1(offered));
                params.put("sent_per_s", Stats.round1(window.sentInWindow() / seconds));
                params.put("handled_per_s", Stats.round1(handled));
                params.put("handling_ms", percentiles(sim.handlingTimes()));
                params.put("redis_renewals_per_s", Stats.round1(window.renewedInWindow() / seconds));
                // Renewals the master made for idle workers (their acknowledgements said so), and
                // those the workers made themselves (redis_renewals_per_s).
                params.put("master_renewals_per_s", Stats.round1(window.masterRenewedInWindow() / seconds));
                params.put("redis_renewal_ms", percentiles(sim.renewalTimes()));
                params.put("client_send_lateness_ms", percentiles(sim.tickLateness()));
                Map<String, Object> masterFigures = new LinkedHashMap<>();
                masterFigures.put("cpu_cores", Stats.round3(masterCores));
                masterFigures.put("cpu_us_per_heartbeat", Stats.round1(masterCpu / 1e3 / Math.max(1, window.ackedInWindow())));
                masterFigures.put("cpu_cores_by_thread", coresByThread(threadsBefore, threadsAfter, windowNanos));
                masterFigures.put("heap_peak_mib", Stats.round1(heap.peak / MIB));
                masterFigures.put("heap_peak_mib_whole_run", Stats.round1(heap.peakWholeRun / MIB));
                masterFigures.put("heap_after_gc_max_mib", Stats.round1(heap.afterGc / MIB));
                masterFigures.put("heap_committed_max_mib", Stats.round1(heap.committed / MIB));
                masterFigures.put("heap_max_mib", Stats.round1(master.maxHeapBytes() / MIB));
                masterFigures.put("gc_count", heap.gcs);
                masterFigures.put("gc_ms", heap.gcMillis);
                masterFigures.put("gc", master.gc());
                masterFigures.put("transport", master.transport());
                masterFigures.put("heap_samples", heap.samples);
                masterFigures.put("warnings_logged", masterProblems.size());
                params.put("master", masterFigures);
                params.put("falsely_pending_or_down", states.notIdle.size());
                params.put("not_idle_by_state", StateChecks.byState(states.notIdle));
                params.put("liveness_lapses", end.lapsedInWindow());
                params.put("longest_lapse_ms", end.longestLapseInWindowMillis());
                Map<String, Object> before = new LinkedHashMap<>();
                before.put("falsely_pending_or_down", states.notIdleBefore.size());
                before.put("not_idle_by_state", StateChecks.byState(states.notIdleBefore));
                before.put("liveness_lapses_whole_run", end.lapsedWorkers());
                before.put("longest_lapse_ms_whole_run", end.longestLapseMillis());
                params.put("before_measurement", before);
                params.put("state_checks", states.checks);
                params.put("state_checks_failed", states.failed);
                params.put("state_check_max_ms", Stats.round1(states.maxCheckNanos / 1e6));
                params.put("workers_missing_max", states.maxMissing);
                params.put("heartbeats_sent", end.sent());
                params.put("heartbeats_lost", end.unanswered());
                params.put("unexpected_messages", end.unexpected());
                params.put("heartbeats_overdue", end.overdue());
                params.put("renewal_failures", end.renewalFailures());
                params.put("disconnects", end.disconnects());
                params.put("connect_s", Stats.round1(connectSeconds));
                params.put("clients_jvm_cores", Stats.round3(benchCpu / (double) windowNanos));
                params.put("clients_jvm_cores_by_thread", coresByThread(clientThreadsBefore, clientThreadsAfter, windowNanos));
                params.put("redis_cores", Stats.round3(redisCpu / seconds));
                params.put("redis_commands_per_heartbeat", redisCommands);
                params.put("redis_memory_after", redisMemory(admin));
                boolean allIdle = states.notIdle.isEmpty() && end.lapsedInWindow() == 0 && states.maxMissing == 0
                        && states.failed == 0;
                boolean goalMet = allIdle && masterCores < 1.0 && heap.peakWholeRun < (1L << 30) && masterAlive;
                params.put("goal", "all workers IDLE throughout; master < 1 core and < 1 GiB heap");
                params.put("goal_met", goalMet);
                Map<String, Object> machine = new LinkedHashMap<>(Machine.describe());
                machine.put("load_average_before", loadBefore);
                params.put("machine", machine);

                System.out.printf(Locale.ROOT, "# measured %.1f s: %,.0f heartbeats/s handled of %,.0f offered (%,.0f sent);"
                                + " handling p50 %s ms, p99 %s ms, max %s ms; renewals %,.0f/s by the master, %,.0f/s by"
                                + " the workers themselves (p99 %s ms)%n", seconds, handled,
                        offered, window.sentInWindow() / seconds, figure(params, "handling_ms", "p50"),
                        figure(params, "handling_ms", "p99"), figure(params, "handling_ms", "max"),
                        window.masterRenewedInWindow() / seconds, window.renewedInWindow() / seconds,
                        figure(params, "redis_renewal_ms", "p99"));
                System.out.printf(Locale.ROOT, "# master: %.2f cores, heap peak %.0f MiB (after GC at most %.0f MiB), %d GCs"
                                + " taking %d ms; Redis %.2f cores; clients' JVM %.2f cores%n", masterCores, heap.peak / MIB,
                        heap.afterGc / MIB, heap.gcs, heap.gcMillis, redisCpu / seconds, benchCpu / (double) windowNanos);
                System.out.println("# master CPU by thread (cores): " + masterFigures.get("cpu_cores_by_thread"));
                System.out.println("# clients' JVM CPU by thread (cores): " + params.get("clients_jvm_cores_by_thread"));
                System.out.println("# Redis after the measurement: " + params.get("redis_memory_after"));
                RedisStats.print("Redis commands during the measurement (INFO commandstats), per heartbeat handled",
                        redisCommands);
                System.out.printf(Locale.ROOT, "# during the measurement: workers seen other than IDLE %d %s, liveness lapses"
                                + " %d (longest %d ms); %d checks in all; lost %d, unexpected %d, renewal failures %d,"
                                + " disconnects %d%n", states.notIdle.size(), StateChecks.byState(states.notIdle),
                        end.lapsedInWindow(), end.longestLapseInWindowMillis(), states.checks, end.unanswered(),
                        end.unexpected(), end.renewalFailures(), end.disconnects());
                if (!states.notIdleBefore.isEmpty() || end.lapsedWorkers() > end.lapsedInWindow()) {
                    System.out.printf(Locale.ROOT, "# before the measurement (connecting, warm-up): %d workers seen other than"
                                    + " IDLE %s; in the whole run %d liveness lapses (longest %d ms)%n",
                            states.notIdleBefore.size(), StateChecks.byState(states.notIdleBefore), end.lapsedWorkers(),
                            end.longestLapseMillis());
                }
                if (!masterProblems.isEmpty()) {
                    System.out.println("# the master logged " + masterProblems.size() + " warnings, the first: "
                            + masterProblems.subList(0, Math.min(5, masterProblems.size())));
                }
                System.out.println("# goal (all IDLE, master < 1 core, < 1 GiB heap) " + (goalMet ? "met" : "NOT met"));

                BenchResult result = new BenchResult(name(), "heartbeats/s", Stats.round1(handled),
                        String.format(Locale.ROOT, "offered: %d workers / %d ms", workers, intervalMs), Stats.round1(offered),
                        params);
                verify(result, states, end, sim, masterAlive, master);
                return result;
            }
        }
    }

    /**
     * Throws, after printing the whole result, unless every worker stayed IDLE, every heartbeat was
     * answered and renewed, no connection was lost and the master is alive.
     */
    private static void verify(BenchResult result, StateChecks states, SimulatedWorkers.Counts end,
                               SimulatedWorkers sim, boolean masterAlive, MasterProcess master) {
        List<String> problems = new ArrayList<>();
        if (!states.notIdle.isEmpty()) {
            problems.add(states.notIdle.size() + " workers seen other than IDLE " + StateChecks.byState(states.notIdle) + ", e.g. "
                    + states.notIdle.entrySet().stream().limit(5).toList());
        }
        if (end.lapsedInWindow() > 0) {
            problems.add(end.lapsedInWindow() + " workers' liveness lease lapsed (longest " + end.longestLapseInWindowMillis()
                    + " ms), e.g. " + sim.lapsedWorkers(true).stream().limit(5).toList());
        }
        if (states.failed > 0) {
            problems.add(states.failed + " of " + (states.checks + states.failed) + " state checks failed (Redis did not answer"
                    + " within " + REDIS_TIMEOUT.toSeconds() + " s)");
        }
        if (states.maxMissing > 0) {
            problems.add("up to " + states.maxMissing + " workers missing from the workers list");
        }
        if (end.unanswered() != 0) {
            problems.add(end.unanswered() + " of " + end.sent() + " heartbeats not acknowledged (lost)");
        }
        if (end.unexpected() != 0) {
            problems.add(end.unexpected() + " unexpected messages or acknowledgements");
        }
        if (end.renewalFailures() != 0) {
            problems.add(end.renewalFailures() + " lease renewals failed");
        }
        if (end.disconnects() != 0) {
            problems.add(end.disconnects() + " connections lost");
        }
        if (!masterAlive) {
            problems.add("the master JVM died; the end of its output: " + master.tail(20));
        }
        if (!problems.isEmpty()) {
            System.out.println("# the run was not correct; its figures: " + result.toJson());
            System.out.println("# first problems the workers saw: " + sim.problems());
            throw new IllegalStateException("the run was not correct: " + String.join("; ", problems));
        }
    }

    /** Sleeps until {@code endNanos}, checking the workers' states and printing progress every {@code everySeconds}. */
    private static void runUntil(long endNanos, int everySeconds, StateChecks states, Progress progress, String phase)
            throws Exception {
        long next = System.nanoTime() + TimeUnit.SECONDS.toNanos(everySeconds);
        while (true) {
            long now = System.nanoTime();
            long until = Math.min(next, endNanos);
            if (until - now > 0) {
                Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - now)));
                continue;
            }
            if (now - endNanos >= 0) {
                return;
            }
            states.check();
            progress.print(phase, states);
            next += TimeUnit.SECONDS.toNanos(everySeconds);
        }
    }

    /**
     * The URI of the harness's and the simulated workers' Redis clients: the server's, with a command
     * timeout of {@link #REDIS_TIMEOUT} (as long as a real worker waits for its registration) instead
     * of the testkit's 10 s, so that a saturated Redis shows as slow renewals in the figures rather
     * than as a failed start.
     */
    private static RedisURI redisUri(TestRedis redis) {
        RedisURI uri = redis.getUri();
        uri.setTimeout(REDIS_TIMEOUT);
        return uri;
    }

    /** Returns Redis's key count and memory: how much the run left in it. */
    private static Map<String, Object> redisMemory(RedisCommands<String, String> admin) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("keys", admin.dbsize());
        for (String line : admin.info("memory").split("\r?\n")) {
            if (line.startsWith("used_memory:")) {
                out.put("used_memory_mib", Stats.round1(Long.parseLong(line.substring(line.indexOf(':') + 1).trim()) / MIB));
            }
        }
        return out;
    }

    private static void requireOpenFiles(String who, long limit, int workers) {
        long needed = workers + 1024L;
        if (limit >= 0 && limit < needed) {
            throw new IllegalStateException(who + " may open only " + limit + " files, but " + workers
                    + " workers need about " + needed + " (a socket each, plus jars, Redis connections, epoll)."
                    + " Raise the limit (ulimit -n) or run fewer workers (-p heartbeats.workers=N).");
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static Map<String, Object> percentiles(SampleRecorder recorder) {
        Map<String, Object> out = new LinkedHashMap<>();
        Stats s = recorder.stats();
        out.put("samples", recorder.offered());
        if (recorder.dropped() > 0) {
            out.put("dropped", recorder.dropped());
        }
        if (s == null) {
            return out;
        }
        out.put("p50", Stats.round3(s.percentileMillis(50)));
        out.put("p90", Stats.round3(s.percentileMillis(90)));
        out.put("p99", Stats.round3(s.percentileMillis(99)));
        out.put("p999", Stats.round3(s.percentileMillis(99.9)));
        out.put("max", Stats.round3(s.maxMillis()));
        out.put("mean", Stats.round3(s.meanMillis()));
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Object figure(Map<String, Object> params, String group, String key) {
        return ((Map<String, Object>) params.get(group)).getOrDefault(key, "-");
    }

    /** The master's CPU by thread group over the window, in cores, largest first, groups of at least 0.005 cores. */
    private static Map<String, Object> coresByThread(Map<String, Long> before, Map<String, Long> after, long windowNanos) {
        Map<String, Object> out = new LinkedHashMap<>();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), (e.getValue() - before.getOrDefault(e.getKey(), 0L)) / (double) windowNanos))
                .filter(e -> e.getValue() >= 0.005)
                .sorted((a, b) -> Double.compare(b.getValue(), a.getValue()))
                .forEach(e -> out.put(e.getKey(), Stats.round3(e.getValue())));
        return out;
    }

    /** The master's heap figures from its samples: over the window, and the peak over the whole run. */
    private record Heap(long peak, long peakWholeRun, long afterGc, long committed, long gcs, long gcMillis, int samples) {

        static Heap of(List<MasterProcess.Sample> all, long fromMillis, long toMillis) {
            long peak = 0;
            long peakWholeRun = 0;
            long afterGc = 0;
            long committed = 0;
            MasterProcess.Sample first = null;
            MasterProcess.Sample last = null;
            int n = 0;
            for (MasterProcess.Sample s : all) {
                peakWholeRun = Math.max(peakWholeRun, s.peak());
                // A sample covers the second before it: one taken up to a second after the window still belongs to it.
                if (s.atMillis() < fromMillis || s.atMillis() > toMillis + 1000) {
                    continue;
                }
                n++;
                peak = Math.max(peak, s.peak());
                afterGc = Math.max(afterGc, s.afterGc());
                committed = Math.max(committed, s.committed());
                if (first == null) {
                    first = s;
                }
                last = s;
            }
            long gcs = first == null ? 0 : last.gcs() - first.gcs();
            long gcMillis = first == null ? 0 : last.gcMillis() - first.gcMillis();
            return new Heap(peak, peakWholeRun, afterGc, committed, gcs, gcMillis, n);
        }
    }

    /** The checks that every simulated worker is IDLE, by the Redis clock. */
    private static final class StateChecks {
        private final LeaseCore observer;
        private final int expected;
        private final String prefix;
        /** Worker id → the first state other than IDLE it was seen in, by the checks since {@link #measuring}. */
        final Map<String, WorkerState> notIdle = new LinkedHashMap<>();
        /** The same, by the checks before the measurement (right after connecting, during the warm-up). */
        final Map<String, WorkerState> notIdleBefore = new LinkedHashMap<>();
        /** Whether the measurement has begun. */
        boolean measuring;
        int checks;
        int failed;
        int maxMissing;
        long maxCheckNanos;

        StateChecks(LeaseCore observer, int expected, String prefix) {
            this.observer = observer;
            this.expected = expected;
            this.prefix = prefix;
        }

        void check() throws InterruptedException {
            long began = System.nanoTime();
            List<WorkerInfo> all;
            try {
                all = observer.listWorkers().get(REDIS_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                failed++;
                System.out.println("# a state check failed: " + e);
                return;
            } finally {
                maxCheckNanos = Math.max(maxCheckNanos, System.nanoTime() - began);
            }
            int seen = 0;
            for (WorkerInfo w : all) {
                if (!w.getWorkerId().startsWith(prefix)) {
                    continue;
                }
                seen++;
                if (w.getState() != WorkerState.IDLE) {
                    (measuring ? notIdle : notIdleBefore).putIfAbsent(w.getWorkerId(), w.getState());
                }
            }
            maxMissing = Math.max(maxMissing, expected - seen);
            checks++;
        }

        static Map<String, Integer> byState(Map<String, WorkerState> seen) {
            Map<WorkerState, Integer> counts = new EnumMap<>(WorkerState.class);
            seen.values().forEach(s -> counts.merge(s, 1, Integer::sum));
            Map<String, Integer> out = new LinkedHashMap<>();
            counts.forEach((s, n) -> out.put(s.name(), n));
            return out;
        }
    }

    /** Progress lines: rates and the master's CPU and heap since the previous line. */
    private static final class Progress {
        private final SimulatedWorkers sim;
        private final MasterProcess master;
        private long lastNanos = System.nanoTime();
        private long lastAcked;
        private long lastRenewed;
        private long lastMasterCpu;

        Progress(SimulatedWorkers sim, MasterProcess master) {
            this.sim = sim;
            this.master = master;
            this.lastAcked = sim.counts().acked();
            this.lastRenewed = sim.counts().renewed();
            this.lastMasterCpu = master.cpuNanos();
        }

        void print(String phase, StateChecks states) {
            long now = System.nanoTime();
            SimulatedWorkers.Counts c = sim.counts();
            long cpu = master.isAlive() ? master.cpuNanos() : lastMasterCpu;
            double seconds = (now - lastNanos) / 1e9;
            List<MasterProcess.Sample> samples = master.samples();
            String heap = samples.isEmpty() ? "-" : String.format(Locale.ROOT, "%.0f MiB",
                    samples.get(samples.size() - 1).peak() / MIB);
            System.out.printf(Locale.ROOT, "# %s: %,.0f acks/s, %,.0f renewals/s, master %.2f cores, heap %s;"
                            + " connected %,d, unanswered %,d, seen not IDLE %d, lapses %d (before the measurement %d, %d),"
                            + " problems %d%n", phase,
                    (c.acked() - lastAcked) / seconds, (c.renewed() - lastRenewed) / seconds,
                    (cpu - lastMasterCpu) / 1e9 / seconds, heap, c.connected(), c.unanswered(), states.notIdle.size(),
                    c.lapsedInWindow(), states.notIdleBefore.size(), c.lapsedWorkers() - c.lapsedInWindow(), c.problems());
            lastNanos = now;
            lastAcked = c.acked();
            lastRenewed = c.renewed();
            lastMasterCpu = cpu;
        }
    }
}
