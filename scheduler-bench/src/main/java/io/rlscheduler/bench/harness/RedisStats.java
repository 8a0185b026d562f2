package io.rlscheduler.bench.harness;

import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.internal.LuaScript;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where Redis spends its time during a measurement: the difference of {@code INFO commandstats}
 * between two snapshots (exact calls and microseconds per command), and optionally a sample of
 * per-call durations by Lua script from {@code SLOWLOG} ({@link SlowlogSampler}).
 */
public final class RedisStats {

    private static final List<String> SCRIPTS = List.of("submit", "submit_claim", "register", "heartbeat", "claim", "ack", "finish",
            "cancel", "reap", "workers", "leader");

    private RedisStats() {
    }

    /** One command's totals: calls and microseconds spent executing it. */
    public record Usage(long calls, long usec) {
        Usage minus(Usage other) {
            return other == null ? this : new Usage(calls - other.calls, usec - other.usec);
        }
    }

    /** Returns {@code INFO commandstats} as command to usage. */
    public static Map<String, Usage> commandStats(RedisCommands<String, String> admin) {
        Map<String, Usage> out = new TreeMap<>();
        for (String line : admin.info("commandstats").split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            int colon = line.indexOf(':');
            String command = line.substring("cmdstat_".length(), colon);
            long calls = 0;
            long usec = 0;
            for (String field : line.substring(colon + 1).split(",")) {
                String[] kv = field.split("=", 2);
                if (kv[0].equals("calls")) {
                    calls = Long.parseLong(kv[1]);
                } else if (kv[0].equals("usec")) {
                    usec = Long.parseLong(kv[1]);
                }
            }
            out.put(command, new Usage(calls, usec));
        }
        return out;
    }

    /**
     * Returns what Redis executed between two snapshots, per command with at least one call:
     * calls, calls per unit of work, total ms and µs per call; largest total first.
     *
     * @param units the number of units of work done in between (tasks), for "calls per unit"
     */
    public static Map<String, Object> difference(Map<String, Usage> before, Map<String, Usage> after, long units) {
        List<Map.Entry<String, Usage>> used = new ArrayList<>();
        for (Map.Entry<String, Usage> e : after.entrySet()) {
            Usage d = e.getValue().minus(before.get(e.getKey()));
            if (d.calls() > 0) {
                used.add(Map.entry(e.getKey(), d));
            }
        }
        used.sort((a, b) -> Long.compare(b.getValue().usec(), a.getValue().usec()));
        Map<String, Object> out = new LinkedHashMap<>();
        long totalUsec = 0;
        long totalCalls = 0;
        for (Map.Entry<String, Usage> e : used) {
            Usage d = e.getValue();
            totalUsec += d.usec();
            totalCalls += d.calls();
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("calls", d.calls());
            row.put("calls_per_task", Stats.round3((double) d.calls() / units));
            row.put("total_ms", Stats.round1(d.usec() / 1000.0));
            row.put("usec_per_call", Stats.round1((double) d.usec() / d.calls()));
            out.put(e.getKey(), row);
        }
        Map<String, Object> total = new LinkedHashMap<>();
        total.put("calls", totalCalls);
        total.put("calls_per_task", Stats.round3((double) totalCalls / units));
        total.put("total_ms", Stats.round1(totalUsec / 1000.0));
        total.put("usec_per_task", Stats.round1((double) totalUsec / units));
        out.put("total", total);
        return out;
    }

    /** Prints a difference made by {@link #difference}. */
    @SuppressWarnings("unchecked")
    public static void print(String title, Map<String, Object> difference) {
        System.out.println("# " + title);
        System.out.printf(Locale.ROOT, "#   %-14s %10s %10s %10s %10s%n", "command", "calls", "per task", "total ms", "us/call");
        difference.forEach((command, value) -> {
            Map<String, Object> row = (Map<String, Object>) value;
            System.out.printf(Locale.ROOT, "#   %-14s %10s %10s %10s %10s%n", command, row.get("calls"),
                    row.get("calls_per_task"), row.get("total_ms"), row.getOrDefault("usec_per_call", "-"));
        });
    }

