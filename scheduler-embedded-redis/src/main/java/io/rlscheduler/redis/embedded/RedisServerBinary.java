package io.rlscheduler.redis.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.core.ExecutableProvider;

/**
 * Locates the redis-server executable that {@link EmbeddedRedis} launches.
 *
 * <p>By default this is the binary for the current OS and architecture that the embedded-redis
 * jar ships as a resource (Redis 6.2.x for Linux x86/x86_64/arm64 and macOS x86_64/arm64, 5.0
 * for Windows), copied once per JVM to a temporary file marked executable and deleted when the
 * JVM exits. The first call therefore costs one copy of about 10 MB; later calls are free.
 *
 * <p>Another binary can be used instead, for example where the shipped one does not run (the
 * Linux x86_64 one links against OpenSSL 3, {@code libssl.so.3}) or where {@code /tmp} is
 * mounted {@code noexec}: set the system property {@value #BINARY_PROPERTY} or the environment
 * variable {@value #BINARY_ENV} to the path of a redis-server executable (the property wins).
 *
 * <p>Thread-safe: resolution happens once, under a lock.
 */
public final class RedisServerBinary {

    /** System property naming a redis-server executable to use instead of the shipped one. */
    public static final String BINARY_PROPERTY = "rlscheduler.redis.server";

    /** Environment variable naming a redis-server executable to use instead of the shipped one. */
    public static final String BINARY_ENV = "REDIS_SERVER_BINARY";

    private static final Logger log = LoggerFactory.getLogger(RedisServerBinary.class);

    private static Path path;
    private static String version;

    private RedisServerBinary() {
    }

    /**
     * Returns the redis-server executable, extracting the shipped one on the first call.
     *
     * @throws UncheckedIOException if the binary cannot be extracted, or an override names a file
     *     that is not executable
     * @throws IllegalStateException if the embedded-redis jar has no binary for this OS and
     *     architecture (set an override then)
     */
    public static synchronized Path path() {
        if (path == null) {
            path = resolve();
        }
        return path;
    }

    /**
     * Returns the first line that {@code redis-server --version} prints, for example
     * {@code Redis server v=6.2.11 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64 ...}. Runs the
     * binary once per JVM (a few milliseconds), then answers from memory.
     *
     * @throws UncheckedIOException if the binary cannot be run
     */
    public static synchronized String version() {
        if (version == null) {
            version = readVersion(path());
        }
        return version;
    }

    private static Path resolve() {
        String override = System.getProperty(BINARY_PROPERTY);
        if (override == null || override.isBlank()) {
            override = System.getenv(BINARY_ENV);
        }
        if (override != null && !override.isBlank()) {
            Path p = Paths.get(override.trim()).toAbsolutePath();
            if (!Files.isRegularFile(p) || !Files.isExecutable(p)) {
                throw new UncheckedIOException(new IOException(
                        "redis-server override " + p + " (from " + BINARY_PROPERTY + " or "
                                + BINARY_ENV + ") is not an executable file"));
            }
            log.info("Using redis-server {} (override)", p);
            return p;
        }
        try {
            Path p = ExecutableProvider.newJarResourceProvider().get().toPath();
            log.debug("Extracted the embedded-redis binary to {}", p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot extract the redis-server binary shipped by "
                    + "embedded-redis; set " + BINARY_PROPERTY + " or " + BINARY_ENV, e);
        } catch (RuntimeException e) {
            throw new IllegalStateException("embedded-redis has no redis-server for os.name="
                    + System.getProperty("os.name") + ", os.arch=" + System.getProperty("os.arch")
                    + "; set " + BINARY_PROPERTY + " or " + BINARY_ENV, e);
        }
    }

    private static String readVersion(Path binary) {
        try {
            Process p = new ProcessBuilder(binary.toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            String out;
            try (var in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
            }
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("redis-server --version did not exit within 10 s");
            }
            if (p.exitValue() != 0) {
                throw new IOException("redis-server --version exited with " + p.exitValue()
                        + ": " + out);
            }
            int eol = out.indexOf('\n');
            return eol < 0 ? out : out.substring(0, eol).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + binary + " --version", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running redis-server --version", e);
        }
    }
}
