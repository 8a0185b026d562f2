package io.rlscheduler.master;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.internal.Checks;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.ServerTlsOptions;
import io.rlscheduler.store.ArtifactStores;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable settings of a {@link SchedulerMaster}: everything but its Redis connection and its
 * secret, which {@link SchedulerMaster.Builder} takes beside them. Thread-safe; share one instance.
 *
 * <pre>
 *  setting            default                 unit / range
 *  -----------------  ----------------------  -----------------------------------------------------
 *  bindHost           0.0.0.0                 interface the RPC server binds to
 *  rpcPort            9000                    0 (any free port) to 65535
 *  masterId           master-&lt;pid&gt;-&lt;host&gt;   this master's id in Redis and in logs
 *  coreOptions        CoreOptions.defaults()  namespace, leases, limits of the lease core
 *  logDirectory       logs                    task log files; created if missing
 *  artifactStore      &lt;logDirectory's        where ended logs (and the workers' checkpoints and
 *                     parent&gt;/artifacts       outputs) go: a file: URI or path, or s3://bucket/prefix
 *  artifactStoreSettings  (none)              the store's settings, credentials included; never published
 *  ioThreads          min(4, cores)           RPC event loops, 1 to 256
 *  dispatchBatch      16                      assignments per worker per dispatch round, 1 to 1000
 *  reapInterval       500 ms                  reaper period, 1 ms to 1 h
 *  sharingRepairInterval  10 min              period of the sharing's repair pass (the leader's), 1 s to 1 day
 *  gpuReadingInterval 5 s                     period at which the leader publishes its workers' GPU readings
 *                                             (memory, utilisation) to Redis for every master, 100 ms to 1 h
 *  dispatchInterval   1 s                     backstop dispatch round period, 1 ms to 1 h
 *  handshakeTimeout   10 s                    time a new connection has to authenticate, 10 ms to 1 h
 *  apiTimeout         30 s                    bound of the blocking API methods, 1 ms to 1 day
 *  leaderLease        10 s                    leadership lease, renewed every third, 100 ms to 1 h
 *  advertisedHost     (bound address)         host workers are sent to when this master leads
 *  protocolOptions    ProtocolOptions         codec settings (maximum frame length)
 *  transport          epoll, else NIO         socket transport
 *  standbyOnly        false                   never seeks the leadership lease
 *  workerInboundRate  128 MiB/s               bytes/s one authenticated connection may send, 1 KiB/s to 1 TiB/s
 *  workerInboundBurst 128 MiB                 bytes it may send at once beyond that rate, 1 KiB to 1 TiB
 *  maxOpenAttemptsPerWorker  1,024            attempts one connection may have log state open for, 1 to 1,000,000
 *  openAttemptTimeout 10 min                  an attempt a connection stopped sending for is no longer open, 100 ms to 1 day
 *  maxLogBytesPerTask 4 GiB                   bytes of one task's log file before it is cut, 1 KiB and more
 *  workerIdleTimeout  3 x heartbeatInterval,  an authenticated connection silent this long is closed, at least
 *                     at least 5 s            2 x heartbeatInterval, up to 1 day
 *  workerKeysRequired false                   accept only hellos made with a worker key
 *  tls                none (plaintext)        ServerTlsOptions: TLS on the RPC port, client certificates
 * </pre>
 *
 * <p>The default artifact store is a directory beside the log directory, so that one machine's
 * demo keeps everything under one folder. On a lab it must be a place every machine reaches: a
 * mount every master and worker sees, or an S3-compatible store ({@code s3:} URIs need the
 * scheduler-store-s3 module on the classpath). Masters of one namespace must share one store.
 */
public final class MasterOptions {

