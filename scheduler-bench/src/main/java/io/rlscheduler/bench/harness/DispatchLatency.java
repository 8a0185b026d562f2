package io.rlscheduler.bench.harness;

import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code dispatch-latency}: the time from submit to the task's start on its worker, at a steady
 * {@code rate} of no-op tasks per second, with the same cluster as dispatch-throughput (one master,
 * {@code workers} in-process workers of {@code slots} CPU slots, one Redis).
 *
 * <p>One thread submits on a fixed schedule (task i due at start + i / rate; never waits for an
 * answer: {@link SchedulerMaster#submitAsync}). The submit time of a task is {@link System#nanoTime()}
 * taken just before its {@code submitAsync} call; its start time is taken by the
 * {@link NoopExecutor} when the worker calls {@code start} (same JVM, same clock). The path in
 * between: the submit script in Redis, the dispatcher's claim script, ExecuteTask over the socket,
 * the worker's acknowledge script, its run directory and parameter file, the executor. A warm-up
 * period at the same rate runs first, uncounted. Reported: p50 (the value), p99, p99.9, max and
 * mean over {@code duration} seconds; also the time until submitAsync's future completed (the
 * submit's own round trip), and how far the submitting thread fell behind its schedule.
 *
 * <p>Baseline, in the same run on the same Redis (the cluster idle): the p50 of plain SET round
 * trips (sync API, own connection) paced at the same rate for {@code baselineSeconds}: what one
 * Redis round trip costs on this machine at this pace, wake-ups included.
 */
public final class DispatchLatency implements EndToEndBenchmark {

    @Override
    public String name() {
        return "dispatch-latency";
    }

    @Override
    public String description() {
        return "submit -> task started on its worker, p50/p99/max at a steady rate; baseline a Redis SET round trip";
    }

    @Override
    public List<Param> parameters() {
        List<Param> own = List.of(
                new Param("rate", "1000", "tasks submitted per second"),
                new Param("duration", "20", "seconds measured"),
                new Param("warmup", "5", "seconds per warm-up round at the same rate (not measured); rounds repeat, up to "
                        + Jit.MAX_WARMUP_ROUNDS + ", until the JIT uses under " + (int) (Jit.SETTLED_SHARE * 100)
                        + "% of a core"),
                new Param("baselineSeconds", "5", "seconds of paced SET round trips for the baseline"));
        return java.util.stream.Stream.concat(own.stream(), LocalCluster.PARAMETERS.stream()).toList();
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        int rate = p.getInt("rate", 1);
        int duration = p.getInt("duration", 1);
        int warmupSeconds = p.getInt("warmup", 0);
        NoopExecutor executor = new NoopExecutor();
        LocalCluster.Settings settings = LocalCluster.Settings.from(p, executor);
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        Stats latency;
        Stats baseline;
        try (LocalCluster cluster = LocalCluster.start(settings)) {
            SchedulerMaster master = cluster.master();
            System.out.println("# " + name() + ": Redis " + cluster.persistence() + "; " + settings.workers()
                    + " workers x " + settings.cpuSlotsPerWorker() + " slots; " + rate + " tasks/s");
            int warmup = 0;
            for (int round = 1; warmupSeconds > 0 && round <= Jit.MAX_WARMUP_ROUNDS; round++) {
                long jit = Jit.cpuMillis();
                long began = System.nanoTime();
                Run w = paced(master, executor, "dl-w" + round + "-", warmupSeconds * rate, rate);
                warmup += warmupSeconds * rate;
                double jitShare = (Jit.cpuMillis() - jit) / ((System.nanoTime() - began) / 1e6);
                System.out.printf(Locale.ROOT, "# warm-up round %d: %,d tasks, p50 %.3f ms, p99 %.3f ms, JIT CPU %.0f%% of"
                        + " a core%n", round, warmupSeconds * rate, w.latency.percentileMillis(50),
                        w.latency.percentileMillis(99), 100 * jitShare);
                if (jitShare < Jit.SETTLED_SHARE) {
                    break;
                }
            }
            long jitBefore = Jit.cpuMillis();
            int tasks = duration * rate;
            Map<String, RedisStats.Usage> before = RedisStats.commandStats(cluster.admin());
            RedisStats.SlowlogSampler sampler = p.getBoolean("redisProfile")
                    ? new RedisStats.SlowlogSampler(cluster.redisClient().connect()) : null;
            CpuUsage cpuBefore = CpuUsage.snapshot(cluster.admin());
            String loadBefore = Machine.loadAverage();
            System.out.println("# measurement starts at " + java.time.LocalTime.now() + " (for profiles), load average "
                    + loadBefore);
            Run m = paced(master, executor, "dl-m-", tasks, rate);
            System.out.println("# measurement ends at " + java.time.LocalTime.now());
            Map<String, Object> cpu = CpuUsage.snapshot(cluster.admin()).since(cpuBefore, tasks);
            Map<String, Object> scripts = sampler == null ? null : sampler.stop();
            Map<String, Object> redisTime = RedisStats.difference(before, RedisStats.commandStats(cluster.admin()), tasks);
            latency = m.latency;
            System.out.printf(Locale.ROOT, "# measured: %,d tasks at %,.0f/s: submit->start p50 %.3f ms, p99 %.3f ms, "
                            + "p99.9 %.3f ms, max %.3f ms; submit answered p50 %.3f ms; submitter behind schedule max %.3f ms%n",
                    tasks, m.achievedRate, latency.percentileMillis(50), latency.percentileMillis(99),
                    latency.percentileMillis(99.9), latency.maxMillis(), m.submitted.percentileMillis(50), m.maxLagMillis);
            if (m.saturated(rate)) {
                System.out.printf(Locale.ROOT, "# SATURATED: tasks started at %,.0f/s against %d/s submitted (the last %.0f ms"
                        + " after the last submit): the cluster did not keep up, so these figures measure a growing backlog%n",
                        m.startRate, rate, m.drainMillis);
            }
            RedisStats.print("Redis commands during the measurement (INFO commandstats)", redisTime);
            System.out.println("# CPU during the measurement: " + cpu);
            if (scripts != null) {
                System.out.println("# per-call Redis time by script (SLOWLOG sample, slowed by the sampling): " + scripts);
                params.put("redis_slowlog_sample_us", scripts);
            }
            long jitMillis = Jit.cpuMillis() - jitBefore;
            DispatchThroughput.verify(master, executor, warmup + tasks, "dl-m-", tasks);
            System.out.println("# checked: " + (warmup + tasks) + " tasks SUCCEEDED in Redis, each started exactly once");

            baseline = setBaseline(cluster, rate, p.getInt("baselineSeconds", 1));
            System.out.printf(Locale.ROOT, "# baseline: SET round trip at %d/s: p50 %.3f ms, p99 %.3f ms, max %.3f ms%n",
                    rate, baseline.percentileMillis(50), baseline.percentileMillis(99), baseline.maxMillis());

            params.put("tasks_measured", tasks);
            params.put("warmup_tasks_run", warmup);
            params.put("jit_cpu_ms_during_measurement", jitMillis);
            params.put("achieved_rate", Stats.round1(m.achievedRate));
            params.put("p50_ms", Stats.round3(latency.percentileMillis(50)));
            params.put("p90_ms", Stats.round3(latency.percentileMillis(90)));
            params.put("p99_ms", Stats.round3(latency.percentileMillis(99)));
            params.put("p999_ms", Stats.round3(latency.percentileMillis(99.9)));
            params.put("max_ms", Stats.round3(latency.maxMillis()));
            params.put("mean_ms", Stats.round3(latency.meanMillis()));
            params.put("submit_answered_p50_ms", Stats.round3(m.submitted.percentileMillis(50)));
            params.put("submit_answered_p99_ms", Stats.round3(m.submitted.percentileMillis(99)));
            params.put("submitter_behind_schedule_max_ms", Stats.round3(m.maxLagMillis));
            // Tasks started per second, first submit to last start: under the rate when the cluster
            // cannot keep up, and then the latencies measure a growing backlog.
            params.put("start_rate", Stats.round1(m.startRate));
            params.put("last_start_after_last_submit_ms", Stats.round3(m.drainMillis));
            params.put("saturated", m.saturated(rate));
            params.put("baseline_p99_ms", Stats.round3(baseline.percentileMillis(99)));
            params.put("baseline_max_ms", Stats.round3(baseline.maxMillis()));
            params.put("goal", "p50 <= 1 ms, p99 <= 5 ms");
            params.put("goal_met", latency.percentileMillis(50) <= 1.0 && latency.percentileMillis(99) <= 5.0);
            params.put("redis", cluster.persistence());
            params.put("cpu", cpu);
            params.put("redis_commands", redisTime);
            Map<String, Object> machine = new LinkedHashMap<>(Machine.describe());
            machine.put("load_average_before", loadBefore);
            params.put("machine", machine);
        }
        return new BenchResult(name(), "ms", Stats.round3(latency.percentileMillis(50)),
                "redis SET round trip p50 (lettuce sync)", Stats.round3(baseline.percentileMillis(50)), params);
    }

    /** The figures of one paced batch. */
    record Run(Stats latency, Stats submitted, double achievedRate, double maxLagMillis, double drainMillis,
                       double startRate) {
        /** Whether the tasks started more slowly than they were submitted: a growing backlog. */
        boolean saturated(int rate) {
            return startRate < 0.95 * rate;
        }
    }

    /**
     * Submits {@code n} tasks at {@code rate} per second, waits until all succeeded, and returns
     * the submit-to-start latencies.
     */
    private static Run paced(SchedulerMaster master, NoopExecutor executor, String prefix, int n, int rate)
            throws InterruptedException {
        return paced(master, executor, prefix, n, rate, i -> "anonymous");
    }

    /** As {@link #paced(SchedulerMaster, NoopExecutor, String, int, int)}, task {@code i} owned by {@code owner.apply(i)}. */
    static Run paced(SchedulerMaster master, NoopExecutor executor, String prefix, int n, int rate,
                     java.util.function.IntFunction<String> owner) throws InterruptedException {
        TaskSpec[] specs = new TaskSpec[n];
        for (int i = 0; i < n; i++) {
            specs[i] = TaskSpec.python("noop.py").taskId(DispatchThroughput.taskId(prefix, i)).cpuSlots(1).gpus(0)
                    .owner(owner.apply(i)).build();
        }
        long[] submitNanos = new long[n];
        long[] answeredNanos = new long[n];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        java.util.concurrent.CountDownLatch answers = new java.util.concurrent.CountDownLatch(n);
        long period = TimeUnit.SECONDS.toNanos(1) / rate;
        long maxLag = 0;
        long start;
        long last;
        try (Completions done = new Completions(master, prefix, n)) {
            start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long due = start + i * period;
                long now;
                while ((now = System.nanoTime()) < due) {
                    LockSupport.parkNanos(due - now);
                }
                maxLag = Math.max(maxLag, now - due);
                if (failure.get() != null) {
                    throw new IllegalStateException("submit failed", failure.get());
                }
                int index = i;
                submitNanos[i] = System.nanoTime();
                master.submitAsync(specs[i]).whenComplete((handle, error) -> {
                    answeredNanos[index] = System.nanoTime();
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    }
                    answers.countDown();
                });
            }
            last = System.nanoTime();
            done.await(start, 60, TimeUnit.SECONDS);
        }
        if (!answers.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(answers.getCount() + " submits never answered");
        }
        if (failure.get() != null) {
            throw new IllegalStateException("submit failed", failure.get());
        }
        long[] latency = new long[n];
        long[] answered = new long[n];
        long lastStart = 0;
        for (int i = 0; i < n; i++) {
            long started = executor.startNanos(DispatchThroughput.taskId(prefix, i));
            if (started < 0) {
                throw new IllegalStateException("task " + DispatchThroughput.taskId(prefix, i) + " succeeded but never started");
            }
            lastStart = Math.max(lastStart, started);
            latency[i] = started - submitNanos[i];
            answered[i] = answeredNanos[i] - submitNanos[i];
        }
        double achieved = n > 1 ? (n - 1) / ((last - start) / 1e9) : rate;
        double startRate = n / ((lastStart - start) / 1e9);
        return new Run(new Stats(latency), new Stats(answered), achieved, maxLag / 1e6, (lastStart - last) / 1e6, startRate);
    }

    /** Paced SET round trips on a connection of their own: their latencies. */
    private static Stats setBaseline(LocalCluster cluster, int rate, int seconds) {
        try (StatefulRedisConnection<String, String> connection = cluster.redisClient().connect()) {
            RedisCommands<String, String> sync = connection.sync();
            String key = cluster.key("latency-baseline");
            for (int i = 0; i < 2000; i++) {
                sync.set(key, "warm-up-value-16"); // warm-up, unpaced, not counted
            }
            int n = rate * seconds;
            long[] samples = new long[n];
            long period = TimeUnit.SECONDS.toNanos(1) / rate;
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long due = start + i * period;
                long now;
                while ((now = System.nanoTime()) < due) {
                    LockSupport.parkNanos(due - now);
                }
                long t0 = System.nanoTime();
                sync.set(key, "sixteen-byte-val");
                samples[i] = System.nanoTime() - t0;
            }
            sync.del(key);
            return new Stats(samples);
        }
    }
}
