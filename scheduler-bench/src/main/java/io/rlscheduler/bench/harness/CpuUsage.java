package io.rlscheduler.bench.harness;

import io.lettuce.core.api.sync.RedisCommands;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time spent during a measurement: by this JVM (master, workers, harness and their Redis
 * clients), split by thread group, and by the redis-server ({@code INFO cpu}). Tells which side
 * bounds a figure when the machine's cores are the limit. Thread groups are thread names with
 * their numbers removed; threads that ended during the measurement are counted only in the JVM
 * total ("other: GC, JIT, ended threads").
 */
final class CpuUsage {

    private final long processNanos;
    private final double redisSeconds;
    private final Map<Long, long[]> threads; // id -> cpu nanos
    private final Map<Long, String> names;
    private final long wallNanos;
    private final Map<String, Long> jvmInternal;

    private CpuUsage(long processNanos, double redisSeconds, Map<Long, long[]> threads, Map<Long, String> names) {
        this.jvmInternal = JvmThreads.cpuNanos();
        this.processNanos = processNanos;
        this.redisSeconds = redisSeconds;
        this.threads = threads;
        this.names = names;
        this.wallNanos = System.nanoTime();
    }

    /** Takes a snapshot; {@code admin} reads the Redis server's figures. */
    static CpuUsage snapshot(RedisCommands<String, String> admin) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<Long, long[]> threads = new HashMap<>();
        Map<Long, String> names = new HashMap<>();
        for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long cpu = mx.getThreadCpuTime(info.getThreadId());
            if (cpu >= 0) {
                threads.put(info.getThreadId(), new long[] {cpu});
                names.put(info.getThreadId(), group(info.getThreadName()));
            }
        }
        long process = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        return new CpuUsage(process, redisCpuSeconds(admin), threads, names);
    }

    private static String group(String threadName) {
        return threadName.replaceAll("\\{[^}]*\\}", "{ns}").replaceAll("[0-9]+", "N");
    }

    /** Returns redis-server's CPU seconds so far, user + system ({@code INFO cpu}). */
    static double redisCpuSeconds(RedisCommands<String, String> admin) {
        double total = 0;
        for (String line : admin.info("cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                total += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return total;
    }

    /**
     * Returns the CPU used between {@code before} and this snapshot: microseconds per unit of work
     * (task) for the JVM, Redis and each JVM thread group, and each as a share of one core.
     */
    Map<String, Object> since(CpuUsage before, long units) {
        double wall = (wallNanos - before.wallNanos) / 1e9;
        Map<String, Object> out = new LinkedHashMap<>();
        long jvm = processNanos - before.processNanos;
        double redis = redisSeconds - before.redisSeconds;
        out.put("wall_s", Stats.round3(wall));
        out.put("jvm_cores", Stats.round3(jvm / 1e9 / wall));
        out.put("redis_cores", Stats.round3(redis / wall));
        out.put("jvm_us_per_task", Stats.round1(jvm / 1e3 / units));
        out.put("redis_us_per_task", Stats.round1(redis * 1e6 / units));
        Map<String, Long> groups = new TreeMap<>();
        long attributed = 0;
        for (Map.Entry<Long, long[]> e : threads.entrySet()) {
            long[] old = before.threads.get(e.getKey());
            long used = e.getValue()[0] - (old == null ? 0 : old[0]);
            attributed += used;
            groups.merge(names.get(e.getKey()), used, Long::sum);
        }
        for (Map.Entry<String, Long> e : jvmInternal.entrySet()) {
            long used = e.getValue() - before.jvmInternal.getOrDefault(e.getKey(), 0L);
            attributed += used;
            groups.put("(jvm) " + e.getKey(), used);
        }
        groups.put("(other: ended threads, rounding)", Math.max(0, jvm - attributed));
        Map<String, Object> byGroup = new LinkedHashMap<>();
        groups.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
                // Groups of at least 0.5 µs per unit, or 3% of the JVM's CPU (per-line figures are small).
                .filter(e -> e.getValue() / 1e3 / units >= 0.5 || e.getValue() >= jvm * 0.03)
                .forEach(e -> byGroup.put(e.getKey(), Stats.round3(e.getValue() / 1e3 / units)));
        out.put("jvm_us_per_task_by_thread", byGroup);
        return out;
    }
}
