package io.rlscheduler.worker;

import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.internal.Checks;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ClientTlsOptions;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.WorkerKey;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Immutable settings of a {@link SchedulerWorker}. Thread-safe; a running worker holds one such
 * value, so changing a builder after {@link Builder#build()} changes nothing that runs.
 *
 * <pre>
 *  setting            default                        unit / range
 *  -----------------  -----------------------------  ------------------------------------------------
 *  masters            required                       host:port, tried in turn
 *  redis              required (or a RedisClient     the Redis server; the worker creates and owns
 *                     given to the worker's builder)   its client
 *  workerId           required                       stable for the machine (see TaskIds)
 *  secret             required without a worker key  the shared secret, at least 16 bytes
 *  gpuIds             those nvidia-smi reports       distinct, each 0 to 1023 (none without nvidia-smi)
 *  cpuSlots           the number of processors       1 or more
 *  memoryBytes        the physical memory            0 to 2^46
 *  labels             none                           keys and values 1 to 63 of [A-Za-z0-9._/-]
 *  scriptRoots        scripts                        directories scripts must resolve inside
 *  runRoot            runs                           &lt;runRoot&gt;/&lt;taskId&gt;/attempt-&lt;n&gt; and .../checkpoints
 *  stateDirectory     &lt;runRoot&gt;/.worker/&lt;workerId&gt;  launcher and process-group ids
 *  coreOptions        CoreOptions.defaults()         must equal the master's (namespace, leases)
 *  killGrace          10 s                           TERM to KILL when a task is stopped; 0 to 1 h
 *  reconnectBackoff   100 ms, 10 s                   first and longest reconnect delay (doubling,
 *                                                      with jitter); each 1 ms to 1 h, min &lt;= max
 *  logFlushInterval   50 ms                          the most a line waits before it is sent; 1 ms to 1 h
 *  logBatchLines      1000                           lines per log batch (also at most 512 KiB);
 *                                                      1 to 100,000
 *  maxBufferedLines   100000                         unacknowledged lines per attempt before its
 *                                                      output is slowed; at least 100
 *  nvidiaSmi          nvidia-smi                     command name on the PATH, or a path
 *  artifacts          ArtifactOptions.defaults()     the artifact store, checkpoints and outputs
 *  transport          epoll where available, else NIO
 *  protocolOptions    ProtocolOptions.defaults()     codec settings
 *  workerKey          none                           this machine's own key (its material), used in
 *                                                      the hello instead of the shared secret
 *  workerKeyFile      none                           a file holding it, read at every connection
 *  tls                none (plaintext)               ClientTlsOptions: TLS to the masters, a client
 *                                                      certificate, host name verification
 * </pre>
 */
public final class WorkerOptions {

    /** Default grace between TERM and KILL when a task is stopped. */
    public static final Duration DEFAULT_KILL_GRACE = Duration.ofSeconds(10);
    /** Default delay before the first reconnect; doubles up to the maximum, with jitter. */
    public static final Duration DEFAULT_RECONNECT_MIN = Duration.ofMillis(100);
    /** Default longest delay between reconnects. */
    public static final Duration DEFAULT_RECONNECT_MAX = Duration.ofSeconds(10);
    /** Default period of log batches. */
    public static final Duration DEFAULT_LOG_FLUSH_INTERVAL = Duration.ofMillis(50);
    /** Default most lines per log batch. */
    public static final int DEFAULT_LOG_BATCH_LINES = 1000;
    /** Default most unacknowledged lines kept per attempt before the task is slowed down. */
    public static final int DEFAULT_MAX_BUFFERED_LINES = 100_000;
    /** Default directory scripts must resolve inside. */
    public static final Path DEFAULT_SCRIPT_ROOT = Path.of("scripts");
    /** Default root of run directories. */
    public static final Path DEFAULT_RUN_ROOT = Path.of("runs");
    /** Default nvidia-smi command. */
    public static final String DEFAULT_NVIDIA_SMI = "nvidia-smi";

    private static final Duration MIN_INTERVAL = Duration.ofMillis(1);
    private static final Duration MAX_INTERVAL = Duration.ofHours(1);

    private final List<InetSocketAddress> masters;
    private final RedisURI redisUri;
    private final String workerId;
    private final byte[] secret;
    private final List<Integer> gpuIds;
    private final int cpuSlots;
    private final long memoryBytes;
    private final Map<String, String> labels;
    private final List<Path> scriptRoots;
    private final Path runRoot;
    private final Path stateDirectory;
    private final CoreOptions coreOptions;
    private final Duration killGrace;
    private final Duration reconnectMin;
    private final Duration reconnectMax;
    private final Duration logFlushInterval;
    private final int logBatchLines;
    private final int maxBufferedLines;
    private final String nvidiaSmi;
    private final ArtifactOptions artifacts;
    private final NettyTransport transport;
    private final ProtocolOptions protocolOptions;
    private final WorkerKey workerKey;
    private final Path workerKeyFile;
    /** Null: plaintext. */
    private final ClientTlsOptions tls;

    private WorkerOptions(Builder b) {
        this.masters = b.masters;
        this.redisUri = b.redisUri;
        this.workerId = b.workerId;
        this.secret = b.secret == null ? new byte[0] : b.secret.clone();
        this.gpuIds = b.gpuIds;
        this.cpuSlots = b.cpuSlots;
        this.memoryBytes = b.memoryBytes;
        this.labels = b.labels;
        this.scriptRoots = b.scriptRoots;
        this.runRoot = b.runRoot;
        this.stateDirectory = b.stateDirectory;
        this.coreOptions = b.coreOptions;
        this.killGrace = b.killGrace;
        this.reconnectMin = b.reconnectMin;
        this.reconnectMax = b.reconnectMax;
        this.logFlushInterval = b.logFlushInterval;
        this.logBatchLines = b.logBatchLines;
        this.maxBufferedLines = b.maxBufferedLines;
        this.nvidiaSmi = b.nvidiaSmi;
        this.artifacts = b.artifacts;
        this.transport = b.transport;
        this.protocolOptions = b.protocolOptions;
        this.workerKey = b.workerKey;
        this.workerKeyFile = b.workerKeyFile;
        this.tls = b.tls;
    }

    /** Returns a builder with every setting at its default and the required ones unset. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns a builder holding these settings. */
    public Builder mutate() {
        Builder b = new Builder();
        b.masters = masters;
        b.redisUri = redisUri;
        b.workerId = workerId;
        b.secret = secret.length == 0 ? null : secret.clone();
        b.gpuIds = gpuIds;
        b.cpuSlots = cpuSlots;
        b.memoryBytes = memoryBytes;
        b.labels = labels;
        b.scriptRoots = scriptRoots;
        b.runRoot = runRoot;
        b.stateDirectory = stateDirectory;
        b.coreOptions = coreOptions;
        b.killGrace = killGrace;
        b.reconnectMin = reconnectMin;
        b.reconnectMax = reconnectMax;
        b.logFlushInterval = logFlushInterval;
        b.logBatchLines = logBatchLines;
        b.maxBufferedLines = maxBufferedLines;
        b.nvidiaSmi = nvidiaSmi;
        b.artifacts = artifacts;
        b.transport = transport;
        b.protocolOptions = protocolOptions;
        b.workerKey = workerKey;
        b.workerKeyFile = workerKeyFile;
        b.tls = tls;
        return b;
    }

    /** Returns the masters, as unresolved addresses, in the order they are tried. */
    public List<InetSocketAddress> getMasters() { return masters; }
    /** Returns the Redis server, or empty where the worker is given a client instead. */
    public Optional<RedisURI> getRedisUri() { return Optional.ofNullable(redisUri); }
    public String getWorkerId() { return workerId; }
    /** Returns a copy of the shared secret; empty when only a worker key is set. */
    public byte[] getSecret() { return secret.clone(); }
    /** Returns the GPU ids offered, or empty for those nvidia-smi reports. */
    public Optional<List<Integer>> getGpuIds() { return Optional.ofNullable(gpuIds); }
    public int getCpuSlots() { return cpuSlots; }
    /** Returns the memory offered in bytes, or empty for the machine's physical memory. */
    public OptionalLong getMemoryBytes() { return memoryBytes >= 0 ? OptionalLong.of(memoryBytes) : OptionalLong.empty(); }
    public Map<String, String> getLabels() { return labels; }
    public List<Path> getScriptRoots() { return scriptRoots; }
    public Path getRunRoot() { return runRoot; }
    /** Returns the state directory: as set, else {@code <runRoot>/.worker/<workerId>}. */
    public Path getStateDirectory() {
        return stateDirectory != null ? stateDirectory : runRoot.resolve(".worker").resolve(workerId);
    }
    public CoreOptions getCoreOptions() { return coreOptions; }
    public Duration getKillGrace() { return killGrace; }
    public Duration getReconnectMin() { return reconnectMin; }
    public Duration getReconnectMax() { return reconnectMax; }
    public Duration getLogFlushInterval() { return logFlushInterval; }
    public int getLogBatchLines() { return logBatchLines; }
    public int getMaxBufferedLines() { return maxBufferedLines; }
    public String getNvidiaSmi() { return nvidiaSmi; }
    /** Returns the artifact store, checkpoint and output settings. */
    public ArtifactOptions getArtifacts() { return artifacts; }
    public NettyTransport getTransport() { return transport; }
    public ProtocolOptions getProtocolOptions() { return protocolOptions; }
    /** Returns the worker key given as such ({@link Builder#workerKey}), or empty. */
    public Optional<WorkerKey> getWorkerKey() { return Optional.ofNullable(workerKey); }
    /** Returns the file the worker key is read from ({@link Builder#workerKeyFile}), or empty. */
    public Optional<Path> getWorkerKeyFile() { return Optional.ofNullable(workerKeyFile); }
    /** Returns the TLS settings of the connections to the masters, or empty for plaintext (the default). */
    public Optional<ClientTlsOptions> getTls() { return Optional.ofNullable(tls); }

    /** Returns the settings, the secret and the worker key's secret part left out. */
    @Override
    public String toString() {
        return "WorkerOptions{masters=" + masters + ", redis=" + redisUri + ", workerId=" + workerId
                + ", gpuIds=" + (gpuIds == null ? "detected" : gpuIds) + ", cpuSlots=" + cpuSlots
                + ", memoryBytes=" + (memoryBytes < 0 ? "detected" : memoryBytes) + ", labels=" + labels
                + ", scriptRoots=" + scriptRoots + ", runRoot=" + runRoot + ", stateDirectory=" + getStateDirectory()
                + ", coreOptions=" + coreOptions + ", killGrace=" + killGrace + ", reconnectBackoff=" + reconnectMin
                + ".." + reconnectMax + ", logFlushInterval=" + logFlushInterval + ", logBatchLines=" + logBatchLines
                + ", maxBufferedLines=" + maxBufferedLines + ", nvidiaSmi=" + nvidiaSmi + ", artifacts=" + artifacts
                + (workerKey != null ? ", workerKey=" + workerKey.getKeyId() : "")
                + (workerKeyFile != null ? ", workerKeyFile=" + workerKeyFile : "")
                + ", tls=" + (tls == null ? "off" : tls) + '}';
    }

    /** Builds {@link WorkerOptions}; each setter validates at once, {@link #build()} across fields. Not thread-safe. */
    public static final class Builder {
        private List<InetSocketAddress> masters;
        private RedisURI redisUri;
        private String workerId;
        private byte[] secret;
        private List<Integer> gpuIds;
        private int cpuSlots = Runtime.getRuntime().availableProcessors();
        private long memoryBytes = -1;
        private Map<String, String> labels = Map.of();
        private List<Path> scriptRoots = List.of(DEFAULT_SCRIPT_ROOT);
        private Path runRoot = DEFAULT_RUN_ROOT;
        private Path stateDirectory;
        private CoreOptions coreOptions = CoreOptions.defaults();
        private Duration killGrace = DEFAULT_KILL_GRACE;
        private Duration reconnectMin = DEFAULT_RECONNECT_MIN;
        private Duration reconnectMax = DEFAULT_RECONNECT_MAX;
        private Duration logFlushInterval = DEFAULT_LOG_FLUSH_INTERVAL;
        private int logBatchLines = DEFAULT_LOG_BATCH_LINES;
        private int maxBufferedLines = DEFAULT_MAX_BUFFERED_LINES;
        private String nvidiaSmi = DEFAULT_NVIDIA_SMI;
        private ArtifactOptions artifacts = ArtifactOptions.defaults();
        private NettyTransport transport = NettyTransport.best();
        private ProtocolOptions protocolOptions = ProtocolOptions.defaults();
        private WorkerKey workerKey;
        private Path workerKeyFile;
        private ClientTlsOptions tls;

        private Builder() {
        }

        /** Sets the masters to connect to, as "host:port", tried in turn. Required. */
        public Builder masters(String... addresses) {
            List<InetSocketAddress> list = new ArrayList<>();
            for (String address : addresses) {
                list.add(parseMaster(address));
            }
            if (list.isEmpty()) {
                throw new IllegalArgumentException("at least one master address is required");
            }
            this.masters = List.copyOf(list);
            return this;
        }

        private static InetSocketAddress parseMaster(String address) {
            int colon = address == null ? -1 : address.lastIndexOf(':');
            if (colon <= 0 || colon == address.length() - 1) {
                throw new IllegalArgumentException("master address must be host:port, was '" + address + "'");
            }
            int port;
            try {
                port = Integer.parseInt(address.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("master address must be host:port, was '" + address + "'");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("master port must be 1 to 65535, was " + port);
            }
            return InetSocketAddress.createUnresolved(address.substring(0, colon), port);
        }

        /** Sets the Redis server; the worker creates and owns its client. */
        public Builder redis(RedisURI uri) {
            this.redisUri = Objects.requireNonNull(uri, "uri");
            return this;
        }

        /** Leaves the Redis server unset: the worker is given a client of its own instead. */
        Builder noRedis() {
            this.redisUri = null;
            return this;
        }

        /** Sets the worker id: stable for the machine (see {@link TaskIds}). Required. */
        public Builder workerId(String id) {
            this.workerId = TaskIds.require(id, "worker id");
            return this;
        }

        /** Sets the shared secret; at least 16 bytes. Required. */
        public Builder secret(byte[] secret) {
            this.secret = HandshakeProof.requireValidSecret(secret).clone();
            return this;
        }

        /** Sets the shared secret from a string (its UTF-8 bytes). */
        public Builder secret(String secret) {
            return secret(Objects.requireNonNull(secret, "secret").getBytes(StandardCharsets.UTF_8));
        }

        /** Sets the GPU ids this worker offers, distinct, each 0 to 1023; default those nvidia-smi reports (none without it). */
        public Builder gpuIds(Integer... ids) {
            return gpuIds(Arrays.asList(Objects.requireNonNull(ids, "ids")));
        }

        /** Sets the GPU ids this worker offers, distinct, each 0 to 1023. */
        public Builder gpuIds(List<Integer> ids) {
            // Checked as registration checks them: start() would otherwise fail only after it
            // killed leftover processes and reached Redis, with a failure no retry can fix.
            this.gpuIds = List.copyOf(WorkerRegistration.requireValidGpuIds(ids));
            return this;
        }

        /** Sets the CPU slots offered, 1 or more; default the number of processors. */
        public Builder cpuSlots(int slots) {
            if (slots < 1) {
                throw new IllegalArgumentException("cpuSlots must be at least 1, was " + slots);
            }
            this.cpuSlots = slots;
            return this;
        }

        /** Sets the memory offered in bytes, 0 to 2^46; default the machine's physical memory. */
        public Builder memoryBytes(long bytes) {
            if (bytes < 0 || bytes > TaskDefinition.MAX_MEMORY_BYTES) {
                throw new IllegalArgumentException("memoryBytes must be between 0 and " + TaskDefinition.MAX_MEMORY_BYTES
                        + ", was " + bytes);
            }
            this.memoryBytes = bytes;
            return this;
        }

        /** Sets the labels task selectors match against, keys and values 1 to 63 of [A-Za-z0-9._/-]; default none. */
        public Builder labels(Map<String, String> labels) {
            Objects.requireNonNull(labels, "labels");
            labels.forEach((k, v) -> {
                if (!TaskDefinition.isValidLabel(k) || !TaskDefinition.isValidLabel(v)) {
                    // A label no selector can name could never be matched.
                    throw new IllegalArgumentException("label key and value must be 1 to 63 of [A-Za-z0-9._/-], was '"
                            + k + "'='" + v + "'");
                }
            });
            this.labels = Map.copyOf(labels);
            return this;
        }

        /** Sets the directories scripts must resolve inside; default "scripts". */
        public Builder scriptRoots(Path... roots) {
            if (roots.length == 0) {
                throw new IllegalArgumentException("at least one script root is required");
            }
            this.scriptRoots = List.of(roots);
            return this;
        }

        /** Sets the root of run directories ({@code <root>/<taskId>/attempt-<n>} and {@code <root>/<taskId>/checkpoints}); default "runs". */
        public Builder runRoot(Path root) {
            this.runRoot = Objects.requireNonNull(root, "root");
            return this;
        }

        /** Sets the worker's state directory (launcher, process-group ids); default {@code <runRoot>/.worker/<workerId>}. */
        public Builder stateDirectory(Path dir) {
            this.stateDirectory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /** Sets the lease core settings; must equal the master's (namespace, leases). */
        public Builder coreOptions(CoreOptions options) {
            this.coreOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Sets the grace between TERM and KILL when a task is stopped, 0 to 1 h; default 10 s. */
        public Builder killGrace(Duration grace) {
            this.killGrace = Checks.range(grace, Duration.ZERO, PythonTaskExecutor.MAX_GRACE_PERIOD, "killGrace");
            return this;
        }

        /** Sets the first and the longest reconnect delay, each 1 ms to 1 h, min &lt;= max; defaults 100 ms and 10 s. */
        public Builder reconnectBackoff(Duration min, Duration max) {
            Checks.range(min, MIN_INTERVAL, MAX_INTERVAL, "min");
            Checks.range(max, min, MAX_INTERVAL, "max");
            this.reconnectMin = min;
            this.reconnectMax = max;
            return this;
        }

        /**
         * Sets the most lines per log batch, 1 to 100,000; default 1,000. A batch holds whole
         * blocks of lines as they were read from the task's pipe (up to 64 KiB each; a single
         * block larger than this still goes, alone) and also stops at 512 KiB. When this many
         * lines (or 512 KiB) wait, they are sent at once instead of at the next flush tick.
         */
        public Builder logBatchLines(int lines) {
            this.logBatchLines = Checks.range(lines, 1, 100_000, "logBatchLines");
            return this;
        }

        /**
         * Sets the period of log batches, 1 ms to 1 h; default 50 ms: lines are sent at most this
         * long after they were printed, or sooner when a full batch waits or the socket drained.
         */
        public Builder logFlushInterval(Duration interval) {
            this.logFlushInterval = Checks.range(interval, MIN_INTERVAL, MAX_INTERVAL, "logFlushInterval");
            return this;
        }

        /** Sets the most unacknowledged lines kept per attempt before its output is slowed, at least 100; default 100,000. */
        public Builder maxBufferedLines(int lines) {
            if (lines < 100) {
                throw new IllegalArgumentException("maxBufferedLines must be at least 100, was " + lines);
            }
            this.maxBufferedLines = lines;
            return this;
        }

        /** Sets the nvidia-smi command (name on the PATH, or a path); default "nvidia-smi". */
        public Builder nvidiaSmi(String command) {
            this.nvidiaSmi = Objects.requireNonNull(command, "command");
            return this;
        }

        /** Sets the artifact store, checkpoint and output settings; default {@link ArtifactOptions#defaults()}. */
        public Builder artifacts(ArtifactOptions options) {
            this.artifacts = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Sets the socket transport; default epoll where available, else NIO. */
        public Builder transport(NettyTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** Sets the codec settings; default {@link ProtocolOptions#defaults()}. */
        public Builder protocolOptions(ProtocolOptions options) {
            this.protocolOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * Sets this machine's own key, its material as a master's {@code workerKeys().issue(...)}
         * gave it ({@code rlswk1:<worker id>:<key id>:<private key>}): the worker says hello with
         * it instead of the shared secret. Replaces a key file set before. Default none.
         *
         * @throws IllegalArgumentException if it is not a worker key's material (the message never repeats it)
         */
        public Builder workerKey(String material) {
            this.workerKey = WorkerKey.parse(material);
            this.workerKeyFile = null;
            return this;
        }

        /**
         * Sets the file that holds this machine's own key (its material, one line): the worker
         * says hello with it instead of the shared secret, and reads the file at every connection,
         * so that a key rotated and written there is used from the next connection on. The file
         * must be readable by the worker's user alone: the worker warns when others may read it.
         * Replaces a key set before. Default none.
         */
        public Builder workerKeyFile(Path file) {
            this.workerKeyFile = Objects.requireNonNull(file, "file");
            this.workerKey = null;
            return this;
        }

        /**
         * Connects to the masters over TLS (default off: plaintext); the masters' RPC port must use
         * TLS too. The master's certificate must be signed by a trusted CA and, unless host name
         * verification is turned off, name the host dialled (as configured here, or as a standby
         * names the leader: its advertised host). With a client certificate, its subject's CN must
         * be this worker's id. The shared secret is still proven, inside TLS. The settings were
         * read and checked when built; the TLS context is made at start.
         */
        public Builder tls(ClientTlsOptions tls) {
            this.tls = Objects.requireNonNull(tls, "tls");
            return this;
        }

        /**
         * Returns the options.
         *
         * @throws IllegalStateException if masters or worker id is missing, if neither a secret nor
         *                               a worker key is set, or if the worker key is another worker's
         */
        public WorkerOptions build() {
            if (masters == null) {
                throw new IllegalStateException("at least one master is required: call masters(\"host:port\")");
            }
            if (workerId == null) {
                throw new IllegalStateException("a worker id is required: call workerId(...)");
            }
            if (secret == null && workerKey == null && workerKeyFile == null) {
                throw new IllegalStateException("a shared secret or a worker key is required: call secret(...),"
                        + " workerKey(...) or workerKeyFile(...)");
            }
            if (workerKey != null && !workerKey.getWorkerId().equals(workerId)) {
                throw new IllegalStateException("the worker key " + workerKey.getKeyId() + " is worker " + workerKey.getWorkerId()
                        + "'s, not worker " + workerId + "'s");
            }
            return new WorkerOptions(this);
        }
    }
}
