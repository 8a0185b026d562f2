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
                ProcStat.Entry entry;
                try {
                    entry = ProcStat.parse(stat);
                } catch (RuntimeException e) {
                    continue;
                }
                String comm = entry.comm();
                String category = comm.contains("CompilerThre") ? "JIT"
                        : comm.startsWith("GC Thread") || comm.startsWith("G1 ") ? "GC"
                        : comm.startsWith("VM ") ? "VM" : null;
                if (category == null) {
                    continue;
                }
                out.merge(category, entry.cpuNanos(), Long::sum);
            }
        } catch (IOException | RuntimeException e) {
            return out;
        }
        return out;
    }
}
