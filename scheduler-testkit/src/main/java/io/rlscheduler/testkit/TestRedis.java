package io.rlscheduler.testkit;

import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis server for tests: either a redis-server process this JVM started and controls, or an
 * external server named by the {@value #REDIS_URL_ENV} environment variable.
 *
 * <p>A started server listens on 127.0.0.1 on a port that was free at start, keeps its data in
 * a fresh temporary directory, and runs with
 * {@code --appendonly yes --appendfsync always --save "" --protected-mode no
 * --maxmemory-policy noeviction}: every write is in the AOF file, fsynced, before its reply is
 * sent, so a {@link #kill() kill -9} loses nothing that a client saw acknowledged, and
 * {@link #restart()} (same port, same directory) brings it all back. Its stdout and stderr go to
 * {@code redis.log} in the data directory; a failed start quotes the end of it.
 *
 * <p>Costs: starting takes a few tens of milliseconds on an idle machine (the first start in a
 * JVM also copies the 10 MB binary, see {@link RedisBinary}); readiness is awaited by polling
 * {@code PING} for at most {@link #START_TIMEOUT}. Since every write is fsynced, a write is
 * bounded by the disk's fsync latency (typically well under a millisecond on tmpfs or SSD).
 *
 * <p>An external server ({@link #isExternal()}) is shared, possibly with other test runs: it is
 * never flushed, stopped, killed or restarted. {@link #stop()}, {@link #kill()} and
 * {@link #restart()} throw {@link UnsupportedOperationException} for it; tests that need them
 * call {@link #assumeControllable()} first so that they are skipped instead.
 *
 * <p>Thread-safe: lifecycle methods are serialised on this object; {@link #getUri()},
 * {@link #getPort()} and {@link #isExternal()} never block.
 *
 * <pre>{@code
 * try (TestRedis redis = TestRedis.start()) {
 *     RedisClient client = RedisClient.create(redis.getUri());
 *     ...
 *     redis.kill();
 *     redis.restart();
 * }
 * }</pre>
 */
public final class TestRedis implements AutoCloseable {

    /** Environment variable that points tests at an external server, e.g. {@code redis://127.0.0.1:6379/0}. */
    public static final String REDIS_URL_ENV = "REDIS_URL";

    /** How long a start or restart may take until the server answers {@code PING}: 30 s. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    /** How long {@link #stop()} waits for a SIGTERM to end the server before it kills it: 10 s. */
    public static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    /** Command timeout put into every {@link #getUri()} of a started server: 10 s. */
    public static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger log = LoggerFactory.getLogger(TestRedis.class);

    private static final String HOST = "127.0.0.1";
    private static final String LOG_FILE = "redis.log";
    private static final int MAX_PORT_ATTEMPTS = 5;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final long POLL_MILLIS = 20;

    private final String externalUrl;
    private final String host;
    private final int port;
    private final Path dataDir;

    private volatile Process process;
    private boolean closed;

    private TestRedis(String externalUrl, String host, int port, Path dataDir, Process process) {
        this.externalUrl = externalUrl;
        this.host = host;
        this.port = port;
        this.dataDir = dataDir;
        this.process = process;
    }

    /**
     * Starts a redis-server on a free loopback port with AOF on, in a new temporary directory,
     * and returns once it answers {@code PING}. Ignores {@value #REDIS_URL_ENV}; use
     * {@link #fromEnvironment()} to honour it. The caller must {@link #close()} the result.
     *
     * @throws IllegalStateException if the server does not become ready within
     *     {@link #START_TIMEOUT}, or exits while starting (the message quotes its log)
     * @throws UncheckedIOException if the data directory cannot be created or the binary run
     */
    public static TestRedis start() {
        Path dir;
        try {
            dir = Files.createTempDirectory("rls-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a data directory for redis-server", e);
        }
        try {
            for (int attempt = 1; ; attempt++) {
                int port = FreePort.pick();
                long began = System.nanoTime();
                Process p = launch(port, dir, false);
                try {
                    awaitReady(p, port, dir);
                } catch (IllegalStateException e) {
                    if (attempt < MAX_PORT_ATTEMPTS && !p.isAlive()
                            && logTail(dir).contains("Address already in use")) {
                        log.debug("Port {} was taken before redis-server bound it; retrying", port);
                        continue;
                    }
                    throw e;
                }
                TestRedis redis = new TestRedis(null, HOST, port, dir, p);
                Reaper.register(redis);
                log.info("redis-server pid {} ready on {}:{} in {} ms, data in {}", p.pid(), HOST,
                        port, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began), dir);
                return redis;
            }
        } catch (RuntimeException e) {
            deleteTree(dir);
            throw e;
        }
    }

    /**
     * Returns a handle on the external server at {@code url} (a Lettuce URI such as
     * {@code redis://127.0.0.1:6379/0}). Starts nothing and does not connect.
     *
     * @throws IllegalArgumentException if {@code url} is not a valid Redis URI
     */
    public static TestRedis external(String url) {
        RedisURI uri = RedisURI.create(url);
        return new TestRedis(url, uri.getHost(), uri.getPort(), null, null);
    }

    /**
     * Returns {@link #external(String) the external server} named by {@value #REDIS_URL_ENV}
     * when that variable is set and not blank, otherwise {@link #start() starts} a server.
     */
    public static TestRedis fromEnvironment() {
        Optional<String> url = externalUrl();
        if (url.isPresent()) {
            log.info("Using the external Redis server at {} ({})", url.get(), REDIS_URL_ENV);
            return external(url.get());
        }
        return start();
    }

    /** Returns the value of {@value #REDIS_URL_ENV}, or empty when it is unset or blank. */
    public static Optional<String> externalUrl() {
        String url = System.getenv(REDIS_URL_ENV);
        return url == null || url.isBlank() ? Optional.empty() : Optional.of(url.trim());
    }

    /**
     * Returns a new URI for this server; callers may modify it. For a started server: host
     * 127.0.0.1, its port, database 0, timeout {@link #CLIENT_TIMEOUT}. For an external one: the
     * URI parsed from its URL, unchanged.
     */
    public RedisURI getUri() {
        if (externalUrl != null) {
            return RedisURI.create(externalUrl);
        }
        return RedisURI.builder().withHost(host).withPort(port).withTimeout(CLIENT_TIMEOUT).build();
    }

    /** Returns the host clients connect to: 127.0.0.1 for a started server. */
    public String getHost() {
        return host;
    }

    /** Returns the TCP port; it stays the same across {@link #restart()}. */
    public int getPort() {
        return port;
    }

    /** Returns whether this is an external server, which this JVM must not stop, kill or restart. */
    public boolean isExternal() {
        return externalUrl != null;
    }

    /**
     * Aborts the calling test as skipped, through a JUnit assumption, when this server is
     * external. Call it first in every test that uses {@link #stop()}, {@link #kill()} or
     * {@link #restart()}.
     */
    public void assumeControllable() {
        Assumptions.assumeTrue(externalUrl == null, () -> "This test stops, kills or restarts "
                + "Redis, which it cannot do to the external server " + externalUrl + " named by "
                + REDIS_URL_ENV + "; unset " + REDIS_URL_ENV + " to run it");
    }

    /**
     * Returns whether the server process is alive. Always true for an external server, whose
     * state this JVM does not track.
     */
    public boolean isRunning() {
        if (externalUrl != null) {
            return true;
        }
        Process p = process;
        return p != null && p.isAlive();
    }

    /**
     * Returns the process id of the running redis-server.
     *
     * @throws UnsupportedOperationException for an external server
     * @throws IllegalStateException if the server is not running
     */
    public long pid() {
        requireControllable("pid");
        Process p = process;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        return p.pid();
    }

    /**
     * Returns the data directory, which holds {@code appendonly.aof} and {@code redis.log}. It is
     * deleted by {@link #close()}.
     *
     * @throws UnsupportedOperationException for an external server
     */
    public Path getDataDir() {
        requireControllable("getDataDir");
        return dataDir;
    }

    /**
     * Shuts the server down gracefully: SIGTERM (redis-server then fsyncs the AOF and exits),
     * waiting at most {@link #STOP_TIMEOUT} before it kills the process. Does nothing if the
     * server is not running. On Windows the JDK can only terminate forcibly.
     *
     * @throws UnsupportedOperationException for an external server
     * @throws IllegalStateException if closed
     */
    public synchronized void stop() {
        requireControllable("stop");
        requireOpen();
        Process p = process;
        process = null;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        if (!waitForExit(p, STOP_TIMEOUT)) {
            log.warn("redis-server pid {} ignored SIGTERM for {}; killing it", p.pid(), STOP_TIMEOUT);
            destroyForcibly(p);
        }
        log.info("redis-server pid {} on port {} stopped (exit {})", p.pid(), port, p.exitValue());
    }

    /**
     * Kills the server with SIGKILL ({@link Process#destroyForcibly()}), as a crash would, and
     * waits until the process has exited. Anything acknowledged before is in the AOF and comes
     * back on {@link #restart()}. Does nothing if the server is not running.
     *
     * @throws UnsupportedOperationException for an external server
     * @throws IllegalStateException if closed, or the process does not exit within
     *     {@link #STOP_TIMEOUT}
     */
    public synchronized void kill() {
        requireControllable("kill");
        requireOpen();
        Process p = process;
        process = null;
        if (p == null || !p.isAlive()) {
            return;
        }
        destroyForcibly(p);
        log.info("redis-server pid {} on port {} killed (exit {})", p.pid(), port, p.exitValue());
    }

    /**
     * Starts the server again on the same port and data directory, so it reloads its AOF, and
     * returns once it answers {@code PING}. A running server is first {@link #stop() stopped};
     * a stopped or killed one is just started.
     *
     * @throws UnsupportedOperationException for an external server
     * @throws IllegalStateException if closed, or the server does not become ready within
     *     {@link #START_TIMEOUT} (for example because another process took the port meanwhile)
     */
    public synchronized void restart() {
        requireControllable("restart");
        requireOpen();
        stop();
        long began = System.nanoTime();
        Process p = launch(port, dataDir, true);
        awaitReady(p, port, dataDir);
        process = p;
        log.info("redis-server pid {} ready again on {}:{} in {} ms", p.pid(), host, port,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
    }

    /**
     * Kills a started server and deletes its data directory; does nothing for an external
     * server. Idempotent. Cheap: no graceful shutdown, since the data is discarded anyway.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (externalUrl != null) {
            return;
        }
        Reaper.unregister(this);
        Process p = process;
        process = null;
        if (p != null && p.isAlive()) {
            destroyForcibly(p);
        }
        deleteTree(dataDir);
        log.debug("redis-server on port {} closed", port);
    }

    /** Kills the process and deletes the data directory without taking the lock; for the shutdown hook. */
    void reap() {
        Process p = process;
        if (p != null) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            waitForExit(p, Duration.ofSeconds(2));
        }
        if (dataDir != null) {
            deleteTree(dataDir);
        }
    }

    @Override
    public String toString() {
        return externalUrl != null
                ? "TestRedis{external " + externalUrl + '}'
                : "TestRedis{" + host + ':' + port + ", dir=" + dataDir + '}';
    }

    private void requireControllable(String what) {
        if (externalUrl != null) {
            throw new UnsupportedOperationException(what + "() is not possible on the external "
                    + "server " + externalUrl + " named by " + REDIS_URL_ENV
                    + "; call assumeControllable() first to skip such tests");
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("TestRedis on port " + port + " is closed");
        }
    }

    private static Process launch(int port, Path dir, boolean appendLog) {
        List<String> command = List.of(
                RedisBinary.path().toString(),
                "--port", Integer.toString(port),
                "--bind", HOST,
                "--dir", dir.toString(),
                "--appendonly", "yes",
                "--appendfsync", "always",
                "--save", "",
                "--protected-mode", "no",
                "--maxmemory-policy", "noeviction",
                "--daemonize", "no");
        Path logFile = dir.resolve(LOG_FILE);
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(appendLog
                        ? ProcessBuilder.Redirect.appendTo(logFile.toFile())
                        : ProcessBuilder.Redirect.to(logFile.toFile()));
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        }
    }

    /**
     * Polls {@code PING} until it answers, the process exits or {@link #START_TIMEOUT} passes.
     * Between polls it waits on the process itself, so an early exit is seen at once. Kills the
     * process before throwing.
     */
    private static void awaitReady(Process p, int port, Path dir) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        try {
            while (true) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("redis-server on port " + port
                            + " exited with " + p.exitValue() + " while starting; end of "
                            + dir.resolve(LOG_FILE) + ":\n" + logTail(dir));
                }
                if (RedisProbe.answersPing(HOST, port, PROBE_TIMEOUT)) {
                    return;
                }
                if (System.nanoTime() - deadline > 0) {
                    destroyForcibly(p);
                    throw new IllegalStateException("redis-server on port " + port
                            + " did not answer PING within " + START_TIMEOUT + "; end of "
                            + dir.resolve(LOG_FILE) + ":\n" + logTail(dir));
                }
                p.waitFor(POLL_MILLIS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            destroyForcibly(p);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while redis-server was starting", e);
        }
    }

    private static void destroyForcibly(Process p) {
        // A forked child (an AOF rewrite) would survive its parent's SIGKILL; take it too.
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        if (!waitForExit(p, STOP_TIMEOUT)) {
            throw new IllegalStateException("redis-server pid " + p.pid()
                    + " still alive " + STOP_TIMEOUT + " after SIGKILL");
        }
    }

    private static boolean waitForExit(Process p, Duration timeout) {
        try {
            return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !p.isAlive();
        }
    }

    private static String logTail(Path dir) {
        try {
            List<String> lines = Files.readAllLines(dir.resolve(LOG_FILE), StandardCharsets.ISO_8859_1);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    log.warn("Cannot delete {}: {}", path, e.toString());
                }
            });
        } catch (IOException | UncheckedIOException e) {
            log.warn("Cannot delete {}: {}", dir, e.toString());
        }
    }
}