    /** Default RPC port. */
    public static final int DEFAULT_RPC_PORT = 9000;
    /** Default interface to bind: all. */
    public static final String DEFAULT_BIND_HOST = "0.0.0.0";
    /** Default log directory, relative to the working directory. */
    public static final Path DEFAULT_LOG_DIRECTORY = Path.of("logs");
    /** Default assignments per worker per dispatch round. */
    public static final int DEFAULT_DISPATCH_BATCH = 16;
    /**
     * Default period of the reaper: 500 ms, so that a dead worker's task runs again within its
     * task lease plus about half a second (a pass with nothing due is one cheap script run).
     */
    public static final Duration DEFAULT_REAP_INTERVAL = Duration.ofMillis(500);
    /** Default period of the repair pass of the sharing between owners. */
    public static final Duration DEFAULT_SHARING_REPAIR_INTERVAL = Duration.ofMinutes(10);
    /** Default period at which the leader publishes its workers' GPU readings to Redis. */
    public static final Duration DEFAULT_GPU_READING_INTERVAL = Duration.ofSeconds(5);
    /** Default period of the backstop dispatch round (dispatch is event-driven; this only catches up). */
    public static final Duration DEFAULT_DISPATCH_INTERVAL = Duration.ofSeconds(1);
    /** Default time a new connection has to authenticate. */
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /** Default bound of the blocking API methods. */
    public static final Duration DEFAULT_API_TIMEOUT = Duration.ofSeconds(30);
    /** Default length of the leadership lease; the leader renews it every third of it. */
    public static final Duration DEFAULT_LEADER_LEASE = Duration.ofSeconds(10);
    /**
     * The directory of the default artifact store, in the log directory's parent (made absolute):
     * {@value}. A {@code file:} store; see {@link Builder#artifactStore(String)}.
     */
    public static final String DEFAULT_ARTIFACT_STORE_DIRECTORY = "artifacts";
    /**
     * Default bytes per second one authenticated worker connection may send: 128 MiB/s, above
     * what one master's log path takes from a single task (about 2-3 million lines/s of 80
     * characters), so that no well-behaved worker is ever slowed.
     */
    public static final long DEFAULT_WORKER_INBOUND_RATE = 128L << 20;
    /** Default bytes a worker connection may send at once beyond its rate: 128 MiB. */
    public static final long DEFAULT_WORKER_INBOUND_BURST = 128L << 20;
    /** Default number of attempts one worker connection may have log state open for at once. */
    public static final int DEFAULT_MAX_OPEN_ATTEMPTS_PER_WORKER = 1024;
    /** Default time after a connection's last log batch for an attempt until the attempt no longer counts as open. */
    public static final Duration DEFAULT_OPEN_ATTEMPT_TIMEOUT = Duration.ofMinutes(10);
    /** Default most bytes of one task's log file, over all its attempts, before the log is cut: 4 GiB. */
    public static final long DEFAULT_MAX_LOG_BYTES_PER_TASK = 4L << 30;
    /** The default idle timeout of an authenticated connection, in heartbeat intervals. */
    public static final int DEFAULT_WORKER_IDLE_HEARTBEATS = 3;
    /**
     * The least default idle timeout: 5 s, so that short test heartbeats (a few hundred ms) do not
     * turn a stalled JVM's pause into a reconnect, and with it an assignment lost until its ack
     * timeout.
     */
    public static final Duration DEFAULT_WORKER_IDLE_MINIMUM = Duration.ofSeconds(5);

    private final String bindHost;
    private final int rpcPort;
    private final String masterId;
    private final CoreOptions coreOptions;
    private final Path logDirectory;
    /** Null: the default, beside the log directory. */
    private final URI artifactStore;
    private final Map<String, String> artifactStoreSettings;
    private final int ioThreads;
    private final int dispatchBatch;
    private final Duration reapInterval;
    private final Duration sharingRepairInterval;
    private final Duration gpuReadingInterval;
    private final Duration dispatchInterval;
    private final Duration handshakeTimeout;
    private final Duration apiTimeout;
    private final Duration leaderLease;
    private final String advertisedHost;
    private final ProtocolOptions protocolOptions;
    private final NettyTransport transport;
    private final boolean standbyOnly;
    private final long workerInboundRate;
    private final long workerInboundBurst;
    private final int maxOpenAttemptsPerWorker;
    private final Duration openAttemptTimeout;
    private final long maxLogBytesPerTask;
    /** Null: the default, {@value #DEFAULT_WORKER_IDLE_HEARTBEATS} heartbeat intervals, at least 5 s. */
    private final Duration workerIdleTimeout;
    private final boolean workerKeysRequired;
    /** Null: plaintext. */
    private final ServerTlsOptions tls;

