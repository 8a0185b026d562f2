package io.rlscheduler.bench.harness;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.protocol.ClientTlsOptions;
import io.rlscheduler.protocol.ServerTlsOptions;
import io.rlscheduler.redis.embedded.RedisServerBinary;
import io.rlscheduler.testkit.TestCertificates;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import io.rlscheduler.worker.TaskExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A whole cluster in this JVM for end-to-end benchmarks: one Redis (a redis-server started here
 * by the testkit, or the server named by {@code REDIS_URL}), one master, and in-process workers
 * that all use the given {@link TaskExecutor}, with their own Redis clients and connected to the
 * master over loopback TCP, as separate machines would be. Also a plain Lettuce connection of the
 * harness's own, for baselines and Redis statistics.
 *
 * <p>Persistence of a started server is {@link Settings#aof}: {@code TestRedis} starts servers
 * with {@code appendfsync always} (every write waits for an fsync), which would measure the disk;
 * the harness switches it with {@code CONFIG SET} to {@code off} (the default, as in
 * LeaseScriptBenchmark), {@code everysec} or {@code always} (AOF rewrites off for the last two). An
 * external server's settings are left as they are.
 *
 * <p>With {@link Settings#tls} the master's RPC port and the workers' connections use TLS, as a lab
 * that turns it on does ({@link #TLS}).
 *
 * <p>The master's task logs and the workers' run directories go to a new directory under
 * {@link Settings#workParent} (normally {@code java.io.tmpdir}), which {@link #close()} deletes.
 */
public final class LocalCluster implements AutoCloseable {

    /** How to build the cluster; {@code tls}: master and workers over TLS ({@link #TLS}). */
    public record Settings(int workers, int cpuSlotsPerWorker, TaskExecutor executor, int dispatchBatch, String aof,
                           Path workParent, boolean tls) {

        /** Reads the cluster's shape from the parameters of {@link #PARAMETERS}. */
        public static Settings from(BenchParams p, TaskExecutor executor) {
            return new Settings(p.getInt("workers", 1), p.getInt("slots", 1), executor, p.getInt("dispatchBatch", 1),
                    p.get("aof"), Path.of(p.get("workDir")), p.getBoolean(TLS.name()));
        }
    }

    /**
     * The parameter that puts the master's RPC port and the workers' connections on TLS: a CA and
     * the master's certificate made with keytool at start (outside the measurement), workers that
     * trust the CA and verify the host name, no client certificates.
     */
    public static final EndToEndBenchmark.Param TLS = new EndToEndBenchmark.Param("tls", "false",
            "master and workers over TLS (the JDK's provider; certificates made with keytool at start)");

    /** The parameters every benchmark on a local cluster takes, read by {@link Settings#from}. */
    public static final List<EndToEndBenchmark.Param> PARAMETERS = List.of(
            new EndToEndBenchmark.Param("workers", "4", "in-process workers"),
            new EndToEndBenchmark.Param("slots", "64", "CPU slots per worker (each task takes 1)"),
            new EndToEndBenchmark.Param("dispatchBatch", "16",
                    "master's assignments per worker per dispatch round (its default)"),
            new EndToEndBenchmark.Param("aof", "off", "persistence of the started Redis: off, everysec or always"),
            new EndToEndBenchmark.Param("workDir", System.getProperty("java.io.tmpdir"),
                    "where the master's task logs and the workers' run directories go (a new directory, deleted after)"),
            new EndToEndBenchmark.Param("redisProfile", "false",
                    "sample per-script Redis time with SLOWLOG (slows Redis; diagnostic only)"),
            TLS);

    private final TestRedis redis;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final Path workDir;
    private final CoreOptions coreOptions;
    private final String persistence;
    private SchedulerMaster master;
    private final List<SchedulerWorker> workers = new ArrayList<>();

    private LocalCluster(TestRedis redis, RedisClient client, StatefulRedisConnection<String, String> connection,
                         Path workDir, CoreOptions coreOptions, String persistence) {
        this.redis = redis;
        this.client = client;
        this.connection = connection;
        this.workDir = workDir;
        this.coreOptions = coreOptions;
        this.persistence = persistence;
    }

    /**
     * Starts Redis, the master and the workers, and returns once the master leads and every worker
     * is connected to it.
     */
    public static LocalCluster start(Settings settings) throws Exception {
        TestRedis redis = TestRedis.fromEnvironment();
        LocalCluster cluster = null;
        try {
            RedisClient client = RedisClient.create(redis.getUri());
            StatefulRedisConnection<String, String> connection = client.connect();
            String persistence = configure(redis, connection.sync(), settings.aof());
            CoreOptions core = CoreOptions.builder().namespace(freshNamespace()).build();
            Path workDir = Files.createTempDirectory(settings.workParent(), "rls-bench-");
            cluster = new LocalCluster(redis, client, connection, workDir, core, persistence);
            cluster.startNodes(settings);
            return cluster;
        } catch (Exception | Error e) {
            if (cluster != null) {
                cluster.close();
            } else {
                redis.close();
            }
            throw e;
        }
    }

    /** Returns a new namespace, "rls-bench-" and 12 random hex digits, so that runs never share keys. */
    static String freshNamespace() {
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        return "rls-bench-" + HexFormat.of().formatHex(random);
    }

    /**
     * Sets the persistence of a started server ({@code aof}: off, everysec or always; an external
     * server is left alone) and returns a description of the server and its persistence.
     */
    static String configure(TestRedis redis, RedisCommands<String, String> admin, String aof) {
        if (!redis.isExternal()) {
            switch (aof) {
                case "off" -> admin.configSet("appendonly", "no");
                case "everysec", "always" -> {
                    admin.configSet("appendfsync", aof);
                    admin.configSet("auto-aof-rewrite-percentage", "0");
                }
                default -> throw new IllegalArgumentException("aof must be off, everysec or always, was " + aof);
            }
        }
        String appendonly = admin.configGet("appendonly").get("appendonly");
        String settings = "no".equals(appendonly) ? "AOF off (appendonly=no)"
                : "appendonly=" + appendonly + ", appendfsync=" + admin.configGet("appendfsync").get("appendfsync");
        return redis.isExternal()
                ? "external Redis " + redis.getUri() + " (its persistence left as is: " + settings + ")"
                : "redis-server " + shortVersion(RedisServerBinary.version()) + " started on port " + redis.getPort() + " (" + settings + ")";
    }

    /** "Redis server v=6.2.11 sha=..." to "6.2.11". */
    private static String shortVersion(String version) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("v=(\\S+)").matcher(version);
        return m.find() ? m.group(1) : version;
    }

    private void startNodes(Settings s) throws Exception {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        SchedulerMaster.Builder masterBuilder = SchedulerMaster.builder()
                .redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(secret)
                .coreOptions(coreOptions).dispatchBatch(s.dispatchBatch())
                .logDirectory(workDir.resolve("logs"));
        ClientTlsOptions workerTls = null;
        if (s.tls()) {
            long began = System.nanoTime();
            TestCertificates ca = TestCertificates.create(workDir.resolve("tls"));
            TestCertificates.Issued certificate = ca.issue("master", "localhost", "dns:localhost", "ip:127.0.0.1");
            masterBuilder.tls(ServerTlsOptions.builder(certificate.certificateChain(), certificate.privateKey())
                    .build());
            workerTls = ClientTlsOptions.builder().trustedCertificates(ca.caCertificate()).build();
            System.out.printf(java.util.Locale.ROOT, "# master and workers over TLS (certificates made with keytool in"
                    + " %.1f s)%n", (System.nanoTime() - began) / 1e9);
        }
        master = masterBuilder.build().start();
        String address = "127.0.0.1:" + master.getRpcAddress().getPort();
        for (int i = 1; i <= s.workers(); i++) {
            SchedulerWorker.Builder worker = SchedulerWorker.builder()
                    .masters(address).redis(redis.getUri()).workerId("bench-worker-" + i).secret(secret)
                    .coreOptions(coreOptions).gpuIds(List.of()).cpuSlots(s.cpuSlotsPerWorker())
                    .memoryBytes(1L << 40).executor(s.executor()).killGrace(Duration.ofSeconds(1))
                    .runRoot(workDir.resolve("runs"));
            if (workerTls != null) {
                worker.tls(workerTls);
            }
            workers.add(worker.build().start());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!master.isLeader() || workers.stream().anyMatch(w -> !w.isConnected())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cluster not ready within 30 s: leader " + master.isLeader()
                        + ", connected " + workers.stream().filter(SchedulerWorker::isConnected).count() + "/" + workers.size());
            }
            Thread.sleep(20); // start-up polling, outside any measurement
        }
    }

    /** Returns the master. */
    public SchedulerMaster master() {
        return master;
    }

    /** Returns the workers. */
    public List<SchedulerWorker> workers() {
        return workers;
    }

    /** Returns the master's task log directory ({@code <taskId>.log} files). */
    public Path logDirectory() {
        return workDir.resolve("logs");
    }

    /** Returns the lease-core settings of master and workers (namespace, leases). */
    public CoreOptions coreOptions() {
        return coreOptions;
    }

    /** Returns the harness's own Lettuce client of the cluster's Redis (for baselines). */
    public RedisClient redisClient() {
        return client;
    }

    /** Returns the harness's own connection (for statistics and setup; not for measurements). */
    public RedisCommands<String, String> admin() {
        return connection.sync();
    }

    /** Returns a key in this cluster's namespace, outside the scheduler's own keys. */
    public String key(String name) {
        return "{" + coreOptions.getNamespace() + "}:bench:" + name;
    }

    /** Returns the Redis server's description and persistence settings. */
    public String persistence() {
        return persistence;
    }

    /** Stops the workers, the master and Redis, and deletes the temporary directory. */
    @Override
    public void close() {
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (SchedulerWorker w : workers) {
            stopping.add(CompletableFuture.runAsync(w::close));
        }
        stopping.forEach(CompletableFuture::join);
        if (master != null) {
            master.close();
        }
        if (redis.isExternal()) {
            deleteNamespace();
        }
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        redis.close();
        deleteTree(workDir);
    }

    private void deleteNamespace() {
        deleteNamespace(connection.sync(), coreOptions.getNamespace());
    }

    /** Deletes every key of a namespace (on an external server, which outlives the benchmark). */
    static void deleteNamespace(RedisCommands<String, String> admin, String namespace) {
        io.lettuce.core.ScanCursor cursor = io.lettuce.core.ScanCursor.INITIAL;
        io.lettuce.core.ScanArgs match = io.lettuce.core.ScanArgs.Builder.matches("*" + namespace + "*").limit(1000);
        do {
            io.lettuce.core.KeyScanCursor<String> page = admin.scan(cursor, match);
            if (!page.getKeys().isEmpty()) {
                admin.del(page.getKeys().toArray(new String[0]));
            }
            cursor = page;
        } while (!cursor.isFinished());
    }

    /** Deletes a directory tree; reports (does not throw) what it could not delete. */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("# could not delete " + dir + ": " + e);
        }
    }
}
