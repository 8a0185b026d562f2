package io.rlscheduler.redis.embedded;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One launch of redis-server: the process, started with the fixed settings of
 * {@link EmbeddedRedis}, its output appended to {@value EmbeddedRedis#LOG_FILE} in the data
 * directory, and the part of that log this launch wrote. Thread-safe: every field is final.
 */
final class ServerProcess {

    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final long POLL_MILLIS = 20;
    private static final int LOG_TAIL_LINES = 30;

    private final Process process;
    private final int port;
    private final Path logFile;
    private final long logOffset;

    private ServerProcess(Process process, int port, Path logFile, long logOffset) {
        this.process = process;
        this.port = port;
        this.logFile = logFile;
        this.logOffset = logOffset;
    }

    /** Starts redis-server on {@code port} with its data in {@code dir}; does not wait for it. */
    static ServerProcess launch(int port, Path dir) {
        List<String> command = List.of(
                RedisServerBinary.path().toString(),
                "--port", Integer.toString(port),
                "--bind", EmbeddedRedis.HOST,
                "--dir", dir.toString(),
                "--appendonly", "yes",
                "--appendfsync", "always",
                "--save", "",
                "--protected-mode", "no",
                "--maxmemory-policy", "noeviction",
                "--daemonize", "no");
        Path logFile = dir.resolve(EmbeddedRedis.LOG_FILE);
        long offset;
        try {
            offset = Files.exists(logFile) ? Files.size(logFile) : 0;
        } catch (IOException e) {
            offset = 0;
        }
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        try {
            return new ServerProcess(builder.start(), port, logFile, offset);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        }
    }

    Process process() {
        return process;
    }

    /**
     * Polls {@code PING} until it answers, the process exits or {@code timeout} passes. Between
     * polls it waits on the process itself, so an early exit is seen at once. Kills the process
     * before it throws.
     *
     * @throws IllegalStateException if the server exits or stays silent; the message quotes the
     *     end of what this launch logged
     */
    void awaitReady(Duration timeout, Duration killTimeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("redis-server on port " + port + " exited with "
                            + process.exitValue() + " while starting; end of " + logFile + ":\n" + logTail());
                }
                if (RedisProbe.answersPing(EmbeddedRedis.HOST, port, PROBE_TIMEOUT)) {
                    return;
                }
                if (System.nanoTime() - deadline > 0) {
                    kill(killTimeout);
                    throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                            + timeout + "; end of " + logFile + ":\n" + logTail());
                }
                process.waitFor(POLL_MILLIS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            kill(killTimeout);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while redis-server was starting", e);
        }
    }

    /** Whether this launch failed because another process held the port. */
    boolean lostThePort() {
        return !process.isAlive() && logTail().contains("Address already in use");
    }

    /**
     * SIGTERM (redis-server then fsyncs its AOF and exits), then SIGKILL if it has not exited
     * within {@code timeout}. Returns whether it exited by itself.
     */
    boolean terminate(Duration timeout) {
        if (!process.isAlive()) {
            return true;
        }
        process.destroy();
        if (waitForExit(timeout)) {
            return true;
        }
        kill(timeout);
        return false;
    }

    /**
     * SIGKILL to the server and its children (a forked AOF rewrite would survive its parent's
     * SIGKILL), then waits until it has exited.
     *
     * @throws IllegalStateException if it is still alive {@code timeout} after the signal
     */
    void kill(Duration timeout) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        if (!waitForExit(timeout)) {
            throw new IllegalStateException("redis-server pid " + process.pid() + " still alive " + timeout
                    + " after SIGKILL");
        }
    }

    private boolean waitForExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    /** The last lines this launch wrote to the log. */
    String logTail() {
        try (RandomAccessFile in = new RandomAccessFile(logFile.toFile(), "r")) {
            long from = Math.min(logOffset, in.length());
            byte[] bytes = new byte[(int) Math.min(Integer.MAX_VALUE, in.length() - from)];
            in.seek(from);
            in.readFully(bytes);
            List<String> lines = Arrays.asList(new String(bytes, StandardCharsets.ISO_8859_1).split("\n"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