    /**
     * Samples per-call durations from Redis's SLOWLOG, logging every command (threshold 0) and
     * draining the log twice a second, so that the time of each Lua script can be told apart
     * (commandstats lumps them all under {@code evalsha}). Logging every command costs Redis
     * time itself: use it for a diagnostic run, not for the figures. Restores the slowlog
     * settings when stopped.
     */
    public static final class SlowlogSampler implements AutoCloseable {
        private static final int MAX_LEN = 5000;
        private final io.lettuce.core.api.StatefulRedisConnection<String, String> connection;
        private final RedisCommands<String, String> admin;
        private final String oldThreshold;
        private final String oldMaxLen;
        private final Map<String, String> scriptBySha = new HashMap<>();
        private final Map<String, List<Long>> durations = new TreeMap<>();
        private final Thread thread;
        private volatile boolean running = true;

        /** Starts sampling through {@code connection}, which it uses alone and closes when stopped. */
        public SlowlogSampler(io.lettuce.core.api.StatefulRedisConnection<String, String> connection) {
            this.connection = connection;
            this.admin = connection.sync();
            for (String name : SCRIPTS) {
                scriptBySha.put(LuaScript.load(name).getSha(), name);
            }
            oldThreshold = admin.configGet("slowlog-log-slower-than").get("slowlog-log-slower-than");
            oldMaxLen = admin.configGet("slowlog-max-len").get("slowlog-max-len");
            admin.configSet("slowlog-max-len", Integer.toString(MAX_LEN));
            admin.slowlogReset();
            admin.configSet("slowlog-log-slower-than", "0");
            thread = new Thread(this::loop, "bench-slowlog");
            thread.setDaemon(true);
            thread.start();
        }

        private void loop() {
            while (running) {
                try {
                    Thread.sleep(500); // sampling period
                } catch (InterruptedException e) {
                    return;
                }
                drain();
            }
        }

        private synchronized void drain() {
            List<Object> entries = admin.slowlogGet(MAX_LEN);
            admin.slowlogReset();
            for (Object o : entries) {
                List<?> entry = (List<?>) o;
                long micros = ((Number) entry.get(2)).longValue();
                List<?> args = (List<?>) entry.get(3);
                String command = String.valueOf(args.get(0)).toLowerCase(Locale.ROOT);
                if (command.equals("slowlog") || command.equals("config")) {
                    continue;
                }
                if (command.equals("evalsha") && args.size() > 1) {
                    command = "evalsha:" + scriptBySha.getOrDefault(String.valueOf(args.get(1)), "unknown");
                }
                durations.computeIfAbsent(command, k -> new ArrayList<>()).add(micros);
            }
        }

        /** Stops sampling, restores the settings, and returns per command: samples, mean, p50, p99 µs. */
        public Map<String, Object> stop() {
            running = false;
            thread.interrupt();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            drain();
            close();
            Map<String, Object> out = new LinkedHashMap<>();
            durations.entrySet().stream()
                    .sorted((a, b) -> Long.compare(sum(b.getValue()), sum(a.getValue())))
                    .forEach(e -> {
                        long[] v = e.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("samples", v.length);
                        row.put("mean_us", Stats.round1((double) sum(e.getValue()) / v.length));
                        row.put("p50_us", v[(v.length - 1) / 2]);
                        row.put("p99_us", v[(int) Math.min(v.length - 1, Math.ceil(0.99 * v.length) - 1)]);
                        out.put(e.getKey(), row);
                    });
            return out;
        }

        private static long sum(List<Long> values) {
            long s = 0;
            for (long v : values) {
                s += v;
            }
            return s;
        }

        @Override
        public synchronized void close() {
            if (!connection.isOpen()) {
                return;
            }
            admin.configSet("slowlog-log-slower-than", oldThreshold);
            admin.configSet("slowlog-max-len", oldMaxLen);
            admin.slowlogReset();
            connection.close();
        }
    }
}
