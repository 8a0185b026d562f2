package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.worker.PythonTaskExecutor;
import io.rlscheduler.worker.WorkerOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;

/**
 * {@code log-stream}: how fast one task's output reaches the master's log file and a live
 * follower. One master, one in-process worker running tasks with the real
 * {@link PythonTaskExecutor} (launcher + python3 process group, output read from pipes), one
 * Redis ({@link LocalCluster} with one worker of one slot).
 *
 * <p>The task is {@code print_lines.py} (a resource of this package, written into a temporary
 * script root): {@code lines} numbered lines of {@code lineLength} characters, printed as fast as
 * python can, through a 64 KiB block-buffered writer on stdout ({@code stdout=buffered}) or one
 * {@code print()} per line as an unmodified script does under the worker's {@code python3 -u}
 * ({@code stdout=print}). The script notes the wall-clock time just before its first line and
 * just after its last one was flushed, and its own CPU time, in a small JSON file.
 *
 * <p>A follower ({@link TaskHandle#followLogs}) is attached before the task is submitted. The
 * harness polls the size of the master's {@code <taskId>.log} every millisecond and afterwards
 * finds when it first reached the end of the last line; the follower notes when it got the last
 * line. Rates: {@code lines} / (that time − the script's first-line time), for the file and for
 * the follower. The value is the slower of the two, both in params (the follower is fed after the
 * write, so they differ by about the polling's millisecond). Python's {@code time.time()} and
 * Java's {@link Instant} read the same wall clock.
 *
 * <p>Zero lines lost: the log file must be exactly the header, one attempt marker, lines 1..N
 * each exactly as printed, and {@code ##RLS_END state=SUCCEEDED complete=true last=N}; the
 * follower must get lines 1..N of attempt 1 with sequence numbers 1..N, each text as printed,
 * then one END_OF_STREAM (SUCCEEDED, complete) and nothing after it. Otherwise the run fails.
 *
 * <p>Baseline, same run: the same script started by the harness with the same command
 * ({@code python3 -u print_lines.py ...}, no launcher) and its stdout redirected to a file:
 * {@code lines} / (its own last-line time − first-line time). Warm-up tasks of
 * {@code warmupLines} run first through the scheduler (checked the same way, not counted), until
 * the JIT compiler used under a tenth of a core during one (at most {@link Jit#MAX_WARMUP_ROUNDS}):
 * the figure is the scheduler's steady state, not its compilation.
 *
 * <p>Measured in {@code rounds} (3) rounds, each the baseline then the measured task: the value
 * is the median of the rounds' values, the baseline the median of theirs, and every round's
 * figures are in params. One run of each swung by up to 1.8× on the 2-core machine (the baseline
 * between 1.56 and 2.83 million lines/s within minutes), so a ratio of two single runs told
 * little. The other figures in params (times, CPU, the follower's counts) are the median round's.
 */
public final class LogStream implements EndToEndBenchmark {

    static final String SCRIPT = "print_lines.py";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
    /** Without progress of the follower or the file for this long, a run fails. */
    private static final long STALL_SECONDS = 60;

    @Override
    public String name() {
        return "log-stream";
    }

    @Override
    public String description() {
        return "one python task printing N lines: lines/s into the master's log file and to a live follower;"
                + " baseline the same script writing to a file";
    }