    private MasterOptions(Builder b) {
        this.bindHost = b.bindHost;
        this.rpcPort = b.rpcPort;
        this.masterId = b.masterId;
        this.coreOptions = b.coreOptions;
        this.logDirectory = b.logDirectory;
        this.artifactStore = b.artifactStore;
        this.artifactStoreSettings = b.artifactStoreSettings;
        this.ioThreads = b.ioThreads;
        this.dispatchBatch = b.dispatchBatch;
        this.reapInterval = b.reapInterval;
        this.sharingRepairInterval = b.sharingRepairInterval;
        this.gpuReadingInterval = b.gpuReadingInterval;
        this.dispatchInterval = b.dispatchInterval;
        this.handshakeTimeout = b.handshakeTimeout;
        this.apiTimeout = b.apiTimeout;
        this.leaderLease = b.leaderLease;
        this.advertisedHost = b.advertisedHost;
        this.protocolOptions = b.protocolOptions;
        this.transport = b.transport;
        this.standbyOnly = b.standbyOnly;
        this.workerInboundRate = b.workerInboundRate;
        this.workerInboundBurst = b.workerInboundBurst;
        this.maxOpenAttemptsPerWorker = b.maxOpenAttemptsPerWorker;
        this.openAttemptTimeout = b.openAttemptTimeout;
        this.maxLogBytesPerTask = b.maxLogBytesPerTask;
        this.workerIdleTimeout = b.workerIdleTimeout;
        this.workerKeysRequired = b.workerKeysRequired;
        this.tls = b.tls;
    }

    /** Returns a builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns options with every setting at its default. */
    public static MasterOptions defaults() {
        return builder().build();
    }

    /** Returns a builder holding these settings. */
    public Builder mutate() {
        Builder b = new Builder();
        b.bindHost = bindHost;
        b.rpcPort = rpcPort;
        b.masterId = masterId;
        b.coreOptions = coreOptions;
        b.logDirectory = logDirectory;
        b.artifactStore = artifactStore;
        b.artifactStoreSettings = artifactStoreSettings;
        b.ioThreads = ioThreads;
        b.dispatchBatch = dispatchBatch;
        b.reapInterval = reapInterval;
        b.sharingRepairInterval = sharingRepairInterval;
        b.gpuReadingInterval = gpuReadingInterval;
        b.dispatchInterval = dispatchInterval;
        b.handshakeTimeout = handshakeTimeout;
        b.apiTimeout = apiTimeout;
        b.leaderLease = leaderLease;
        b.advertisedHost = advertisedHost;
        b.protocolOptions = protocolOptions;
        b.transport = transport;
        b.standbyOnly = standbyOnly;
        b.workerInboundRate = workerInboundRate;
        b.workerInboundBurst = workerInboundBurst;
        b.maxOpenAttemptsPerWorker = maxOpenAttemptsPerWorker;
        b.openAttemptTimeout = openAttemptTimeout;
        b.maxLogBytesPerTask = maxLogBytesPerTask;
        b.workerIdleTimeout = workerIdleTimeout;
        b.workerKeysRequired = workerKeysRequired;
        b.tls = tls;
        return b;
    }

    public String getBindHost() { return bindHost; }
    public int getRpcPort() { return rpcPort; }
    /** Returns the configured master id, or null for the default ("master-&lt;pid&gt;-&lt;host&gt;", made at build). */
    public String getMasterId() { return masterId; }
    public CoreOptions getCoreOptions() { return coreOptions; }
    public Path getLogDirectory() { return logDirectory; }

    /**
     * Returns the artifact store's URI: the one set, or the default, a directory named
     * {@value #DEFAULT_ARTIFACT_STORE_DIRECTORY} in the log directory's parent (the log directory
     * made absolute against the working directory).
     */
    public URI getArtifactStore() {
        if (artifactStore != null) {
            return artifactStore;
        }
        Path logs = logDirectory.toAbsolutePath().normalize();
        Path parent = logs.getParent() == null ? logs : logs.getParent();
        return parent.resolve(DEFAULT_ARTIFACT_STORE_DIRECTORY).toUri();
    }

    /** Returns the artifact store's settings (empty by default); unmodifiable. May hold credentials: never logged. */
    public Map<String, String> getArtifactStoreSettings() { return artifactStoreSettings; }
    public int getIoThreads() { return ioThreads; }
    public int getDispatchBatch() { return dispatchBatch; }
    public Duration getReapInterval() { return reapInterval; }
    public Duration getSharingRepairInterval() { return sharingRepairInterval; }

