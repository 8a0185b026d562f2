package io.rlscheduler.bench.harness;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.testkit.JvmProcess;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A master in a JVM of its own ({@link MasterProcessMain}, started with the testkit's
 * {@link JvmProcess} on this JVM's classpath), measured from outside: its CPU time from
 * {@code /proc/<pid>/stat} (all threads: event loops, Redis client, GC, JIT), by thread group from
 * {@code /proc/<pid>/task}, and its heap from the samples it prints. Its output (those samples and
 * its warnings) goes to {@code master.log} in the given directory.
 */
final class MasterProcess implements AutoCloseable {

    private static final Pattern READY = Pattern.compile("ready port=(\\d+) id=(\\S+) transport=(\\S+) max_heap=(\\d+) gc=(.*)");
    private static final Pattern SAMPLE = Pattern.compile(
            "sample at=(\\d+) used=(\\d+) committed=(\\d+) peak=(\\d+) after_gc=(\\d+) gcs=(\\d+) gc_ms=(\\d+)");
    /** A log line at WARN or ERROR in the bench's logback pattern ("HH:mm:ss.SSS LEVEL logger - message"). */
    private static final Pattern PROBLEM = Pattern.compile("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} (WARN|ERROR)\\b.*");

    /** One heap sample of the master JVM; see {@link MasterProcessMain} for the fields. */
    record Sample(long atMillis, long used, long committed, long peak, long afterGc, long gcs, long gcMillis) {
    }

    private final JvmProcess jvm;
    private final InetSocketAddress address;
    private final String transport;
    private final long maxHeapBytes;
    private final String gc;

    private MasterProcess(JvmProcess jvm, InetSocketAddress address, String transport, long maxHeapBytes, String gc) {
        this.jvm = jvm;
        this.address = address;
        this.transport = transport;
        this.maxHeapBytes = maxHeapBytes;
        this.gc = gc;
    }

    /**
     * Starts the master JVM with {@code -Xmx<maxHeap>} and returns once it leads and listens.
     *
     * @param redisUrl         the Redis URL, as Lettuce reads it
     * @param core             namespace and lease settings (heartbeat interval, liveness lease)
     * @param secret           the shared secret of master and workers
     * @param dir              where its task logs and its output ({@code master.log}) go
     * @param dispatchInterval the period of its backstop dispatch round
     * @param maxHeap          its maximum heap, as {@code -Xmx} takes it ("1g")
     */
    static MasterProcess start(String redisUrl, CoreOptions core, byte[] secret, Path dir, Duration dispatchInterval,
                               String maxHeap) {
        JvmProcess jvm = JvmProcess.builder(MasterProcessMain.class)
                .jvmArgs("-Xmx" + maxHeap)
                .env(MasterProcessMain.SECRET_ENV, HexFormat.of().formatHex(secret))
                .logFile(dir.resolve("master.log"))
                .args("--redis", redisUrl, "--namespace", core.getNamespace(),
                        "--heartbeat-ms", Long.toString(core.getHeartbeatInterval().toMillis()),
                        "--liveness-ms", Long.toString(core.getLivenessLease().toMillis()),
                        "--log-dir", dir.resolve("logs").toString(),
                        "--dispatch-interval-ms", Long.toString(dispatchInterval.toMillis()),
                        "--sample-ms", "1000")
                .start();
        try {
            String line = jvm.awaitOutput(MasterProcessMain.PREFIX + "ready", Duration.ofSeconds(60));
            Matcher m = READY.matcher(line);
            if (!m.find()) {
                throw new IllegalStateException("cannot read the master's ready line: " + line);
            }
            return new MasterProcess(jvm, new InetSocketAddress("127.0.0.1", Integer.parseInt(m.group(1))), m.group(3),
                    Long.parseLong(m.group(4)), m.group(5));
        } catch (RuntimeException e) {
            jvm.close();
            throw e;
        }
    }

    /** Returns the address workers connect to. */
    InetSocketAddress address() {
        return address;
    }

    /** Returns the JVM's process id. */
    long pid() {
        return jvm.pid();
    }

    /** Returns whether the JVM still runs. */
    boolean isAlive() {
        return jvm.isAlive();
    }

    /** Returns the master's socket transport (epoll or nio). */
    String transport() {
        return transport;
    }

    /** Returns the JVM's maximum heap in bytes ({@code Runtime.maxMemory()}). */
    long maxHeapBytes() {
        return maxHeapBytes;
    }

    /** Returns the JVM's garbage collectors. */
    String gc() {
        return gc;
    }

    /** Returns the CPU time the whole JVM has used so far. */
    long cpuNanos() {
        return ProcStat.processCpuNanos(jvm.pid());
    }

    /** Returns the CPU time of the JVM's live threads by thread group (see {@link ProcStat#threadCpuNanos}). */
    Map<String, Long> threadCpuNanos() {
        return ProcStat.threadCpuNanos(jvm.pid());
    }

    /** Returns the JVM's soft limit on open files, or -1 if unknown. */
    long openFilesLimit() {
        return ProcStat.openFilesLimit(Long.toString(jvm.pid()));
    }

    /** Returns every heap sample printed so far, oldest first. */
    List<Sample> samples() {
        List<Sample> out = new ArrayList<>();
        for (String line : jvm.output()) {
            if (!line.startsWith(MasterProcessMain.PREFIX)) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (m.find()) {
                out.add(new Sample(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                        Long.parseLong(m.group(4)), Long.parseLong(m.group(5)), Long.parseLong(m.group(6)),
                        Long.parseLong(m.group(7))));
            }
        }
        return out;
    }

    /** Returns the lines the master logged at WARN or ERROR so far. */
    List<String> problems() {
        return jvm.output().stream().filter(l -> PROBLEM.matcher(l).matches()).toList();
    }

    /** Returns the last {@code n} lines of the JVM's output. */
    List<String> tail(int n) {
        List<String> all = jvm.output();
        return all.subList(Math.max(0, all.size() - n), all.size());
    }

    /** Stops the master (SIGTERM: it shuts down in order), killing it if it has not exited within 10 s. */
    @Override
    public void close() {
        try {
            jvm.terminate();
        } finally {
            jvm.close();
        }
    }
}
