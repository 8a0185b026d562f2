package io.rlscheduler.worker.internal.provenance;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Runs a short child process (git, an interpreter's {@code --version}) and reads its output
 * lines, bounded in time: a process still running after the timeout is killed, which also ends
 * the read. Blocks the calling thread; never call it on an event loop. Stateless.
 */
final class ShortCommand {

    /** What a run gave. */
    record Result(Outcome outcome, int exitCode, List<String> lines) {
        /** Whether it ran to its end and exited with 0. */
        boolean succeeded() {
            return outcome == Outcome.EXITED && exitCode == 0;
        }
    }

    /** How a run ended. */
    enum Outcome {
        /** It exited by itself ({@link Result#exitCode()} says how). */
        EXITED,
        /** Its output held a line the caller stops at; the process was killed after it (no exit code). */
        STOPPED_AT_LINE,
        /** It did not end within the timeout and was killed. */
        TIMED_OUT,
        /** The program does not exist or cannot be executed. */
        MISSING,
        /** It could not be started or read for another reason. */
        FAILED
    }

    private ShortCommand() {
    }

    /**
     * Runs {@code command} in {@code dir}, stdin closed; stderr is merged into stdout when
     * {@code mergeStderr}, else discarded.
     *
     * @param environment variables set for the child; a null value removes that variable
     * @param stopAt      the line after which nothing more is read (the process is then killed),
     *                    or null to read everything
     */
    static Result run(List<String> command, Path dir, Map<String, String> environment, long timeoutMillis,
                      boolean mergeStderr, Predicate<String> stopAt) {
        ProcessBuilder builder = new ProcessBuilder(command);
        if (dir != null) {
            builder.directory(dir.toFile());
        }
        Map<String, String> env = builder.environment();
        environment.forEach((k, v) -> {
            if (v == null) {
                env.remove(k);
            } else {
                env.put(k, v);
            }
        });
        if (mergeStderr) {
            builder.redirectErrorStream(true);
        } else {
            builder.redirectError(ProcessBuilder.Redirect.DISCARD);
        }
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            String why = String.valueOf(e.getMessage());
            boolean missing = why.contains("error=2,") || why.contains("error=13,"); // no such file, not executable
            return new Result(missing ? Outcome.MISSING : Outcome.FAILED, -1, List.of(why));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        // The kill also ends a read that waits for output that never comes. Remembered: the timer
        // can fire a little before the deadline as this thread measures it.
        java.util.concurrent.atomic.AtomicBoolean timedOut = new java.util.concurrent.atomic.AtomicBoolean();
        CompletableFuture.delayedExecutor(timeoutMillis, TimeUnit.MILLISECONDS, Runnable::run).execute(() -> {
            if (process.isAlive()) {
                timedOut.set(true);
                process.destroyForcibly();
            }
        });
        List<String> lines = new ArrayList<>();
        try {
            process.getOutputStream().close();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    lines.add(line);
                    if (stopAt != null && stopAt.test(line)) {
                        process.destroyForcibly();
                        return new Result(Outcome.STOPPED_AT_LINE, -1, lines);
                    }
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || !process.waitFor(left, TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                return new Result(Outcome.TIMED_OUT, -1, lines);
            }
            if (timedOut.get() || System.nanoTime() > deadline) {
                return new Result(Outcome.TIMED_OUT, -1, lines); // killed by the timer: its exit code is the kill's
            }
            return new Result(Outcome.EXITED, process.exitValue(), lines);
        } catch (IOException e) {
            process.destroyForcibly();
            return new Result(timedOut.get() || System.nanoTime() > deadline ? Outcome.TIMED_OUT : Outcome.FAILED, -1, lines);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return new Result(Outcome.FAILED, -1, lines);
        }
    }
}
