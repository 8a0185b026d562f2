package io.rlscheduler.testkit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java main class running in a JVM of its own, which a test can crash, stop and freeze: a
 * worker or a master that dies, hangs or stalls.
 *
 * <p>The child runs the same {@code java} binary as this JVM
 * ({@code ProcessHandle.current().info().command()}, else {@code java.home}), with this JVM's
 * classpath ({@code java.class.path}) unless the {@link Builder} says otherwise, so a main class
 * from the test classpath can be started by name. It inherits this JVM's environment plus the
 * additions given to the builder. Its stdout and stderr both go to one log file
 * ({@link #logFile()}), written by the child directly, so its output is complete even if this JVM
 * stalls; {@link #output()} and {@link #awaitOutput(String, Duration)} read that file.
 *
 * <p><b>Signals</b> (POSIX; {@link #freeze()} and {@link #thaw()} need Linux or macOS):
 * <ul>
 *   <li>{@link #kill()}: SIGKILL, a crash. Only the JVM dies: processes it started keep running,
 *       reparented, as they would after a real crash. {@link #close()} kills them later.</li>
 *   <li>{@link #terminate(Duration)}: SIGTERM, a graceful shutdown (shutdown hooks run).</li>
 *   <li>{@link #freeze()} / {@link #thaw()}: SIGSTOP / SIGCONT, a process that hangs entirely
 *       (a long GC pause, a stalled machine) with its sockets open: peers see silence, not a
 *       closed connection.</li>
 * </ul>
 * Exit codes follow the shell's convention for a signal: 128 + its number (137 after SIGKILL,
 * 143 after SIGTERM unless the program chose another status).
 *
 * <p><b>Cleanup.</b> {@link #close()} kills the JVM and every process it started (all its
 * descendants, including those a {@link #kill()} orphaned). Processes still open when this JVM
 * exits are killed by a shutdown hook (not after a SIGKILL of this JVM). The log file is kept, so
 * a failed test's output can be read afterwards; a default one lies in {@code java.io.tmpdir}.
 *
 * <p>Thread-safe: lifecycle methods are serialised on this object; {@link #pid()},
 * {@link #isAlive()}, {@link #exitCode()} and {@link #logFile()} never block, and the output
 * methods may be called from any thread, also while another thread kills the process.
 *
 * <pre>{@code
 * try (JvmProcess worker = JvmProcess.builder(WorkerMain.class).args("--master", addr).start()) {
 *     worker.awaitOutput("registered", Duration.ofSeconds(30));
 *     worker.freeze();
 *     ...
 *     worker.kill();
 *     assertThat(worker.exitCode()).hasValue(137);
 * }
 * }</pre>
 */
public final class JvmProcess implements AutoCloseable {

    /** How long {@link #kill()}, {@link #freeze()} and {@link #thaw()} wait for their effect: 10 s. */
    public static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(10);

    /** How long {@link #terminate()} waits for the JVM to exit after SIGTERM: 10 s. */
    public static final Duration TERMINATE_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger log = LoggerFactory.getLogger(JvmProcess.class);

    private static final long POLL_MILLIS = 10;
    private static final int TAIL_LINES = 30;

    private final String name;
    private final Process process;
    private final Path logFile;

    /** Guards the output state below. */
    private final Object outputLock = new Object();
    private final List<String> lines = new ArrayList<>();
    private long readOffset;
    private byte[] partial = new byte[0];

    /** Descendants seen before a kill or terminate, which may outlive the JVM; guarded by itself. */
    private final Set<ProcessHandle> strays = new LinkedHashSet<>();
    private volatile boolean frozen;
    private boolean closed;

    private JvmProcess(String name, Process process, Path logFile) {
        this.name = name;
        this.process = process;
        this.logFile = logFile;
    }

    /** Returns a builder for a JVM that runs {@code mainClass}, by name. */
    public static Builder builder(Class<?> mainClass) {
        return new Builder(mainClass.getName());
    }

    /** Returns a builder for a JVM that runs the main class named {@code mainClassName}. */
    public static Builder builder(String mainClassName) {
        return new Builder(Objects.requireNonNull(mainClassName, "mainClassName"));
    }

    /**
     * Starts {@code mainClass} with {@code args} and the builder's defaults. The caller must
     * {@link #close()} the result.
     *
     * @throws UncheckedIOException if the log file cannot be created or {@code java} run
     */
    public static JvmProcess start(Class<?> mainClass, String... args) {
        return builder(mainClass).args(args).start();
    }

    /** Returns the child JVM's process id. */
    public long pid() {
        return process.pid();
    }

    /**
     * Returns whether the JVM has not exited. A {@link #freeze() frozen} JVM is alive. Never
     * blocks; this JVM reaps its children, so a child is never a lingering zombie.
     */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Returns whether the JVM is stopped by {@link #freeze()} and not yet {@link #thaw() thawed}. */
    public boolean isFrozen() {
        return frozen && process.isAlive();
    }

    /** Returns the exit status, or empty while the JVM runs; 128 + n after death by signal n. */
    public OptionalInt exitCode() {
        return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
    }

    /**
     * Waits at most {@code timeout} for the JVM to exit and returns its {@link #exitCode()}, empty
     * if it still runs.
     */
    public OptionalInt awaitExit(Duration timeout) {
        waitFor(process, timeout);
        return exitCode();
    }

    /** Returns the file that holds the JVM's stdout and stderr. It is kept after {@link #close()}. */
    public Path logFile() {
        return logFile;
    }

    /**
     * Returns the complete lines the JVM has written so far, stdout and stderr interleaved as
     * written, without line terminators, decoded as UTF-8. A last line without its newline is
     * left out until the newline comes or the JVM exits.
     */
    public List<String> output() {
        synchronized (outputLock) {
            readNew(!process.isAlive());
            return List.copyOf(lines);
        }
    }

    /**
     * Waits until the JVM has written a line containing {@code substring} and returns the first
     * such line (searching all output since start). Polls the log file every 10 ms. It is a
     * substring match: {@code "tick 1"} also matches {@code "tick 10"}, and {@code "ready"} a line
     * that echoes the arguments; for an exact line pass {@code "ready"::equals} to
     * {@link #awaitOutput(Predicate, Duration)}.
     *
     * @throws IllegalStateException if the JVM exits without writing such a line, or none comes
     *     within {@code timeout}; the message quotes the end of the output
     */
    public String awaitOutput(String substring, Duration timeout) {
        Objects.requireNonNull(substring, "substring");
        return awaitOutput(line -> line.contains(substring), "containing \"" + substring + '"',
                timeout);
    }

    /**
     * Waits until the JVM has written a line that {@code matcher} accepts and returns the first
     * such line (searching all output since start). Polls the log file every 10 ms.
     *
     * @throws IllegalStateException if the JVM exits without writing such a line, or none comes
     *     within {@code timeout}; the message quotes the end of the output
     */
    public String awaitOutput(Predicate<? super String> matcher, Duration timeout) {
        return awaitOutput(matcher, "matching " + matcher, timeout);
    }

    private String awaitOutput(Predicate<? super String> matcher, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int searched = 0;
        while (true) {
            // Look at the exit first: output read after seeing the exit is all there will be.
            boolean exited = !process.isAlive();
            List<String> snapshot;
            synchronized (outputLock) {
                readNew(exited);
                snapshot = List.copyOf(lines);
            }
            for (int i = searched; i < snapshot.size(); i++) {
                if (matcher.test(snapshot.get(i))) {
                    return snapshot.get(i);
                }
            }
            searched = snapshot.size();
            if (exited) {
                throw new IllegalStateException(this + " exited with " + process.exitValue()
                        + " without writing a line " + what + "; end of " + logFile + ":\n"
                        + tail(snapshot));
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(this + " wrote no line " + what + " within "
                        + timeout + "; end of " + logFile + ":\n" + tail(snapshot));
            }
            waitFor(process, Duration.ofMillis(POLL_MILLIS));
        }
    }

    /**
     * Returns the live descendants of the JVM now (see {@link ProcessTree#descendants(long)}):
     * the processes it started and theirs. Empty once it has exited. Linux only.
     */
    public List<Long> descendants() {
        return process.isAlive() ? ProcessTree.descendants(process.pid()) : List.of();
    }

    /**
     * Kills the JVM with SIGKILL, as a crash would, and waits until it has exited. Processes it
     * started are not killed (they are reparented and keep running, as after a real crash);
     * {@link #close()} kills them. Works on a frozen JVM. Does nothing if it has exited.
     *
     * @throws IllegalStateException if the JVM has not exited {@link #SIGNAL_TIMEOUT} after SIGKILL
     */
    public synchronized void kill() {
        if (!process.isAlive()) {
            return;
        }
        rememberDescendants();
        process.destroyForcibly();
        if (!waitFor(process, SIGNAL_TIMEOUT)) {
            throw new IllegalStateException(this + " still alive " + SIGNAL_TIMEOUT + " after SIGKILL");
        }
        frozen = false;
        log.info("{} killed (exit {})", this, process.exitValue());
    }

    /** Sends SIGTERM and waits at most {@link #TERMINATE_TIMEOUT}; see {@link #terminate(Duration)}. */
    public boolean terminate() {
        return terminate(TERMINATE_TIMEOUT);
    }

    /**
     * Sends SIGTERM, so the JVM runs its shutdown hooks and exits, and waits at most
     * {@code timeout} for it to exit. A frozen JVM is thawed as well, since a stopped JVM only
     * handles the SIGTERM once it runs again. Processes it started are left running, as after
     * {@link #kill()}. Returns at once, true, if it has exited already.
     *
     * @return whether the JVM exited within {@code timeout}; if not, it is left running (call
     *     {@link #kill()})
     */
    public synchronized boolean terminate(Duration timeout) {
        if (!process.isAlive()) {
            return true;
        }
        rememberDescendants();
        process.destroy();
        if (frozen) {
            signal("CONT");
            frozen = false;
        }
        boolean exited = waitFor(process, timeout);
        if (exited) {
            log.info("{} terminated (exit {})", this, process.exitValue());
        }
        return exited;
    }

    /**
     * Stops the JVM with SIGSTOP: all its threads halt, its sockets stay open and unanswered, its
     * timers stand still. On Linux, returns once {@code /proc} shows the process stopped
     * (state {@code T}). Processes it started are not stopped. Linux and macOS only (it runs
     * {@code kill -STOP}).
     *
     * @throws IllegalStateException if the JVM has exited, {@code kill} fails, or the process is
     *     not seen stopped within {@link #SIGNAL_TIMEOUT}
     */
    public synchronized void freeze() {
        if (!process.isAlive()) {
            throw new IllegalStateException(this + " has exited; cannot freeze it");
        }
        signal("STOP");
        frozen = true;
        awaitState(true);
        log.info("{} frozen", this);
    }

    /**
     * Resumes a {@link #freeze() frozen} JVM with SIGCONT. On Linux, returns once {@code /proc}
     * no longer shows the process stopped. Does nothing if the JVM has exited. Linux and macOS
     * only (it runs {@code kill -CONT}).
     *
     * @throws IllegalStateException if {@code kill} fails, or the process still looks stopped
     *     {@link #SIGNAL_TIMEOUT} later
     */
    public synchronized void thaw() {
        if (!process.isAlive()) {
            frozen = false;
            return;
        }
        signal("CONT");
        frozen = false;
        awaitState(false);
        log.info("{} thawed", this);
    }

    /**
     * Kills the JVM (SIGKILL) if it is alive, and every process it started, also those orphaned
     * by an earlier {@link #kill()} or {@link #terminate(Duration)}; waits, bounded, until they
     * are gone. Keeps the log file. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Reaper.unregister(this);
        killAll(SIGNAL_TIMEOUT);
        log.debug("{} closed", this);
    }

    /** Kills everything without taking the lock; for the shutdown hook. */
    void reap() {
        killAll(Duration.ofSeconds(2));
    }

    @Override
    public String toString() {
        return "JvmProcess{" + name + ", pid " + process.pid() + '}';
    }

    private void killAll(Duration timeout) {
        Set<ProcessHandle> victims;
        synchronized (strays) {
            victims = new LinkedHashSet<>(strays);
        }
        if (process.isAlive()) {
            victims.addAll(handles(ProcessTree.descendants(process.pid())));
            process.destroyForcibly();
        }
        // Orphans may have started processes of their own since they were seen.
        for (ProcessHandle stray : new ArrayList<>(victims)) {
            if (ProcessTree.isAlive(stray.pid())) {
                victims.addAll(handles(ProcessTree.descendants(stray.pid())));
            }
        }
        // ProcessHandle checks the start time, so a pid reused meanwhile is not hit.
        victims.forEach(ProcessHandle::destroyForcibly);
        long deadline = System.nanoTime() + timeout.toNanos();
        waitFor(process, timeout);
        for (ProcessHandle victim : victims) {
            while (ProcessTree.isAlive(victim.pid()) && victim.isAlive()
                    && System.nanoTime() - deadline < 0) {
                sleepPoll();
            }
        }
        frozen = false;
    }

    private void rememberDescendants() {
        List<ProcessHandle> found = handles(ProcessTree.descendants(process.pid()));
        synchronized (strays) {
            strays.addAll(found);
        }
    }

    private static List<ProcessHandle> handles(List<Long> pids) {
        List<ProcessHandle> result = new ArrayList<>();
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(result::add);
        }
        return result;
    }

    /** Runs {@code kill -<sig> <pid>}. */
    private void signal(String sig) {
        if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows")) {
            throw new UnsupportedOperationException("SIG" + sig + " needs a POSIX system");
        }
        List<String> command = List.of("kill", "-" + sig, Long.toString(process.pid()));
        try {
            Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out;
            try (InputStream in = kill.getInputStream()) {
                out = in.readAllBytes();
            }
            if (!waitFor(kill, SIGNAL_TIMEOUT)) {
                kill.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            if (kill.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed with "
                        + kill.exitValue() + ": " + new String(out, StandardCharsets.UTF_8).trim());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + String.join(" ", command), e);
        }
    }

    /** On Linux, waits until the process is (or is no longer) in state T; elsewhere returns. */
    private void awaitState(boolean stopped) {
        if (!ProcessTree.isAvailable()) {
            return;
        }
        long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
        while (process.isAlive()) {
            boolean isStopped = ProcessTree.state(process.pid()).map(s -> s == 'T').orElse(false);
            if (isStopped == stopped) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(this + (stopped ? " not stopped" : " still stopped")
                        + " " + SIGNAL_TIMEOUT + " after SIG" + (stopped ? "STOP" : "CONT"));
            }
            sleepPoll();
        }
    }

    private static void sleepPoll() {
        try {
            TimeUnit.MILLISECONDS.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
    }

    /** Reads what the log file gained since the last call; caller holds {@link #outputLock}. */
    private void readNew(boolean atEnd) {
        try (FileChannel channel = FileChannel.open(logFile, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size > readOffset) {
                ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(size - readOffset, 1 << 24));
                while (buffer.hasRemaining()) {
                    int n = channel.read(buffer, readOffset + buffer.position());
                    if (n < 0) {
                        break;
                    }
                }
                readOffset += buffer.position();
                byte[] chunk = new byte[partial.length + buffer.position()];
                System.arraycopy(partial, 0, chunk, 0, partial.length);
                System.arraycopy(buffer.array(), 0, chunk, partial.length, buffer.position());
                int start = 0;
                for (int i = 0; i < chunk.length; i++) {
                    if (chunk[i] == '\n') {
                        lines.add(decode(chunk, start, i));
                        start = i + 1;
                    }
                }
                partial = Arrays.copyOfRange(chunk, start, chunk.length);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + logFile, e);
        }
        if (atEnd && partial.length > 0) {
            lines.add(decode(partial, 0, partial.length));
            partial = new byte[0];
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            // Nothing more to do with it.
        }
    }

    private static String decode(byte[] bytes, int from, int to) {
        int end = to > from && bytes[to - 1] == '\r' ? to - 1 : to;
        return new String(bytes, from, end - from, StandardCharsets.UTF_8);
    }

    private static String tail(List<String> lines) {
        return String.join("\n", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
    }

    private static boolean waitFor(Process p, Duration timeout) {
        try {
            return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !p.isAlive();
        }
    }

    private static Path javaBinary() {
        return ProcessHandle.current().info().command().map(Path::of)
                .filter(Files::isExecutable)
                .orElseGet(() -> Path.of(System.getProperty("java.home"), "bin", "java"));
    }

    /**
     * Configures and starts a {@link JvmProcess}. Not thread-safe; each {@link #start()} starts
     * one more JVM with the settings at that moment.
     */
    public static final class Builder {
        private final String mainClass;
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private String classpath = System.getProperty("java.class.path");
        private Path workingDirectory;
        private Path logFile;

        private Builder(String mainClass) {
            this.mainClass = mainClass;
        }

        /** Appends program arguments, passed to {@code main}. */
        public Builder args(String... values) {
            return args(Arrays.asList(values));
        }

        /** Appends program arguments, passed to {@code main}. */
        public Builder args(List<String> values) {
            values.forEach(v -> args.add(Objects.requireNonNull(v, "argument")));
            return this;
        }

        /**
         * Appends JVM options, put before the main class, e.g. {@code -Xmx256m} or
         * {@code -Dkey=value}. None by default: the child gets the JVM's default heap and GC.
         */
        public Builder jvmArgs(String... values) {
            Arrays.stream(values).forEach(v -> jvmArgs.add(Objects.requireNonNull(v, "JVM argument")));
            return this;
        }

        /** Sets an environment variable on top of those inherited from this JVM. */
        public Builder env(String name, String value) {
            env.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Sets the working directory; by default this JVM's. */
        public Builder workingDirectory(Path directory) {
            this.workingDirectory = Objects.requireNonNull(directory, "directory");
            return this;
        }

        /**
         * Sets the classpath, entries separated by {@link File#pathSeparator}; by default this
         * JVM's {@code java.class.path}.
         */
        public Builder classpath(String value) {
            this.classpath = Objects.requireNonNull(value, "classpath");
            return this;
        }

        /**
         * Sets the file for stdout and stderr (created or truncated; its directory must exist).
         * By default a new {@code rls-jvm-<MainClass>-*.log} file in {@code java.io.tmpdir}.
         */
        public Builder logFile(Path file) {
            this.logFile = Objects.requireNonNull(file, "file");
            return this;
        }

        /**
         * Starts the JVM and returns at once, without waiting for the main class to run; use
         * {@link JvmProcess#awaitOutput(String, Duration)} to wait for it to be ready. The caller
         * must {@link JvmProcess#close()} the result.
         *
         * @throws UncheckedIOException if the log file cannot be created or {@code java} run
         */
        public JvmProcess start() {
            String simpleName = mainClass.substring(mainClass.lastIndexOf('.') + 1);
            Path logPath;
            try {
                logPath = logFile != null ? logFile
                        : Files.createTempFile("rls-jvm-" + simpleName + "-", ".log");
                Files.write(logPath, new byte[0]);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot create the log file for " + mainClass, e);
            }
            List<String> command = new ArrayList<>();
            command.add(javaBinary().toString());
            command.addAll(jvmArgs);
            if (classpath != null && !classpath.isEmpty()) {
                command.add("-cp");
                command.add(classpath);
            }
            command.add(mainClass);
            command.addAll(args);
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logPath.toFile()));
            if (workingDirectory != null) {
                builder.directory(workingDirectory.toFile());
            }
            builder.environment().putAll(env);
            Process process;
            try {
                process = builder.start();
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot start " + command.get(0) + " for " + mainClass, e);
            }
            closeQuietly(process.getOutputStream()); // stdin: end-of-file at once
            JvmProcess jvm = new JvmProcess(simpleName, process, logPath);
            Reaper.register(jvm);
            log.info("Started {} {} with log {}", jvm, args, logPath);
            return jvm;
        }
    }
}