    /** Returns the period at which the leader publishes its workers' GPU readings to Redis. */
    public Duration getGpuReadingInterval() { return gpuReadingInterval; }
    public Duration getDispatchInterval() { return dispatchInterval; }
    public Duration getHandshakeTimeout() { return handshakeTimeout; }
    public Duration getApiTimeout() { return apiTimeout; }
    public Duration getLeaderLease() { return leaderLease; }
    /** Returns the host workers are sent to, or null for the bound address (the host's address when bound to all). */
    public String getAdvertisedHost() { return advertisedHost; }
    public ProtocolOptions getProtocolOptions() { return protocolOptions; }
    public NettyTransport getTransport() { return transport; }
    public boolean isStandbyOnly() { return standbyOnly; }
    /** Returns the bytes per second one authenticated worker connection may send. */
    public long getWorkerInboundRate() { return workerInboundRate; }
    /** Returns the bytes a worker connection may send at once beyond its rate. */
    public long getWorkerInboundBurst() { return workerInboundBurst; }
    /** Returns how many attempts one worker connection may have log state open for at once. */
    public int getMaxOpenAttemptsPerWorker() { return maxOpenAttemptsPerWorker; }
    /** Returns how long after a connection's last log batch for an attempt the attempt still counts as open. */
    public Duration getOpenAttemptTimeout() { return openAttemptTimeout; }
    /** Returns the most bytes of one task's log file, over all its attempts, before the log is cut. */
    public long getMaxLogBytesPerTask() { return maxLogBytesPerTask; }

    /**
     * Returns how long an authenticated worker connection may stay silent before it is closed:
     * the one set, or {@value #DEFAULT_WORKER_IDLE_HEARTBEATS} × the core's heartbeat interval
     * and at least {@link #DEFAULT_WORKER_IDLE_MINIMUM} (30 s with the default interval).
     */
    public Duration getWorkerIdleTimeout() {
        if (workerIdleTimeout != null) {
            return workerIdleTimeout;
        }
        Duration beats = coreOptions.getHeartbeatInterval().multipliedBy(DEFAULT_WORKER_IDLE_HEARTBEATS);
        return beats.compareTo(DEFAULT_WORKER_IDLE_MINIMUM) < 0 ? DEFAULT_WORKER_IDLE_MINIMUM : beats;
    }
    /** Returns whether only hellos made with a worker key are accepted (default false: the shared secret too). */
    public boolean isWorkerKeysRequired() { return workerKeysRequired; }
    /** Returns the RPC port's TLS settings, or empty for plaintext (the default). */
    public Optional<ServerTlsOptions> getTls() { return Optional.ofNullable(tls); }

    @Override
    public String toString() {
        return "MasterOptions{bindHost=" + bindHost + ", rpcPort=" + rpcPort + ", masterId=" + masterId
                + ", coreOptions=" + coreOptions + ", logDirectory=" + logDirectory + ", artifactStore=" + getArtifactStore()
                + ", artifactStoreSettings=" + artifactStoreSettings.keySet() + ", ioThreads=" + ioThreads
                + ", dispatchBatch=" + dispatchBatch + ", reapInterval=" + reapInterval
                + ", sharingRepairInterval=" + sharingRepairInterval + ", gpuReadingInterval=" + gpuReadingInterval
                + ", dispatchInterval=" + dispatchInterval + ", handshakeTimeout=" + handshakeTimeout
                + ", apiTimeout=" + apiTimeout + ", leaderLease=" + leaderLease + ", advertisedHost=" + advertisedHost
                + ", protocolOptions=" + protocolOptions + ", transport=" + transport + ", standbyOnly=" + standbyOnly
                + ", workerInboundRate=" + workerInboundRate + ", workerInboundBurst=" + workerInboundBurst
                + ", maxOpenAttemptsPerWorker=" + maxOpenAttemptsPerWorker + ", openAttemptTimeout=" + openAttemptTimeout
                + ", maxLogBytesPerTask=" + maxLogBytesPerTask + ", workerIdleTimeout=" + getWorkerIdleTimeout()
                + ", workerKeysRequired=" + workerKeysRequired
                + ", tls=" + (tls == null ? "off" : tls) + '}';
    }

