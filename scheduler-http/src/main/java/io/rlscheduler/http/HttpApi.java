package io.rlscheduler.http;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rlscheduler.http.internal.ApiServer;
import io.rlscheduler.http.internal.Settings;
import io.rlscheduler.master.SchedulerMaster;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The lab's front door, next to a master in the same JVM: the JSON API under {@code /api/v1}, its
 * live streams (Server-Sent Events), Prometheus metrics and the web dashboard, on Netty's HTTP
 * codec. Any master can carry one, leader or standby: reads come from Redis and the master's log
 * directory, submissions go to Redis. Every route but the OpenAPI document and the dashboard's
 * files needs a bearer token ({@link SchedulerMaster#apiTokens()}). See docs/http.md.
 *
 * <pre>{@code
 * try (HttpApi api = HttpApi.builder(master).port(8080).build().start()) {
 *     System.out.println("dashboard: " + api.getUrl());
 *     ...
 * }
 * }</pre>
 *
 * <p>Requests that read Redis, disk or the artifact store run on the API's own request threads,
 * never on Netty's event loop. Thread-safe. {@link #close()} stops listening, ends the live
 * streams and waits for the request threads, briefly; the master is left running.
 */
public final class HttpApi implements AutoCloseable {

    private final SchedulerMaster master;
    private final Settings settings;
    private final PrometheusMeterRegistry registry;
    private ApiServer server;

    private HttpApi(Builder b) {
        this.master = b.master;
        this.settings = new Settings(b.bindHost, b.port, b.maxRequestBytes, b.readOnlyAnonymous, b.sseWriteTimeout,
                b.sseKeepAlive, b.requestThreads, b.tokenCacheTtl, b.tlsChain, b.tlsKey);
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    }

    /** Starts a builder for an API served next to {@code master}, which must be running. */
    public static Builder builder(SchedulerMaster master) {
        return new Builder(Objects.requireNonNull(master, "master"));
    }

    /**
     * Binds the port and starts serving.
     *
     * @return this
     * @throws IllegalStateException if already started
     * @throws io.rlscheduler.core.SchedulerException if the port cannot be bound or the TLS files not read
     */
    public synchronized HttpApi start() {
        if (server != null) {
            throw new IllegalStateException("the HTTP API is already started");
        }
        server = ApiServer.start(master, settings, registry);
        return this;
    }

    /** Returns the address it listens on. */
    public InetSocketAddress getAddress() {
        return requireStarted().localAddress();
    }

    /** Returns the port it listens on. */
    public int getPort() {
        return getAddress().getPort();
    }

    /** Returns its base URL, such as {@code http://127.0.0.1:8080} ({@code https} with TLS). */
    public String getUrl() {
        InetSocketAddress a = getAddress();
        String host = a.getAddress().isAnyLocalAddress() ? "127.0.0.1" : a.getHostString();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        return (settings.tlsChain() != null ? "https" : "http") + "://" + host + ":" + a.getPort();
    }

    /** Returns the meter registry its metrics are kept in (the host may add its own meters). */
    public PrometheusMeterRegistry getMeterRegistry() {
        return registry;
    }

    private synchronized ApiServer requireStarted() {
        if (server == null) {
            throw new IllegalStateException("the HTTP API is not started");
        }
        return server;
    }

    /** Stops serving: closes the port and every open stream. Idempotent. */
    @Override
    public synchronized void close() {
        if (server != null) {
            server.close();
        }
    }

    /** Builds an {@link HttpApi}; every setter checks its input at once. */
    public static final class Builder {
        private final SchedulerMaster master;
        private String bindHost = "127.0.0.1";
        private int port = 8080;
        private int maxRequestBytes = 1024 * 1024;
        private boolean readOnlyAnonymous;
        private Duration sseWriteTimeout = Duration.ofSeconds(10);
        private Duration sseKeepAlive = Duration.ofSeconds(15);
        private int requestThreads = 16;
        private Duration tokenCacheTtl = Duration.ofSeconds(1);
        private Path tlsChain;
        private Path tlsKey;

        private Builder(SchedulerMaster master) {
            this.master = master;
        }

        /** Sets the address to listen on; default {@code 127.0.0.1} (loopback only). */
        public Builder bindHost(String host) {
            this.bindHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Sets the port, 0 to 65535 (0: any free port); default 8080. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /** Sets the largest request body, 1 KiB to 64 MiB; default 1 MiB. Larger ones get 413. */
        public Builder maxRequestBytes(int bytes) {
            if (bytes < 1024 || bytes > 64 * 1024 * 1024) {
                throw new IllegalArgumentException("maxRequestBytes must be 1 KiB to 64 MiB, was " + bytes);
            }
            this.maxRequestBytes = bytes;
            return this;
        }

        /** Lets requests without a token use the GET routes (never submit, cancel or tokens); default off. */
        public Builder readOnlyAnonymous(boolean allowed) {
            this.readOnlyAnonymous = allowed;
            return this;
        }

        /** Sets how long a stream's socket may stay full before the stream is closed, 1 s to 10 min; default 10 s. */
        public Builder sseWriteTimeout(Duration timeout) {
            this.sseWriteTimeout = within(timeout, Duration.ofSeconds(1), Duration.ofMinutes(10), "sseWriteTimeout");
            return this;
        }

        /** Sets how often an idle stream gets a comment line, 1 s to 10 min; default 15 s. */
        public Builder sseKeepAlive(Duration interval) {
            this.sseKeepAlive = within(interval, Duration.ofSeconds(1), Duration.ofMinutes(10), "sseKeepAlive");
            return this;
        }

        /** Sets the threads that run requests (they read Redis and disk), 1 to 256; default 16. */
        public Builder requestThreads(int threads) {
            if (threads < 1 || threads > 256) {
                throw new IllegalArgumentException("requestThreads must be 1 to 256, was " + threads);
            }
            this.requestThreads = threads;
            return this;
        }

        /**
         * Sets how long a verified token is trusted without reading Redis again, 0 to 1 min; default
         * 1 s. A token revoked through this API is refused at once; one revoked elsewhere (the Java
         * API, another process) within this time. 0 reads Redis for every request.
         */
        public Builder tokenCacheTtl(Duration ttl) {
            Objects.requireNonNull(ttl, "tokenCacheTtl");
            if (ttl.isNegative() || ttl.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("tokenCacheTtl must be 0 to 1 min, was " + ttl);
            }
            this.tokenCacheTtl = ttl;
            return this;
        }

        /** Serves HTTPS with this certificate chain and private key (PEM files, the key PKCS#8); default plain HTTP. */
        public Builder tls(Path certificateChainPem, Path privateKeyPem) {
            for (Path p : new Path[] {certificateChainPem, privateKeyPem}) {
                if (p == null || !Files.isReadable(p)) {
                    throw new IllegalArgumentException("TLS file not readable: " + p);
                }
            }
            this.tlsChain = certificateChainPem;
            this.tlsKey = privateKeyPem;
            return this;
        }

        /** Returns the API, not yet started. */
        public HttpApi build() {
            return new HttpApi(this);
        }

        private static Duration within(Duration d, Duration min, Duration max, String what) {
            Objects.requireNonNull(d, what);
            if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
                throw new IllegalArgumentException(what + " must be " + min + " to " + max + ", was " + d);
            }
            return d;
        }
    }
}
