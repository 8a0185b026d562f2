package io.rlscheduler.bench.harness;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time of the JVM's own threads (JIT compilers, garbage collector, VM thread), which the
 * thread MXBean does not list, read from {@code /proc/self/task/<tid>/stat} (Linux; empty
 * elsewhere). Resolution: one clock tick (normally 10 ms).
 */
final class JvmThreads {

    private static final long NANOS_PER_TICK = 10_000_000L; // USER_HZ is 100 on Linux

    private JvmThreads() {
    }

    /** Returns CPU nanoseconds by category: "JIT", "GC", "VM"; live threads only. */
    static Map<String, Long> cpuNanos() {
        Map<String, Long> out = new HashMap<>();
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return out;
        }
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(tasks)) {
            for (Path task : dir) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException e) {
                    continue; // the thread ended meanwhile
                }
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open) {
                    continue;
                }
                String comm = stat.substring(open + 1, close);
                String category = comm.contains("CompilerThre") ? "JIT"
                        : comm.startsWith("GC Thread") || comm.startsWith("G1 ") ? "GC"
                        : comm.startsWith("VM ") ? "VM" : null;
                if (category == null) {
                    continue;
                }
                String[] f = stat.substring(close + 2).split(" ");
                // After "pid (comm) ": state is f[0], so utime (field 14) is f[11], stime f[12].
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                out.merge(category, ticks * NANOS_PER_TICK, Long::sum);
            }
        } catch (IOException | RuntimeException e) {
            return out;
        }
        return out;
    }
}