    /** Builds {@link MasterOptions}; each setter validates at once. Not thread-safe. */
    public static final class Builder {
        private String bindHost = DEFAULT_BIND_HOST;
        private int rpcPort = DEFAULT_RPC_PORT;
        private String masterId;
        private CoreOptions coreOptions = CoreOptions.defaults();
        private Path logDirectory = DEFAULT_LOG_DIRECTORY;
        private URI artifactStore;
        private Map<String, String> artifactStoreSettings = Map.of();
        private int ioThreads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
        private int dispatchBatch = DEFAULT_DISPATCH_BATCH;
        private Duration reapInterval = DEFAULT_REAP_INTERVAL;
        private Duration sharingRepairInterval = DEFAULT_SHARING_REPAIR_INTERVAL;
        private Duration gpuReadingInterval = DEFAULT_GPU_READING_INTERVAL;
        private Duration dispatchInterval = DEFAULT_DISPATCH_INTERVAL;
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private Duration apiTimeout = DEFAULT_API_TIMEOUT;
        private Duration leaderLease = DEFAULT_LEADER_LEASE;
        private String advertisedHost;
        private ProtocolOptions protocolOptions = ProtocolOptions.defaults();
        private NettyTransport transport = NettyTransport.best();
        private boolean standbyOnly;
        private long workerInboundRate = DEFAULT_WORKER_INBOUND_RATE;
        private long workerInboundBurst = DEFAULT_WORKER_INBOUND_BURST;
        private int maxOpenAttemptsPerWorker = DEFAULT_MAX_OPEN_ATTEMPTS_PER_WORKER;
        private Duration openAttemptTimeout = DEFAULT_OPEN_ATTEMPT_TIMEOUT;
        private long maxLogBytesPerTask = DEFAULT_MAX_LOG_BYTES_PER_TASK;
        private Duration workerIdleTimeout;
        private boolean workerKeysRequired;
        private ServerTlsOptions tls;

        private Builder() {
        }

        /** Sets the interface to bind the RPC server to; default all interfaces ("0.0.0.0"). */
        public Builder bindHost(String host) {
            this.bindHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Sets the RPC port, 0 (any free port) to 65535; default 9000. */
        public Builder rpcPort(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("rpcPort must be between 0 and 65535, was " + port);
            }
            this.rpcPort = port;
            return this;
        }

        /** Sets this master's id; default "master-&lt;pid&gt;-&lt;host&gt;". */
        public Builder masterId(String id) {
            this.masterId = TaskIds.require(id, "master id");
            return this;
        }

