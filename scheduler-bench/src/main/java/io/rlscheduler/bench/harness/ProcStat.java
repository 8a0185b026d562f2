package io.rlscheduler.bench.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time and limits of a process, read from Linux's {@code /proc}: for a process other than this
 * JVM (the master of {@link Heartbeats} in its own JVM), whose CPU the thread MXBean cannot see.
 * Resolution: one clock tick (normally 10 ms).
 */
final class ProcStat {

    /** USER_HZ, which is 100 on Linux. */
    static final long NANOS_PER_TICK = 10_000_000L;

    private ProcStat() {
    }

    /** One {@code stat} file: the command name (thread name, at most 15 characters) and user + system CPU time. */
    record Entry(String comm, long cpuNanos) {
    }

    /**
     * Parses a {@code /proc/<pid>/stat} or {@code /proc/<pid>/task/<tid>/stat} line.
     *
     * @throws IllegalArgumentException if it is not one
     */
    static Entry parse(String stat) {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open) {
            throw new IllegalArgumentException("not a /proc stat line: " + stat);
        }
        String[] f = stat.substring(close + 2).split(" ");
        // After "pid (comm) ": state is f[0], so utime (field 14) is f[11], stime f[12].
        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        return new Entry(stat.substring(open + 1, close), ticks * NANOS_PER_TICK);
    }

    /** Returns the CPU time (user + system, all threads, ended ones included) of process {@code pid}. */
    static long processCpuNanos(long pid) {
        try {
            return parse(Files.readString(Path.of("/proc", Long.toString(pid), "stat"))).cpuNanos();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the CPU time of process " + pid + " from /proc", e);
        }
    }

    /**
     * Returns the CPU time of the live threads of process {@code pid} by thread group: the thread
     * name with its digits replaced by "N" ("rls-master-io-N-N", "lettuce-epollEventLoop-N-N" as the
     * kernel truncates it, "C2 CompilerThreN", "GC Thread#N").
     */
    static Map<String, Long> threadCpuNanos(long pid) {
        Map<String, Long> out = new TreeMap<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : dir) {
                try {
                    Entry e = parse(Files.readString(task.resolve("stat")));
                    out.merge(e.comm().replaceAll("[0-9]+", "N"), e.cpuNanos(), Long::sum);
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    /**
     * Returns the soft limit on open files of process {@code pid} ("self" for this JVM) from
     * {@code /proc/<pid>/limits}, or -1 if it cannot be read; {@link Long#MAX_VALUE} for "unlimited".
     */
    static long openFilesLimit(String pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", pid, "limits"))) {
                if (line.startsWith("Max open files")) {
                    String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
