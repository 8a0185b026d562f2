package io.rlscheduler.redis.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A redis-server process that this JVM starts and owns, for one machine: a demo, a workstation
 * that runs the master and its workers, an application that wants its scheduler state without a
 * Redis of its own to operate.
 *
 * <pre>
 *  setting         default                                   builder
 *  --------------  ----------------------------------------  -----------------
 *  port            0: a loopback port free at the start       port(int)
 *  data directory  a new temporary directory, deleted by      dataDirectory(Path)
 *                  close(); a given one is created if
 *                  missing and kept, so a later start
 *                  reloads its AOF
 *  start timeout   30 s until the server answers PING         startTimeout(Duration)
 *  stop timeout    10 s from SIGTERM to SIGKILL in stop()     stopTimeout(Duration)
 *  stop on exit    true: a JVM shutdown hook stops a server   stopOnExit(boolean)
 *                  that was not closed
 * </pre>
 *
 * <p>Fixed, because the scheduler depends on them: the server listens on {@value #HOST} only
 * (it has no password), runs with {@code --appendonly yes --appendfsync always --save ""
 * --maxmemory-policy noeviction}: every write is in the AOF file, fsynced, before its reply is
 * sent, so a crash loses nothing a client saw acknowledged, and no key (a lease, a queue entry)
 * is ever evicted. Its stdout and stderr are appended to {@value #LOG_FILE} in the data
 * directory; a failed start quotes the end of it. The executable is the one that the
 * embedded-redis jar ships for this OS and architecture, or an override (see
 * {@link RedisServerBinary}).
 *
 * <p>Cost: a start takes a few tens of milliseconds on an idle machine, and the first start in a
 * JVM also copies the 10 MB binary to a temporary file. Every write waits for an fsync, which is
 * typically well under a millisecond on an SSD or tmpfs; the server is a separate process with
 * its own memory, not a thread of this JVM.
 *
 * <p>Thread-safe: {@link #stop()}, {@link #restart()} and {@link #close()} are serialised on this
 * object; the getters, {@link #isRunning()} and {@link #pid()} never block.
 *
 * <pre>{@code
 * try (EmbeddedRedis redis = EmbeddedRedis.start()) {
 *     SchedulerMaster master = SchedulerMaster.builder().redis(RedisURI.create(redis.getUrl()))...
 * }
 * }</pre>
 */
public final class EmbeddedRedis implements AutoCloseable {

    /** The address the server listens on and clients connect to. */
    public static final String HOST = "127.0.0.1";

    /** The file in the data directory that receives the server's output. */
    public static final String LOG_FILE = "redis.log";

    /** How long a start may take until the server answers {@code PING}: 30 s. */
    public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(30);

    /** How long {@link #stop()} waits for SIGTERM to end the server before it kills it: 10 s. */
    public static final Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger log = LoggerFactory.getLogger(EmbeddedRedis.class);

    /** Free ports one start tries: another process may take one before redis-server binds it. */
    private static final int MAX_PORT_ATTEMPTS = 5;

    private final int port;
    private final Path dataDirectory;
    private final boolean temporaryDirectory;
    private final Duration startTimeout;
    private final Duration stopTimeout;
    private final boolean stopOnExit;

    private volatile ServerProcess server;
    private boolean closed;

    private EmbeddedRedis(Builder b, int port, Path dataDirectory, boolean temporaryDirectory, ServerProcess server) {
        this.port = port;
        this.dataDirectory = dataDirectory;
        this.temporaryDirectory = temporaryDirectory;
        this.startTimeout = b.startTimeout;
        this.stopTimeout = b.stopTimeout;
        this.stopOnExit = b.stopOnExit;
        this.server = server;
    }

    /**
     * Starts a server with every setting at its default (a free port, a temporary data directory)
     * and returns once it answers {@code PING}. The caller must {@link #close()} it.
     *
     * @throws IllegalStateException if the server does not become ready within the start
     *     timeout, or exits while starting (the message quotes its log)
     * @throws UncheckedIOException if the data directory cannot be created or the binary run
     */
    public static EmbeddedRedis start() {
        return builder().start();
    }

    /** Returns a builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns {@value #HOST}. */
    public String getHost() {
        return HOST;
    }

    /** Returns the TCP port; it stays the same across {@link #restart()}. */
    public int getPort() {
        return port;
    }

    /** Returns the URL clients connect to, {@code redis://127.0.0.1:<port>}, e.g. for Lettuce's {@code RedisURI.create}. */
    public String getUrl() {
        return "redis://" + HOST + ":" + port;
    }

    /** Returns the data directory, which holds {@code appendonly.aof} and {@value #LOG_FILE}. */
    public Path getDataDirectory() {
        return dataDirectory;
    }

    /** Returns whether the server process is alive. */
    public boolean isRunning() {
        ServerProcess s = server;
        return s != null && s.process().isAlive();
    }

    /**
     * Returns the process id of the running server.
     *
     * @throws IllegalStateException if the server is not running
     */
    public long pid() {
        return toHandle().pid();
    }

    /**
     * Returns the handle of the running server process, for watching or signalling it.
     *
     * @throws IllegalStateException if the server is not running
     */
    public ProcessHandle toHandle() {
        ServerProcess s = server;
        if (s == null || !s.process().isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        return s.process().toHandle();
    }

    /**
     * Shuts the server down gracefully: SIGTERM (redis-server then fsyncs the AOF and exits),
     * waiting at most the stop timeout before it kills the process. Does nothing if the server is
     * not running; {@link #restart()} starts it again.
     *
     * @throws IllegalStateException if closed
     */
    public synchronized void stop() {
        requireOpen();
        ServerProcess s = server;
        server = null;
        if (s == null) {
            return;
        }
        boolean graceful = s.terminate(stopTimeout);
        if (!graceful) {
            log.warn("redis-server on port {} ignored SIGTERM for {}; killed it", port, stopTimeout);
        }
        log.info("redis-server pid {} on port {} stopped (exit {})", s.process().pid(), port, s.process().exitValue());
    }

    /**
     * Starts the server again on the same port and data directory, so that it reloads its AOF,
     * and returns once it answers {@code PING}. A running server is {@link #stop() stopped} first.
     *
     * @throws IllegalStateException if closed, or the server does not become ready within the
     *     start timeout (for example because another process took the port meanwhile)
     */
    public synchronized void restart() {
        requireOpen();
        stop();
        long began = System.nanoTime();
        ServerProcess s = ServerProcess.launch(port, dataDirectory);
        s.awaitReady(startTimeout, stopTimeout);
        server = s;
        log.info("redis-server pid {} ready again on {}:{} in {} ms", s.process().pid(), HOST, port,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
    }

    /**
     * Stops the server for good. A temporary data directory is deleted, and its server killed at
     * once (its data is discarded anyway); a given data directory is kept, and its server stopped
     * gracefully, as by {@link #stop()}. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        ExitHook.unregister(this);
        if (!temporaryDirectory) {
            stop();
        }
        closed = true;
        discard();
    }

    /** For the JVM's exit hook: what {@link #close()} does, without taking the lock. */
    void stopAtExit() {
        ServerProcess s = server;
        if (s != null && !temporaryDirectory) {
            s.terminate(stopTimeout);
        }
        discard();
    }

    private void discard() {
        ServerProcess s = server;
        server = null;
        if (s != null) {
            s.kill(stopTimeout);
        }
        if (temporaryDirectory) {
            deleteTree(dataDirectory);
        }
        log.debug("redis-server on port {} closed", port);
    }

    @Override
    public String toString() {
        return "EmbeddedRedis{" + HOST + ':' + port + ", dir=" + dataDirectory + '}';
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("EmbeddedRedis on port " + port + " is closed");
        }
    }

    private static EmbeddedRedis start(Builder b) {
        boolean temporary = b.dataDirectory == null;
        Path dir;
        try {
            dir = temporary ? Files.createTempDirectory("rls-redis-") : Files.createDirectories(b.dataDirectory);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a data directory for redis-server", e);
        }
        try {
            for (int attempt = 1; ; attempt++) {
                int port = b.port != 0 ? b.port : FreePort.pick();
                long began = System.nanoTime();
                ServerProcess s = ServerProcess.launch(port, dir);
                try {
                    s.awaitReady(b.startTimeout, b.stopTimeout);
                } catch (IllegalStateException e) {
                    if (b.port == 0 && attempt < MAX_PORT_ATTEMPTS && s.lostThePort()) {
                        log.debug("Port {} was taken before redis-server bound it; retrying", port);
                        continue;
                    }
                    throw e;
                }
                EmbeddedRedis redis = new EmbeddedRedis(b, port, dir, temporary, s);
                if (b.stopOnExit) {
                    ExitHook.register(redis);
                }
                log.info("redis-server pid {} ready on {}:{} in {} ms, data in {}", s.process().pid(), HOST, port,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began), dir);
                return redis;
            }
        } catch (RuntimeException e) {
            if (temporary) {
                deleteTree(dir);
            }
            throw e;
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

    /**
     * Settings of a server to start; see the table in {@link EmbeddedRedis}. Not thread-safe;
     * each {@link #start()} starts a server of its own.
     */
    public static final class Builder {

        private int port;
        private Path dataDirectory;
        private Duration startTimeout = DEFAULT_START_TIMEOUT;
        private Duration stopTimeout = DEFAULT_STOP_TIMEOUT;
        private boolean stopOnExit = true;

        private Builder() {
        }

        /**
         * Sets the TCP port, 1 to 65535, or 0 (the default) for one that is free at the start.
         *
         * @throws IllegalArgumentException if out of range
         */
        public Builder port(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * Sets the data directory, created if missing and kept by {@link EmbeddedRedis#close()},
         * so that a server started on it later reloads its AOF. By default a new temporary
         * directory, deleted by {@code close()}.
         */
        public Builder dataDirectory(Path dir) {
            this.dataDirectory = Objects.requireNonNull(dir, "dataDirectory").toAbsolutePath();
            return this;
        }

        /**
         * Sets how long a start may take until the server answers {@code PING}; default 30 s.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = positive(timeout, "startTimeout");
            return this;
        }

        /**
         * Sets how long a stop waits for SIGTERM to end the server before it kills it; default 10 s.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder stopTimeout(Duration timeout) {
            this.stopTimeout = positive(timeout, "stopTimeout");
            return this;
        }

        /**
         * Sets whether a JVM shutdown hook stops the server if it was not closed (default true).
         * Switch it off where the application orders its own shutdown, for example closes the
         * master that uses the server first and the server after it.
         */
        public Builder stopOnExit(boolean stop) {
            this.stopOnExit = stop;
            return this;
        }

        /**
         * Starts the server and returns once it answers {@code PING}. The caller must
         * {@link EmbeddedRedis#close()} it.
         *
         * @throws IllegalStateException if the server does not become ready within the start
         *     timeout, or exits while starting (the message quotes its log); with a given port,
         *     also when another process holds it
         * @throws UncheckedIOException if the data directory cannot be created or the binary run
         */
        public EmbeddedRedis start() {
            return EmbeddedRedis.start(this);
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }
    }
}
