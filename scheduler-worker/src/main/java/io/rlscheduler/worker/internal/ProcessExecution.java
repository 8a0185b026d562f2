package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.StopReason;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskOutput;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One attempt running under the launcher, which leads the attempt's process group (its pgid is
 * the launcher's pid). Ends in three steps, each bounded so that completion always comes:
 * <ol>
 *   <li>the launcher exits (by itself when the script ends, or after a stop);</li>
 *   <li>the group is empty: normally at once, as the launcher kills leftovers before it exits;
 *       members still there after {@value #GROUP_EXIT_MILLIS} ms are killed here;</li>
 *   <li>both output streams reached their end and their last lines were passed on; a stream still
 *       open after {@value #OUTPUT_DRAIN_MILLIS} ms more (held by a process that left the group
 *       with setsid) is detached and the result says so.</li>
 * </ol>
 * The launcher's stdin is a pipe held open until the launcher has exited: if this JVM dies the
 * kernel closes it and the launcher kills the group. The only bytes written to it are keepalives
 * ({@link #keepAlive()}), one per lease renewal. Thread-safe.
 */
public final class ProcessExecution implements TaskExecution {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessExecution.class);

    /** How long after a stop's grace the launcher may take to exit before it is killed with its descendants. */
    public static final long SAFETY_MARGIN_MILLIS = 5_000;
    static final long GROUP_EXIT_MILLIS = 5_000;
    static final long GROUP_KILL_MILLIS = 2_000;
    static final long OUTPUT_DRAIN_MILLIS = 5_000;
    private static final long POLL_MILLIS = 10;

    private final String taskName;
    private final Process launcher;
    private final Path script;
    private final String interpreter;
    private final long pgid;
    private final Path pgidFile;
    private final long launcherGraceMillis;
    private final OutputPump stdout;
    private final OutputPump stderr;
    private final AtomicReference<StopReason> stopReason = new AtomicReference<>();
    private final CompletableFuture<ExecutionResult> completion = new CompletableFuture<>();
    private final AtomicBoolean finished = new AtomicBoolean();
    private final List<String> problems = new ArrayList<>();
    private final List<ScheduledFuture<?>> timers = new ArrayList<>();

    private ProcessExecution(String taskName, Process launcher, Path script, String interpreter, Path pgidFile,
                             Duration launcherGrace, TaskOutput output) {
        this.taskName = taskName;
        this.launcher = launcher;
        this.script = script;
        this.interpreter = interpreter;
        this.pgid = launcher.pid();
        this.pgidFile = pgidFile;
        this.launcherGraceMillis = launcherGrace.toMillis();
        this.stdout = new OutputPump(launcher.getInputStream(), LogStream.LOG_STREAM_STDOUT, output, taskName);
        this.stderr = new OutputPump(launcher.getErrorStream(), LogStream.LOG_STREAM_STDERR, output, taskName);
    }

    /**
     * Supervises a launcher just started: starts one reader thread per output stream, named
     * {@code threadPrefix + "-stdout"} and {@code "-stderr"}.
     *
     * @param taskName      names the attempt in log messages
     * @param threadPrefix  prefix of the reader threads' names
     * @param launcher      the launcher process, its three streams piped
     * @param script        the script file the launcher runs (its real path)
     * @param interpreter   the interpreter that runs it
     * @param pgidFile      the launcher's pgid file, deleted at the end if the launcher left it
     * @param launcherGrace the grace period the launcher was given
     * @param output        receives the output lines
     */
    public static ProcessExecution start(String taskName, String threadPrefix, Process launcher, Path script,
                                         String interpreter, Path pgidFile, Duration launcherGrace, TaskOutput output) {
        ProcessExecution execution = new ProcessExecution(taskName, launcher, script, interpreter, pgidFile, launcherGrace,
                output);
        execution.startReader(execution.stdout, threadPrefix + "-stdout");
        execution.startReader(execution.stderr, threadPrefix + "-stderr");
        launcher.onExit().whenComplete((p, t) -> Supervisor.execute(execution::launcherExited));
        return execution;
    }

    private void startReader(OutputPump pump, String name) {
        Thread thread = new Thread(pump, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Returns the launcher's pid, which is also the attempt's process-group id. */
    public long getPgid() {
        return pgid;
    }

    @Override
    public Optional<Path> getScriptFile() {
        return Optional.of(script);
    }

    @Override
    public Optional<String> getInterpreter() {
        return Optional.of(interpreter);
    }

    @Override
    public CompletableFuture<ExecutionResult> completion() {
        // A copy per caller: completing or cancelling it cannot change what others see.
        return completion.copy();
    }

    @Override
    public void keepAlive() {
        if (finished.get()) {
            return;
        }
        try {
            java.io.OutputStream stdin = launcher.getOutputStream();
            synchronized (stdin) {
                stdin.write('\n');
                stdin.flush();
            }
        } catch (java.io.IOException e) {
            // The launcher is gone or going: its exit is handled by the completion path.
            LOG.debug("{}: keepalive not delivered: {}", taskName, e.toString());
        }
    }

    @Override
    public void stop(StopReason reason, Duration grace) {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(grace, "grace");
        if (reason == StopReason.NONE) {
            throw new IllegalArgumentException("reason must not be NONE");
        }
        if (grace.isNegative()) {
            throw new IllegalArgumentException("grace must not be negative, was " + grace);
        }
        if (!stopReason.compareAndSet(null, reason)) {
            return; // stopped before, or already ended
        }
        if (!launcher.isAlive()) {
            return;
        }
        long graceMillis = Math.min(grace.toMillis(), launcherGraceMillis);
        LOG.info("{}: stopping ({}): TERM to the process group, KILL after {} ms", taskName, reason, graceMillis);
        // SIGTERM to the launcher; it passes TERM to the group and KILLs it after its own grace.
        // Through the ProcessHandle, not Process.destroy(): on Linux the JDK's Process.destroy()
        // also closes our ends of the three pipes, which loses whatever the script prints while
        // it shuts down, breaks its writes (EPIPE), and closes the launcher's stdin early.
        launcher.toHandle().destroy();
        synchronized (timers) {
            if (graceMillis < launcherGraceMillis) {
                // The caller wants less grace than the launcher was given: KILL the rest of the
                // group ourselves, sparing the launcher so it still reports how the script ended.
                timers.add(Supervisor.schedule(this::killScript, graceMillis));
            }
            timers.add(Supervisor.schedule(this::safetyNet, graceMillis + SAFETY_MARGIN_MILLIS));
        }
    }

    private void killScript() {
        if (launcher.isAlive()) {
            int n = ProcessGroups.kill(pgid, pgid, 500);
            LOG.info("{}: grace over: killed {} process(es) of group {}", taskName, n, pgid);
        }
    }

    private void safetyNet() {
        if (!launcher.isAlive()) {
            return;
        }
        LOG.warn("{}: the launcher (pid {}) has not exited {} ms after its grace; killing it and its descendants",
                taskName, pgid, SAFETY_MARGIN_MILLIS);
        problem("the launcher did not exit after the stop's grace period; it was killed with its descendants");
        launcher.descendants().forEach(ProcessHandle::destroyForcibly);
        launcher.toHandle().destroyForcibly(); // keeps the pipes open, so late output is still read
        ProcessGroups.kill(pgid, -1, 500);
    }

    private void problem(String text) {
        synchronized (problems) {
            problems.add(text);
        }
    }

    private void launcherExited() {
        synchronized (timers) {
            timers.forEach(t -> t.cancel(false));
            timers.clear();
        }
        int exitCode = launcher.exitValue();
        try {
            launcher.getOutputStream().close(); // the launcher is gone: release our end of its stdin
        } catch (IOException ignored) {
            // nothing to do
        }
        LOG.debug("{}: launcher exited with {}", taskName, exitCode);
        awaitGroupEmpty(exitCode, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GROUP_EXIT_MILLIS));
    }

    private void awaitGroupEmpty(int exitCode, long deadline) {
        List<Long> left = ProcessGroups.members(pgid);
        if (left.isEmpty()) {
            awaitOutput(exitCode);
        } else if (System.nanoTime() - deadline < 0) {
            Supervisor.schedule(() -> awaitGroupEmpty(exitCode, deadline), POLL_MILLIS);
        } else {
            LOG.warn("{}: processes {} of group {} outlived the launcher; killing them", taskName, left, pgid);
            ProcessGroups.kill(pgid, -1, GROUP_KILL_MILLIS);
            List<Long> survivors = ProcessGroups.members(pgid);
            if (survivors.isEmpty()) {
                problem("processes " + left + " of the group outlived the launcher and were killed");
            } else {
                problem("processes " + survivors + " of the group survived SIGKILL (uninterruptible?)");
            }
            awaitOutput(exitCode);
        }
    }

    private void awaitOutput(int exitCode) {
        CompletableFuture<Void> both = CompletableFuture.allOf(stdout.done(), stderr.done());
        ScheduledFuture<?> timeout = Supervisor.schedule(() -> {
            if (!both.isDone()) {
                LOG.warn("{}: output still open {} ms after the group ended (a process that left the group holds it);"
                        + " completing without it", taskName, OUTPUT_DRAIN_MILLIS);
                problem("output streams were still open after the process group ended; later lines are dropped");
                // Not waited for here (this is the shared supervision thread): a block of lines
                // the task wrote may still be on its way into a full log buffer; it is kept, and
                // the attempt ends once it is in.
                CompletableFuture.allOf(stdout.detach(), stderr.detach()).thenRun(() -> finish(exitCode));
            }
        }, OUTPUT_DRAIN_MILLIS);
        both.thenRun(() -> {
            timeout.cancel(false);
            finish(exitCode);
        });
    }

    private void finish(int exitCode) {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        // The launcher removes its pgid file, unless it was killed or members of its group
        // survived SIGKILL. Kept in the second case, like the launcher does, so that the next
        // start-up sweep (killLeftovers) tries again.
        if (ProcessGroups.members(pgid).isEmpty()) {
            try {
                Files.deleteIfExists(pgidFile);
            } catch (IOException e) {
                LOG.warn("{}: cannot delete {}: {}", taskName, pgidFile, e.toString());
            }
        }
        stopReason.compareAndSet(null, StopReason.NONE);
        String error;
        synchronized (problems) {
            error = String.join("; ", problems);
        }
        ExecutionResult result = new ExecutionResult(exitCode, stopReason.get(), error);
        LOG.debug("{}: ended: {}", taskName, result);
        completion.complete(result);
    }
}
