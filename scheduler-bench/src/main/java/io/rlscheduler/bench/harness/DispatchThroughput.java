package io.rlscheduler.bench.harness;

import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code dispatch-throughput}: how many no-op tasks per second go through the whole path, submit
 * → claim (Lua, in Redis) → ExecuteTask over the socket → acknowledge (Lua) → executor start →
 * finish (Lua) → SUCCEEDED, with one master, {@code workers} in-process workers of {@code slots}
 * CPU slots each (no GPUs; each task needs 1 CPU slot) and one Redis.
 *
 * <p>The harness submits {@code tasks} tasks through {@link SchedulerMaster#submitAsync} as fast as
 * the API allows, with at most {@code inflight} submissions unanswered, and measures from the first
 * submit to the SUCCEEDED event of the last task. A warm-up batch of {@code warmup} tasks runs
 * first, uncounted. At the end it checks that Redis holds every task as SUCCEEDED, nothing queued,
 * assigned, running or failed, and that the executor started every task exactly once.
 *
 * <p>Baseline, in the same run on the same Redis: a plain Lettuce producer and consumers moving the
 * same number of items (the size of a task spec) through a Redis list: one producer LPUSHing on
 * the async API with the same in-flight bound, {@code baselineConsumers} consumers each on its own
 * connection taking one item per BRPOP round trip, as a simple queue worker does. Measured from
 * the first LPUSH to the last item taken, after a warm-up pass of a tenth of the items.
 */
public final class DispatchThroughput implements EndToEndBenchmark {

    @Override
    public String name() {
        return "dispatch-throughput";
    }

    @Override
    public String description() {
        return "no-op tasks/s through submit -> claim -> execute over the socket -> finish; baseline a Redis list";
    }

    @Override
    public List<Param> parameters() {
        List<Param> own = List.of(
                new Param("tasks", "50000", "tasks measured"),
                new Param("warmup", "5000", "tasks per warm-up round (not measured); rounds repeat, up to"
                        + " warmupRounds, until the JIT uses under " + (int) (Jit.SETTLED_SHARE * 100) + "% of a core"),
                new Param("warmupRounds", "16", "most warm-up rounds: the cluster's code is large, and on 2 cores"
                        + " the JIT takes about 15 rounds of 5,000 tasks to settle"),
                new Param("inflight", "2000", "most submissions (and baseline LPUSHes) awaiting their answer"),
                new Param("baselineConsumers", "4", "consumers of the Redis-list baseline"));
        return java.util.stream.Stream.concat(own.stream(), LocalCluster.PARAMETERS.stream()).toList();
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        int tasks = p.getInt("tasks", 1);
        int warmup = p.getInt("warmup", 0);
        int warmupRounds = p.getInt("warmupRounds", 1);
        int inflight = p.getInt("inflight", 1);
        NoopExecutor executor = new NoopExecutor();
        LocalCluster.Settings settings = LocalCluster.Settings.from(p, executor);
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        double ours;
        double baseline;
        try (LocalCluster cluster = LocalCluster.start(settings)) {
            SchedulerMaster master = cluster.master();
            System.out.println("# " + name() + ": Redis " + cluster.persistence() + "; " + settings.workers()
                    + " workers x " + settings.cpuSlotsPerWorker() + " slots");
            int warmedUp = 0;
            for (int round = 1; warmup > 0 && round <= warmupRounds; round++) {
                long jit = Jit.cpuMillis();
                long t = runBatch(master, "dt-w" + round + "-", warmup, inflight);
                warmedUp += warmup;
                double jitShare = (Jit.cpuMillis() - jit) / (t / 1e6);
                System.out.printf(Locale.ROOT, "# warm-up round %d: %,d tasks in %.2f s (%,.0f tasks/s), JIT CPU %.0f%% of"
                        + " a core%n", round, warmup, t / 1e9, warmup / (t / 1e9), 100 * jitShare);
                if (jitShare < Jit.SETTLED_SHARE) {
                    break;
                }
            }
            long jitBefore = Jit.cpuMillis();
            Map<String, RedisStats.Usage> before = RedisStats.commandStats(cluster.admin());
            RedisStats.SlowlogSampler sampler = p.getBoolean("redisProfile")
                    ? new RedisStats.SlowlogSampler(cluster.redisClient().connect()) : null;
            CpuUsage cpuBefore = CpuUsage.snapshot(cluster.admin());
            String loadBefore = Machine.loadAverage();
            System.out.println("# measurement starts at " + java.time.LocalTime.now() + " (for profiles), load average "
                    + loadBefore);
            long elapsed = runBatch(master, "dt-m-", tasks, inflight);
            System.out.println("# measurement ends at " + java.time.LocalTime.now());
            Map<String, Object> cpu = CpuUsage.snapshot(cluster.admin()).since(cpuBefore, tasks);
            Map<String, Object> scripts = sampler == null ? null : sampler.stop();
            Map<String, Object> redisTime = RedisStats.difference(before, RedisStats.commandStats(cluster.admin()), tasks);
            ours = tasks / (elapsed / 1e9);
            System.out.printf(Locale.ROOT, "# measured: %,d tasks in %.2f s: %,.0f tasks/s%n", tasks, elapsed / 1e9, ours);
            RedisStats.print("Redis commands during the measurement (INFO commandstats)", redisTime);
            System.out.println("# CPU during the measurement: " + cpu);
            if (scripts != null) {
                System.out.println("# per-call Redis time by script (SLOWLOG sample, slowed by the sampling): " + scripts);
                params.put("redis_slowlog_sample_us", scripts);
            }
            long jitMillis = Jit.cpuMillis() - jitBefore;
            verify(master, executor, warmedUp + tasks, "dt-m-", tasks);
            System.out.println("# checked: " + (warmedUp + tasks) + " tasks SUCCEEDED in Redis, each started exactly once");

            // An item the size of a task's spec as TaskSpec writes it.
            String payload = "{\"script\":\"noop.py\",\"parameters\":{},\"arguments\":[],\"environment\":{},"
                    + "\"timeoutMs\":0,\"traceId\":\"" + java.util.UUID.randomUUID() + "\",\"owner\":\"anonymous\"}";
            int consumers = p.getInt("baselineConsumers", 1);
            listBaseline(cluster.redisClient(), cluster.key("list-warmup"), Math.max(1, tasks / 10), consumers, inflight, payload);
            long b = listBaseline(cluster.redisClient(), cluster.key("list"), tasks, consumers, inflight, payload);
            baseline = tasks / (b / 1e9);
            System.out.printf(Locale.ROOT, "# baseline: %,d items through a Redis list in %.2f s: %,.0f items/s%n",
                    tasks, b / 1e9, baseline);
            params.put("elapsed_s", Stats.round3(elapsed / 1e9));
            params.put("warmup_tasks_run", warmedUp);
            params.put("jit_cpu_ms_during_measurement", jitMillis);
            params.put("baseline_elapsed_s", Stats.round3(b / 1e9));
            params.put("goal", ">= 20000 tasks/s");
            params.put("goal_met", ours >= 20_000);
            params.put("redis", cluster.persistence());
            params.put("cpu", cpu);
            params.put("redis_commands", redisTime);
            Map<String, Object> machine = new LinkedHashMap<>(Machine.describe());
            machine.put("load_average_before", loadBefore);
            params.put("machine", machine);
        }
        return new BenchResult(name(), "tasks/s", Stats.round1(ours),
                "redis-list LPUSH/BRPOP (lettuce)", Stats.round1(baseline), params);
    }

    /**
     * Submits {@code n} tasks with ids {@code prefix + i}, at most {@code inflight} unanswered, and
     * returns the nanoseconds from the first submit to the SUCCEEDED event of the last task.
     */
    static long runBatch(SchedulerMaster master, String prefix, int n, int inflight) throws InterruptedException {
        return runBatch(master, prefix, n, inflight, i -> "anonymous");
    }

    /** As {@link #runBatch(SchedulerMaster, String, int, int)}, task {@code i} owned by {@code owner.apply(i)}. */
    static long runBatch(SchedulerMaster master, String prefix, int n, int inflight,
                         java.util.function.IntFunction<String> owner) throws InterruptedException {
        Semaphore window = new Semaphore(inflight);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Completions done = new Completions(master, prefix, n)) {
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                window.acquire();
                if (failure.get() != null) {
                    throw new IllegalStateException("submit failed", failure.get());
                }
                TaskSpec spec = TaskSpec.python("noop.py").taskId(taskId(prefix, i)).cpuSlots(1).gpus(0)
                        .owner(owner.apply(i)).build();
                master.submitAsync(spec).whenComplete((handle, error) -> {
                    window.release();
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    }
                });
            }
            window.acquire(inflight);
            if (failure.get() != null) {
                throw new IllegalStateException("submit failed", failure.get());
            }
            long end = done.await(start, 60, TimeUnit.SECONDS);
            if (done.repeatedEvents() != 0) {
                throw new IllegalStateException(done.repeatedEvents() + " tasks reached SUCCEEDED more than once");
            }
            return end - start;
        }
    }

    static String taskId(String prefix, int i) {
        return String.format(Locale.ROOT, "%s%07d", prefix, i);
    }

    /**
     * Checks Redis and the executor after a run: {@code total} tasks SUCCEEDED, none in another
     * state, the queue empty, each task started exactly once, every task of the measured batch
     * among them.
     */
    static void verify(SchedulerMaster master, NoopExecutor executor, long total, String prefix, int measured) {
        List<String> problems = new ArrayList<>();
        long succeeded = master.listTasks(TaskState.SUCCEEDED, 0, 1).getTotal();
        if (succeeded != total) {
            problems.add(succeeded + " tasks SUCCEEDED in Redis, expected " + total);
        }
        for (TaskState s : TaskState.values()) {
            if (s != TaskState.SUCCEEDED) {
                long n = master.listTasks(s, 0, 1).getTotal();
                if (n != 0) {
                    problems.add(n + " tasks " + s);
                }
            }
        }
        if (master.queueDepth() != 0) {
            problems.add("queue depth " + master.queueDepth());
        }
        if (executor.repeatedStarts() != 0) {
            problems.add(executor.repeatedStarts() + " tasks started more than once");
        }
        if (executor.distinctTasks() != total || executor.starts() != total) {
            problems.add("executor started " + executor.distinctTasks() + " distinct tasks (" + executor.starts()
                    + " starts), expected " + total);
        }
        for (int i = 0; i < measured; i++) {
            if (executor.startNanos(taskId(prefix, i)) < 0) {
                problems.add("task " + taskId(prefix, i) + " never started");
                break;
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("the run was not correct: " + String.join("; ", problems));
        }
    }

    /**
     * Moves {@code n} items through a Redis list: one producer LPUSHing asynchronously with at
     * most {@code inflight} unanswered, {@code consumers} threads each taking one item per BRPOP.
     * Returns the nanoseconds from the first LPUSH to the last item taken; checks that exactly
     * {@code n} items were taken and the list is empty.
     */
    static long listBaseline(RedisClient client, String key, int n, int consumers, int inflight, String payload)
            throws InterruptedException {
        AtomicLong taken = new AtomicLong();
        AtomicLong lastNanos = new AtomicLong();
        List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try {
            for (int c = 0; c < consumers; c++) {
                StatefulRedisConnection<String, String> connection = client.connect();
                connections.add(connection);
                Thread t = new Thread(() -> {
                    try {
                        while (taken.get() < n) {
                            KeyValue<String, String> item = connection.sync().brpop(0.2, key);
                            if (item != null && item.hasValue()) {
                                if (taken.incrementAndGet() == n) {
                                    lastNanos.set(System.nanoTime());
                                }
                            }
                        }
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                }, "bench-list-consumer-" + c);
                threads.add(t);
            }
            StatefulRedisConnection<String, String> producer = client.connect();
            connections.add(producer);
            RedisAsyncCommands<String, String> async = producer.async();
            threads.forEach(Thread::start);
            Semaphore window = new Semaphore(inflight);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                window.acquire();
                async.lpush(key, payload).whenComplete((len, error) -> {
                    window.release();
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    }
                });
            }
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(120));
            }
            if (failure.get() != null) {
                throw new IllegalStateException("baseline failed", failure.get());
            }
            if (taken.get() != n || producer.sync().llen(key) != 0) {
                throw new IllegalStateException("baseline moved " + taken.get() + " of " + n + " items, "
                        + producer.sync().llen(key) + " left");
            }
            return lastNanos.get() - start;
        } finally {
            threads.forEach(Thread::interrupt);
            connections.forEach(StatefulRedisConnection::close);
        }
    }
}