    @Override
    public List<Param> parameters() {
        return List.of(
                new Param("lines", "1000000", "lines the measured task prints"),
                new Param("lineLength", "80", "characters per line, without the LF (at least 12)"),
                new Param("warmupLines", "200000", "lines of each warm-up task run first through the scheduler (0: none);"
                        + " rounds repeat, up to " + Jit.MAX_WARMUP_ROUNDS + ", until the JIT uses under "
                        + (int) (Jit.SETTLED_SHARE * 100) + "% of a core"),
                new Param("stdout", "buffered",
                        "buffered: 64 KiB block-buffered writes; print: one print() per line under python3 -u"),
                new Param("rounds", "3", "measured rounds, each the baseline then the measured task; medians are reported"),
                new Param("aof", "off", "persistence of the started Redis: off, everysec or always"),
                new Param("workDir", System.getProperty("java.io.tmpdir"),
                        "where scripts, the master's logs, run directories and the baseline's file go (deleted after)"),
                LocalCluster.TLS);
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        int lines = p.getInt("lines", 1);
        int length = p.getInt("lineLength", 12);
        int warmup = p.getInt("warmupLines", 0);
        int rounds = p.getInt("rounds", 1);
        String mode = p.get("stdout");
        if (!mode.equals("buffered") && !mode.equals("print")) {
            throw new IllegalArgumentException("log-stream: stdout must be buffered or print, was '" + mode + "'");
        }
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        Path dir = Files.createTempDirectory(Path.of(p.get("workDir")), "rls-bench-log-stream-");
        try {
            Path scripts = Files.createDirectories(dir.resolve("scripts"));
            try (InputStream in = LogStream.class.getResourceAsStream(SCRIPT)) {
                if (in == null) {
                    throw new IllegalStateException("resource " + SCRIPT + " missing from the jar");
                }
                Files.copy(in, scripts.resolve(SCRIPT));
            }
            PythonTaskExecutor executor = PythonTaskExecutor.builder().scriptRoots(List.of(scripts))
                    .stateDirectory(dir.resolve("state")).gracePeriod(Duration.ofSeconds(1)).build();
            LineFormat format = new LineFormat(length);
            Run measured;
            Baseline baseline;
            Map<String, Object> cpu;
            try (LocalCluster cluster = LocalCluster.start(
                    new LocalCluster.Settings(1, 1, executor, io.rlscheduler.master.MasterOptions.DEFAULT_DISPATCH_BATCH, p.get("aof"), dir,
                            p.getBoolean(LocalCluster.TLS.name())))) {
                System.out.println("# " + name() + ": Redis " + cluster.persistence() + "; 1 worker, python "
                        + executor.getPython() + ", stdout " + mode);
                int warmupRounds = 0;
                for (int round = 1; warmup > 0 && round <= Jit.MAX_WARMUP_ROUNDS; round++) {
                    long jit = Jit.cpuMillis();
                    long t0 = System.nanoTime();
                    Run w = runTask(cluster, "ls-warmup-" + round, warmup, format, mode, dir);
                    double jitShare = (Jit.cpuMillis() - jit) / ((System.nanoTime() - t0) / 1e6);
                    warmupRounds = round;
                    System.out.printf(Locale.ROOT, "# warm-up round %d: %,d lines, file %,.0f lines/s, follower %,.0f"
                            + " lines/s, JIT CPU %.0f%% of a core%n", round, warmup, w.fileRate(), w.followerRate(),
                            100 * jitShare);
                    if (jitShare < Jit.SETTLED_SHARE) {
                        break;
                    }
                }
                params.put("warmup_rounds", warmupRounds);
                params.put("machine_load_average_before", Machine.loadAverage());
                List<Baseline> baselines = new ArrayList<>();
                List<Run> runs = new ArrayList<>();
                List<Map<String, Object>> cpus = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    Baseline b = baseline(executor.getPython(), scripts.resolve(SCRIPT), lines, format, mode, dir);
                    baselines.add(b);
                    CpuUsage before = CpuUsage.snapshot(cluster.admin());
                    Run m = runTask(cluster, "ls-measured-" + round, lines, format, mode, dir);
                    runs.add(m);
                    cpus.add(perLine(m.cpuAtEnd().since(before, lines)));
                    System.out.printf(Locale.ROOT, "# round %d: baseline (python3 straight to a file) %,.0f lines/s;"
                                    + " master's file %,.0f lines/s, follower %,.0f lines/s%n", round, b.rate(),
                            m.fileRate(), m.followerRate());
                }
                params.put("rounds_baseline_lines_per_s", baselines.stream().map(b -> Stats.round1(b.rate())).toList());
                params.put("rounds_file_lines_per_s", runs.stream().map(r -> Stats.round1(r.fileRate())).toList());
                params.put("rounds_follower_lines_per_s", runs.stream().map(r -> Stats.round1(r.followerRate())).toList());
                baseline = baselines.get(medianIndex(baselines, Baseline::rate));
                int median = medianIndex(runs, LogStream::valueOf);
                measured = runs.get(median);
                cpu = cpus.get(median);
            }
            double value = valueOf(measured);
            System.out.printf(Locale.ROOT, "# measured (the median round): %,d lines; master's file %,.0f lines/s, follower %,.0f lines/s;"
                            + " the script wrote them in %.3f s%n", lines, measured.fileRate(), measured.followerRate(),
                    measured.script().seconds());
            System.out.println("# CPU during the measured task (JVM: master, worker, harness; per line): " + cpu);

            double bytes = (double) lines * (length + 1);
            params.put("value_is", "the slower of file and follower (" + (value == measured.followerRate() ? "follower" : "file") + ")");
            params.put("file_lines_per_s", Stats.round1(measured.fileRate()));
            params.put("follower_lines_per_s", Stats.round1(measured.followerRate()));
            params.put("baseline_lines_per_s", Stats.round1(baseline.rate()));
            params.put("file_mb_per_s", Stats.round3(bytes / measured.fileSeconds() / 1e6));
            params.put("follower_mb_per_s", Stats.round3(bytes / measured.followerSeconds() / 1e6));
            params.put("baseline_mb_per_s", Stats.round3(bytes / baseline.seconds() / 1e6));
            params.put("file_ratio", Stats.round3(measured.fileRate() / baseline.rate()));
            params.put("ratio_is", "the median round's value (the slower of file and follower) / the median of the rounds'"
                    + " baselines; file_ratio: that round's file rate / the same baseline");
            params.put("first_line_in_file_ms", Stats.round1(measured.firstLineDelayMicros() / 1e3));
            params.put("last_line_in_file_s", Stats.round3(measured.fileSeconds()));
            params.put("last_line_at_follower_s", Stats.round3(measured.followerSeconds()));
            params.put("script_write_s", Stats.round3(measured.script().seconds()));
            params.put("script_cpu_s", Stats.round3(measured.script().cpuSeconds()));
            params.put("baseline_write_s", Stats.round3(baseline.seconds()));
            params.put("baseline_script_cpu_s", Stats.round3(baseline.stamps().cpuSeconds()));
            params.put("follower_lines_live", measured.follower().live());
            params.put("follower_lines_read_back_from_file", measured.follower().readBack());
            params.put("checked", "file: header, 1 attempt marker, lines 1.." + lines + " exactly as printed, "
                    + "RLS_END SUCCEEDED complete; follower: lines 1.." + lines + " in order, each once, then one"
                    + " END_OF_STREAM (SUCCEEDED, complete); baseline file: every line");
            params.put("log_path", logPath());
            params.put("cpu", cpu);
            params.put("goal", ">= 0.5 x baseline, zero lines lost");
            params.put("goal_met", value >= 0.5 * baseline.rate());
            Map<String, Object> machine = new LinkedHashMap<>(Machine.describe());
            machine.put("load_average_before", params.remove("machine_load_average_before"));
            params.put("machine", machine);
            return new BenchResult(name(), "lines/s", Stats.round1(value),
                    "python3 stdout redirected to a file", Stats.round1(baseline.rate()), params);
        } finally {
            LocalCluster.deleteTree(dir);
        }
    }

    /** How lines travel and in what batches, with the settings of this run (all defaults). */
    private static Map<String, Object> logPath() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("worker_pipe_reader", "one thread per stream (stdout, stderr) reads 64 KiB at a time; the lines a"
                + " read completes become one LineBlock (LineSplitter), numbered and kept as one LogChunk in the"
                + " attempt's LogBuffer until acknowledged");
        m.put("worker_log_flush_interval_ms", WorkerOptions.DEFAULT_LOG_FLUSH_INTERVAL.toMillis());
        m.put("worker_log_batch_lines", WorkerOptions.DEFAULT_LOG_BATCH_LINES);
        m.put("worker_log_batch_max_bytes", 512 * 1024);
        m.put("worker_max_buffered_lines", WorkerOptions.DEFAULT_MAX_BUFFERED_LINES);
        m.put("worker_flush", "on the worker's event loop, batches of whole chunks are written while the channel"
                + " is writable: at once when a full batch waits or the socket drained, else every flush interval");
        TaskLogManager.Limits limits = TaskLogManager.Limits.defaults();
        m.put("master_log_io_threads", limits.ioThreads());
        m.put("master_follower_queue_lines", limits.followerQueueCapacity());
        m.put("master", "each LogBatch is written to the file with one pass over its chunks' bytes and one write()"
                + " on the task's log I/O thread, then acknowledged; live followers get the written bytes, one block"
                + " per chunk, made into records on their own delivery thread");
        return m;
    }

    // ---- one task through the scheduler ---------------------------------------------------------

    /**
     * One task's run. {@code cpuAtEnd} is taken when the follower got its END_OF_STREAM and the
     * task its result, before the harness reads the file back to check it (which is not the
     * scheduler's work).
     */
    private record Run(Stamps script, long firstLineDelayMicros, long lastInFileMicros, FollowerCheck follower,
                       CpuUsage cpuAtEnd) {
        double fileSeconds() {
            return (lastInFileMicros - script.startMicros()) / 1e6;
        }

        double followerSeconds() {
            return (follower.lastMicros() - script.startMicros()) / 1e6;
        }

        double fileRate() {
            return script.lines() / fileSeconds();
        }

        double followerRate() {
            return script.lines() / followerSeconds();
        }
    }

    private Run runTask(LocalCluster cluster, String taskId, int lines, LineFormat format, String mode, Path dir)
            throws Exception {
        SchedulerMaster master = cluster.master();
        Path stamps = dir.resolve(taskId + "-stamps.json");
        Path logFile = cluster.logDirectory().resolve(taskId + ".log");
        FollowerCheck follower = new FollowerCheck(lines, format);
        TaskHandle task = master.task(taskId);
        LogFollow follow = task.followLogs(follower);
        TaskResult result;
        List<long[]> sizes;
        CpuUsage cpuAtEnd;
        try (SizeWatch watch = new SizeWatch(logFile)) {
            master.submit(TaskSpec.python(SCRIPT).taskId(taskId).param("lines", lines).param("length", format.length())
                    .param("stamps", stamps.toString()).param("mode", mode).cpuSlots(1).gpus(0).build());
            awaitEnd(follow, follower, watch, taskId);
            result = task.result().get(STALL_SECONDS, TimeUnit.SECONDS);
            cpuAtEnd = CpuUsage.snapshot(cluster.admin());
            sizes = watch.stop();
        } finally {
            follow.close();
        }
        if (!result.isSucceeded()) {
            throw new IllegalStateException("task " + taskId + " ended " + result.getState() + ": " + result.getError());
        }
        FileCheck file = checkFile(logFile, lines, format);
        String problem = follower.problem();
        if (problem != null) {
            throw new IllegalStateException("task " + taskId + ": the follower's stream was not exact: " + problem);
        }
        Stamps script = Stamps.read(stamps);
        long first = firstAtLeast(sizes, file.firstLineEnd(), logFile);
        long last = firstAtLeast(sizes, file.lastLineEnd(), logFile);
        return new Run(script, first - script.startMicros(), last, follower, cpuAtEnd);
    }

    /** Waits for the follower's END_OF_STREAM; fails if neither it nor the file moves for a while. */
    private static void awaitEnd(LogFollow follow, FollowerCheck follower, SizeWatch watch, String taskId)
            throws Exception {
        long lastProgress = System.nanoTime();
        long seen = -1;
        while (true) {
            try {
                follow.whenEnded().get(1, TimeUnit.SECONDS);
                return;
            } catch (TimeoutException notYet) {
                long progress = follower.delivered() + watch.size();
                if (progress != seen) {
                    seen = progress;
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                    throw new IllegalStateException("task " + taskId + ": no progress for " + STALL_SECONDS
                            + " s: follower at line " + follower.delivered() + ", log file " + watch.size() + " bytes");
                }
            }
        }
    }

    /** Returns the wall-clock time (µs) of the first size sample at or beyond {@code offset}. */
    private static long firstAtLeast(List<long[]> sizes, long offset, Path file) {
        for (long[] s : sizes) {
            if (s[1] >= offset) {
                return s[0];
            }
        }
        throw new IllegalStateException("the size watch of " + file + " never saw " + offset + " bytes");
    }

    /** A run's value: the slower of the file and the follower. */
    private static double valueOf(Run run) {
        return Math.min(run.fileRate(), run.followerRate());
    }

    /** The index of the median element by {@code key} (for an even count, the lower of the two middle ones). */
    private static <T> int medianIndex(List<T> items, ToDoubleFunction<T> key) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble(i -> key.applyAsDouble(items.get(i))));
        return order.get((order.size() - 1) / 2);
    }

    // ---- the baseline -----------------------------------------------------------------------

    private record Baseline(Stamps stamps) {
        double seconds() {
            return stamps.seconds();
        }

        double rate() {
            return stamps.lines() / stamps.seconds();
        }
    }

    private static Baseline baseline(String python, Path script, int lines, LineFormat format, String mode, Path dir)
            throws Exception {
        Path out = dir.resolve("baseline-out.txt");
        Path err = dir.resolve("baseline-err.txt");
        Path stamps = dir.resolve("baseline-stamps.json");
        // The command the launcher runs the script with, minus the launcher.
        Process process = new ProcessBuilder(python, "-u", script.toString(), "--lines", Integer.toString(lines),
                "--length", Integer.toString(format.length()), "--stamps", stamps.toString(), "--mode", mode)
                .directory(dir.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        process.getOutputStream().close();
        if (!process.waitFor(STALL_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the baseline script did not finish within " + STALL_SECONDS + " s");
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("the baseline script exited with " + process.exitValue() + ": "
                    + Files.readString(err));
        }
        try (BufferedReader reader = Files.newBufferedReader(out, StandardCharsets.US_ASCII)) {
            long i = 0;
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                i++;
                if (!format.matches(i, line)) {
                    throw new IllegalStateException("baseline output line " + i + " is not as expected: " + line);
                }
            }
            if (i != lines) {
                throw new IllegalStateException("baseline output has " + i + " lines, expected " + lines);
            }
        }
        Baseline b = new Baseline(Stamps.read(stamps));
        Files.delete(out);
        return b;
    }

    // ---- checks ---------------------------------------------------------------------------------

    /** Byte offsets just after the first and after the last output line. */
    private record FileCheck(long firstLineEnd, long lastLineEnd) {
    }

    /**
     * Checks the master's log file line by line: header, one attempt marker for attempt 1, lines
     * 1..N as printed, the end marker of a complete SUCCEEDED attempt, nothing else.
     */
    private static FileCheck checkFile(Path file, int lines, LineFormat format) throws IOException {
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
            long offset = 0;
            String header = reader.readLine();
            if (header == null || !header.startsWith("TRACE_ID:")) {
                throw new IllegalStateException(file + ": first line is not the TRACE_ID header: " + header);
            }
            offset += header.length() + 1;
            String marker = reader.readLine();
            if (marker == null || !marker.startsWith("##RLS_ATTEMPT attempt=1 epoch=")) {
                throw new IllegalStateException(file + ": second line is not the attempt-1 marker: " + marker);
            }
            offset += marker.length() + 1;
            long firstEnd = -1;
            for (long i = 1; i <= lines; i++) {
                String line = reader.readLine();
                if (line == null || !format.matches(i, line)) {
                    throw new IllegalStateException(file + ": output line " + i + " is "
                            + (line == null ? "missing" : "not as printed: '" + line + "'"));
                }
                offset += line.length() + 1;
                if (i == 1) {
                    firstEnd = offset;
                }
            }
            long lastEnd = offset;
            String end = reader.readLine();
            String expectedEnd = "##RLS_END state=SUCCEEDED complete=true last=" + lines;
            if (!expectedEnd.equals(end)) {
                throw new IllegalStateException(file + ": after line " + lines + " expected '" + expectedEnd + "', found '"
                        + end + "'");
            }
            String extra = reader.readLine();
            if (extra != null) {
                throw new IllegalStateException(file + ": unexpected line after the end marker: " + extra);
            }
            return new FileCheck(firstEnd, lastEnd);
        }
    }

    /**
     * The text of line i: the 10-digit number, a space, then {@code length - 11} characters of the
     * alphabet rotated by i mod 36; as {@code print_lines.py} writes it. Checked without allocating.
     */
    static final class LineFormat {
        private final int length;
        private final String[] tails;

        LineFormat(int length) {
            if (length < 12) {
                throw new IllegalArgumentException("lineLength must be at least 12, was " + length);
            }
            this.length = length;
            String doubled = ALPHABET.repeat((length - 11) / ALPHABET.length() + 2);
            this.tails = new String[36];
            for (int r = 0; r < 36; r++) {
                tails[r] = doubled.substring(r, r + length - 11);
            }
        }

        int length() {
            return length;
        }

        boolean matches(long i, String text) {
            if (text.length() != length || text.charAt(10) != ' ') {
                return false;
            }
            long rest = i;
            for (int k = 9; k >= 0; k--) {
                if (text.charAt(k) != (char) ('0' + rest % 10)) {
                    return false;
                }
                rest /= 10;
            }
            // substring + equals: both vectorised by the JIT, where regionMatches compares a
            // character at a time (the harness's check is not the scheduler's work; kept cheap).
            return rest == 0 && text.substring(11).equals(tails[(int) (i % 36)]);
        }
    }

    /**
     * The follower's consumer: checks every record as it arrives (attempt 1, sequence numbers
     * 1..N, text as printed, one END_OF_STREAM that is SUCCEEDED and complete, nothing after it)
     * and notes when the last line came. Called by one delivery thread at a time; the fields the
     * harness reads while it runs are volatile, the rest is read after the END_OF_STREAM.
     */
    static final class FollowerCheck implements Consumer<LogRecord> {
        private final long lines;
        private final LineFormat format;
        private volatile long delivered;
        private volatile long lastMicros;
        private long live;
        private long readBack;
        private LogRecord end;
        private volatile String problem;

        FollowerCheck(long lines, LineFormat format) {
            this.lines = lines;
            this.format = format;
        }

        @Override
        public void accept(LogRecord r) {
            if (end != null) {
                fail("a record after END_OF_STREAM: " + r);
                return;
            }
            if (r.isEndOfStream()) {
                end = r;
                if (r.getFinalState() != TaskState.SUCCEEDED || !r.isComplete()) {
                    fail("END_OF_STREAM is not SUCCEEDED and complete: " + r);
                } else if (delivered != lines) {
                    fail("END_OF_STREAM after " + delivered + " of " + lines + " lines");
                }
                return;
            }
            long next = delivered + 1;
            if (r.getAttempt() != 1 || r.getSequence() != next || next > lines || !format.matches(next, r.getText())) {
                fail("expected line " + next + " of attempt 1, got " + r);
                return;
            }
            if (r.getStream() == LogRecord.Stream.UNKNOWN) {
                readBack++; // fell behind: read back from the file
            } else {
                live++;
            }
            if (next == lines) {
                lastMicros = nowMicros();
            }
            delivered = next;
        }

        private void fail(String what) {
            if (problem == null) {
                problem = what;
            }
        }

        long delivered() {
            return delivered;
        }

        long lastMicros() {
            return lastMicros;
        }

        long live() {
            return live;
        }

        long readBack() {
            return readBack;
        }

        String problem() {
            if (problem == null && end == null) {
                return "no END_OF_STREAM";
            }
            return problem;
        }
    }

    /** The script's own figures: wall-clock start and end of its writes (µs), CPU seconds. */
    private record Stamps(long lines, long startMicros, long endMicros, double cpuSeconds) {
        static Stamps read(Path file) throws IOException {
            JsonNode n = JSON.readTree(file.toFile());
            return new Stamps(n.path("lines").asLong(), Math.round(n.path("start").asDouble() * 1e6),
                    Math.round(n.path("end").asDouble() * 1e6),
                    n.path("cpu_user").asDouble() + n.path("cpu_sys").asDouble());
        }

        double seconds() {
            return (endMicros - startMicros) / 1e6;
        }
    }

    /**
     * Polls a file's size every millisecond on a thread of its own and keeps (wall-clock µs, size)
     * at every change: when the file reached an offset is known to within a poll.
     */
    private static final class SizeWatch implements AutoCloseable {
        private final Path file;
        private final List<long[]> samples = new ArrayList<>();
        private final Thread thread;
        private volatile boolean stop;
        private volatile long size = -1;

        SizeWatch(Path file) {
            this.file = file;
            this.thread = new Thread(this::poll, "bench-log-size-watch");
            thread.setDaemon(true);
            thread.start();
        }

        private void poll() {
            long last = -1;
            while (!stop) {
                long s;
                try {
                    s = Files.size(file);
                } catch (NoSuchFileException e) {
                    s = -1;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                if (s != last) {
                    samples.add(new long[] {nowMicros(), s});
                    last = s;
                    size = s;
                }
                try {
                    Thread.sleep(1); // polling interval of the measurement, not synchronisation
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        long size() {
            return size;
        }

        /** Stops polling; returns the samples. */
        List<long[]> stop() throws InterruptedException {
            stop = true;
            thread.join(5_000);
            return samples;
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }

    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** CpuUsage names its unit "task"; here it is a line. */
    private static Map<String, Object> perLine(Map<String, Object> cpu) {
        Map<String, Object> out = new LinkedHashMap<>();
        cpu.forEach((k, v) -> out.put(k.replace("per_task", "per_line"), v));
        return out;
    }
}
