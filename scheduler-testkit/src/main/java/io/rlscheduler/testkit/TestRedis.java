package io.rlscheduler.testkit;

import io.lettuce.core.RedisURI;
import io.rlscheduler.redis.embedded.EmbeddedRedis;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis server for tests: either a redis-server process this JVM started and controls (an
 * {@link EmbeddedRedis}), or an external server named by the {@value #REDIS_URL_ENV} environment
 * variable.
 *
 * <p>A started server is an {@link EmbeddedRedis} with its defaults: 127.0.0.1, a port that was
 * free at start, a fresh temporary data directory, and
 * {@code --appendonly yes --appendfsync always --save "" --protected-mode no
 * --maxmemory-policy noeviction}: every write is in the AOF file, fsynced, before its reply is
 * sent, so a {@link #kill() kill -9} loses nothing that a client saw acknowledged, and
 * {@link #restart()} (same port, same directory) brings it all back. Its stdout and stderr go to
 * {@code redis.log} in the data directory; a failed start quotes the end of it. A server still
 * open when the JVM exits is stopped and its directory deleted.
 *
 * <p>Costs: as {@link EmbeddedRedis}'s, a few tens of milliseconds to start on an idle machine,
 * and every write bounded by the disk's fsync latency.
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
    public static final Duration START_TIMEOUT = EmbeddedRedis.DEFAULT_START_TIMEOUT;

    /** How long {@link #stop()} waits for a SIGTERM to end the server before it kills it: 10 s. */
    public static final Duration STOP_TIMEOUT = EmbeddedRedis.DEFAULT_STOP_TIMEOUT;

    /** Command timeout put into every {@link #getUri()} of a started server: 10 s. */
    public static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger log = LoggerFactory.getLogger(TestRedis.class);

    private final String externalUrl;
    private final String host;
    private final int port;
    private final EmbeddedRedis server;

    private boolean closed;

    private TestRedis(String externalUrl, String host, int port, EmbeddedRedis server) {
        this.externalUrl = externalUrl;
        this.host = host;
        this.port = port;
        this.server = server;
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
        EmbeddedRedis server = EmbeddedRedis.start();
        return new TestRedis(null, server.getHost(), server.getPort(), server);
    }

    /**
     * Returns a handle on the external server at {@code url} (a Lettuce URI such as
     * {@code redis://127.0.0.1:6379/0}). Starts nothing and does not connect.
     *
     * @throws IllegalArgumentException if {@code url} is not a valid Redis URI
     */
    public static TestRedis external(String url) {
        RedisURI uri = RedisURI.create(url);
        return new TestRedis(url, uri.getHost(), uri.getPort(), null);
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
        return server == null || server.isRunning();
    }

    /**
     * Returns the process id of the running redis-server.
     *
     * @throws UnsupportedOperationException for an external server
     * @throws IllegalStateException if the server is not running
     */
    public long pid() {
        requireControllable("pid");
        return server.pid();
    }

    /**
     * Returns the data directory, which holds {@code appendonly.aof} and {@code redis.log}. It is
     * deleted by {@link #close()}.
     *
     * @throws UnsupportedOperationException for an external server
     */
    public Path getDataDir() {
        requireControllable("getDataDir");
        return server.getDataDirectory();
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
        server.stop();
    }

    /**
     * Kills the server with SIGKILL, as a crash would, and waits until the process has exited.
     * Anything acknowledged before is in the AOF and comes back on {@link #restart()}. Does
     * nothing if the server is not running.
     *
     * @throws UnsupportedOperationException for an external server
     * @throws IllegalStateException if closed, or the process does not exit within
     *     {@link #STOP_TIMEOUT}
     */
    public synchronized void kill() {
        requireControllable("kill");
        requireOpen();
        if (!server.isRunning()) {
            return;
        }
        ProcessHandle handle = server.toHandle();
        // A forked child (an AOF rewrite) would survive its parent's SIGKILL; take it too.
        handle.descendants().forEach(ProcessHandle::destroyForcibly);
        handle.destroyForcibly();
        // Waits for the process to exit, as a stop does; the SIGKILL was first, so the server
        // never sees the stop's SIGTERM.
        server.stop();
        log.info("redis-server pid {} on port {} killed (SIGKILL)", handle.pid(), port);
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
        server.restart();
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
        if (server != null) {
            server.close();
        }
    }

    @Override
    public String toString() {
        return externalUrl != null
                ? "TestRedis{external " + externalUrl + '}'
                : "TestRedis{" + host + ':' + port + ", dir=" + server.getDataDirectory() + '}';
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
}