        /** Sets the lease core settings (namespace, leases, limits); default {@link CoreOptions#defaults()}. */
        public Builder coreOptions(CoreOptions options) {
            this.coreOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Sets the directory of task log files; default "logs". Created if missing. */
        public Builder logDirectory(Path dir) {
            this.logDirectory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * Sets the artifact store, where the master copies each run's log once it ended (and
         * where workers put checkpoints and outputs): {@code file:/srv/runs}, a plain path (made
         * absolute), or {@code s3://bucket/prefix?endpoint=...} (with scheduler-store-s3 on the
         * classpath). Default: a directory named {@value #DEFAULT_ARTIFACT_STORE_DIRECTORY}
         * beside the log directory, fine for one machine; on a lab, a mount every machine sees or
         * S3. The master publishes it in Redis for the workers, so put no credentials in it: they
         * go in {@link #artifactStoreSettings}. Opened at start.
         *
         * @throws IllegalArgumentException if it is neither a URI nor a path
         */
        public Builder artifactStore(String uri) {
            this.artifactStore = ArtifactStores.parse(uri);
            return this;
        }

        /**
         * Sets the artifact store's settings, as its provider documents them (an S3 store's
         * endpoint, region, credentials); they win over the URI's query. Kept on this machine:
         * never published, never logged. Default none.
         */
        public Builder artifactStoreSettings(Map<String, String> settings) {
            Objects.requireNonNull(settings, "settings").forEach((name, value) -> {
                Objects.requireNonNull(name, "an artifact store setting's name");
                Objects.requireNonNull(value, () -> "artifact store setting " + name);
            });
            this.artifactStoreSettings = Map.copyOf(settings);
            return this;
        }

        /** Sets the number of I/O event loops, 1 to 256; default min(4, cores). */
        public Builder ioThreads(int threads) {
            this.ioThreads = Checks.range(threads, 1, 256, "ioThreads");
            return this;
        }

        /** Sets the assignments per worker per dispatch round, 1 to 1000; default 16. */
        public Builder dispatchBatch(int batch) {
            this.dispatchBatch = Checks.range(batch, 1, 1000, "dispatchBatch");
            return this;
        }

        /**
         * Sets the period of the repair pass of the sharing between owners, which the leader runs:
         * it rebuilds the owners' counters, queues and
         * reservations from the task records where they disagree, and counts its corrections in
         * {@code health()}. 1 s to 1 day; default 10 min.
         */
        public Builder sharingRepairInterval(Duration interval) {
            this.sharingRepairInterval = Checks.range(interval, Duration.ofSeconds(1), Duration.ofDays(1),
                    "sharingRepairInterval");
            return this;
        }

        /**
         * Sets the period at which the leader publishes the GPU readings (memory, utilisation) of
         * the workers connected to it to Redis, where every master's {@link SchedulerMaster#gpuReadings()}
         * reads them; only changed readings are written. 100 ms to 1 h; default 5 s.
         */
        public Builder gpuReadingInterval(Duration interval) {
            this.gpuReadingInterval = Checks.range(interval, Duration.ofMillis(100), Duration.ofHours(1),
                    "gpuReadingInterval");
            return this;
        }

        /** Sets the reaper's period, 1 ms to 1 h; default 500 ms. */
        public Builder reapInterval(Duration interval) {
            this.reapInterval = Checks.range(interval, Duration.ofMillis(1), Duration.ofHours(1), "reapInterval");
            return this;
        }

        /** Sets the period of the backstop dispatch round, 1 ms to 1 h; default 1 s. */
        public Builder dispatchInterval(Duration interval) {
            this.dispatchInterval = Checks.range(interval, Duration.ofMillis(1), Duration.ofHours(1), "dispatchInterval");
            return this;
        }

        /** Sets how long a new connection has to authenticate, 10 ms to 1 h; default 10 s. */
        public Builder handshakeTimeout(Duration timeout) {
            this.handshakeTimeout = Checks.range(timeout, Duration.ofMillis(10), Duration.ofHours(1), "handshakeTimeout");
            return this;
        }

        /**
         * Sets the leadership lease: only the master holding it dispatches and reaps; the others
         * accept submissions and queries and send connecting workers to the leader. Renewed every
         * third of it; a leader that cannot renew for the whole lease steps down. 100 ms to 1 h;
         * default 10 s.
         */
        public Builder leaderLease(Duration lease) {
            this.leaderLease = Checks.range(lease, Duration.ofMillis(100), Duration.ofHours(1), "leaderLease");
            return this;
        }

        /**
         * Makes the master standby-only (default false): it never acquires the leadership lease,
         * even when no master holds it, so it never dispatches or reaps. It still accepts
         * submissions, cancels and queries, follows task events and completes result futures,
         * and sends workers that connect to it on to the current leader (it reads who leads, by
         * the Redis clock, every third of the leader lease). For an "API-only" master embedded in
         * an application (a lab portal, a CLI, a test harness) beside dedicated masters that
         * lead: it can never take leadership from them, and stopping or crashing it never causes
         * a failover. Tasks submitted through it wait in the queue until some other master leads.
         */
        public Builder standbyOnly(boolean standbyOnly) {
            this.standbyOnly = standbyOnly;
            return this;
        }

        /** Sets the host workers should use to reach this master; default the bound address, or the host's address when bound to all. */
        public Builder advertisedHost(String host) {
            this.advertisedHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Sets the bound of the blocking API methods, 1 ms to 1 day; default 30 s. */
        public Builder apiTimeout(Duration timeout) {
            this.apiTimeout = Checks.range(timeout, Duration.ofMillis(1), Duration.ofDays(1), "apiTimeout");
            return this;
        }

        /** Sets the codec settings (maximum frame length); default {@link ProtocolOptions#defaults()}. */
        public Builder protocolOptions(ProtocolOptions options) {
            this.protocolOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Sets the socket transport; default epoll where available, else NIO. */
        public Builder transport(NettyTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * Sets how many bytes per second one authenticated worker connection may send, 1 KiB/s to
         * 1 TiB/s; default {@value #DEFAULT_WORKER_INBOUND_RATE} (128 MiB/s). Beyond its burst a
         * connection is read no faster than this (the master pauses reading it; the worker's
         * socket fills, and its own writes wait). The handshake is not counted.
         */
        public Builder workerInboundRate(long bytesPerSecond) {
            this.workerInboundRate = Checks.range(bytesPerSecond, 1L << 10, 1L << 40, "workerInboundRate");
            return this;
        }

        /** Sets how many bytes a worker connection may send at once beyond its rate, 1 KiB to 1 TiB; default 128 MiB. */
        public Builder workerInboundBurst(long bytes) {
            this.workerInboundBurst = Checks.range(bytes, 1L << 10, 1L << 40, "workerInboundBurst");
            return this;
        }

        /**
         * Sets how many attempts (task id and epoch) one worker connection may have log state
         * open for at this master at once, 1 to 1,000,000; default 1,024. A log batch for one more
         * is refused with {@code ERROR(LIMIT_EXCEEDED)} and nothing of it is written. An attempt
         * closes when its log ends, or {@link #openAttemptTimeout} after its last batch.
         */
        public Builder maxOpenAttemptsPerWorker(int attempts) {
            this.maxOpenAttemptsPerWorker = Checks.range(attempts, 1, 1_000_000, "maxOpenAttemptsPerWorker");
            return this;
        }

        /**
         * Sets how long after a connection's last log batch for an attempt the attempt still
         * counts as open for it (when its end was never heard of), 100 ms to 1 day; default 10 min.
         */
        public Builder openAttemptTimeout(Duration timeout) {
            this.openAttemptTimeout = Checks.range(timeout, Duration.ofMillis(100), Duration.ofDays(1), "openAttemptTimeout");
            return this;
        }

        /**
         * Sets the most bytes of one task's log file, over all its attempts, 1 KiB and more;
         * default 4 GiB. The output line that would take the file past it and every later one
         * are not written (they are acknowledged, and the worker told to stop sending them); the
         * file ends its output with a cut marker, the task record says so
         * ({@code TaskRecord.isLogCut()}), and so does the log's END_OF_STREAM. The task runs on.
         */
        public Builder maxLogBytesPerTask(long bytes) {
            this.maxLogBytesPerTask = Checks.range(bytes, 1L << 10, Long.MAX_VALUE, "maxLogBytesPerTask");
            return this;
        }

        /**
         * Sets how long an authenticated worker connection may send nothing at all before it is
         * closed (one log line; the worker reconnects), 10 ms to 1 day and at least twice the
         * core's heartbeat interval (checked in {@link #build()}); default
         * {@value #DEFAULT_WORKER_IDLE_HEARTBEATS} heartbeat intervals, at least 5 s. A worker heartbeats every
         * interval, so only a peer that stopped is closed. Connections that have not
         * authenticated have {@link #handshakeTimeout} instead.
         */
        public Builder workerIdleTimeout(Duration timeout) {
            this.workerIdleTimeout = Checks.range(timeout, Duration.ofMillis(10), Duration.ofDays(1), "workerIdleTimeout");
            return this;
        }

        /**
         * Makes the master accept only hellos made with a worker key (default false: it accepts
         * the shared secret too, for small labs). Either way a worker id that has a key must say
         * hello with it, and a revoked one is refused (SchedulerMaster.workerKeys()).
         */
        public Builder workerKeysRequired(boolean required) {
            this.workerKeysRequired = required;
            return this;
        }

        /**
         * Puts TLS on the RPC port (default off: plaintext): workers must connect with TLS, and
         * with {@link io.rlscheduler.protocol.ClientAuthMode#REQUIRE} present a certificate signed by
         * a trusted CA; a worker that presents one must say hello with the worker id its
         * certificate names (its subject's CN), or it is rejected {@code INVALID_IDENTITY}. The
         * handshake's proof of the secret is still required, inside TLS. The settings were read and
         * checked when built; the TLS context is made at start.
         */
        public Builder tls(ServerTlsOptions tls) {
            this.tls = Objects.requireNonNull(tls, "tls");
            return this;
        }

        /**
         * Returns the options.
         *
         * @throws IllegalArgumentException if {@code workerIdleTimeout} is less than twice the
         *                                  core's heartbeat interval
         */
        public MasterOptions build() {
            Duration heartbeats = coreOptions.getHeartbeatInterval().multipliedBy(2);
            if (workerIdleTimeout != null && workerIdleTimeout.compareTo(heartbeats) < 0) {
                throw new IllegalArgumentException("workerIdleTimeout must be at least twice the heartbeat interval ("
                        + heartbeats + "), was " + workerIdleTimeout);
            }
            return new MasterOptions(this);
        }
    }
}
