package io.rlscheduler.examples;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** A master and workers on loopback against a real Redis, with leases of about a second. */
final class Cluster implements AutoCloseable {

    static final String SECRET = "end-to-end-test-shared-secret";
    static final Path REPO_SCRIPTS = Path.of(System.getProperty("user.dir")).getParent().resolve("scripts");
    static final Path TEST_SCRIPTS = Path.of(System.getProperty("user.dir")).resolve("src/test/resources/scripts");

    final TestRedis redis;
    final CoreOptions options;
    final Path dir;
    final SchedulerMaster master;
    private final List<SchedulerWorker> workers = new ArrayList<>();

    Cluster(TestRedis redis, RedisNamespace ns, Path dir) {
        this(redis, ns, dir, CoreOptions.DEFAULT_CLAIM_SCAN_LIMIT);
    }

    /** With claims that look at {@code claimScanLimit} queued tasks. */
    Cluster(TestRedis redis, RedisNamespace ns, Path dir, int claimScanLimit) {
        this(redis, ns, dir, claimScanLimit, master -> master);
    }

    /** With the master's builder given settings of the test's own (TLS, a handshake timeout) by {@code master}. */
    Cluster(TestRedis redis, RedisNamespace ns, Path dir, UnaryOperator<SchedulerMaster.Builder> master) {
        this(redis, ns, dir, CoreOptions.DEFAULT_CLAIM_SCAN_LIMIT, master);
    }

    /** With the master's builder given to {@code settings} (settings of the test's own) before it is built. */
    Cluster(TestRedis redis, RedisNamespace ns, Path dir, int claimScanLimit,
            UnaryOperator<SchedulerMaster.Builder> settings) {
        this(redis, ns, dir, CoreOptions.builder().namespace(ns.name()).claimScanLimit(claimScanLimit)
                .heartbeatInterval(Duration.ofMillis(200)).livenessLease(Duration.ofSeconds(1))
                .taskLease(Duration.ofSeconds(2)).ackTimeout(Duration.ofSeconds(2)).build(), settings);
    }

    /** With the lease core settings given (their namespace must be {@code ns}'s). */
    Cluster(TestRedis redis, RedisNamespace ns, Path dir, CoreOptions options) {
        this(redis, ns, dir, options, master -> master);
    }

    private Cluster(TestRedis redis, RedisNamespace ns, Path dir, CoreOptions options,
                    UnaryOperator<SchedulerMaster.Builder> settings) {
        this.redis = redis;
        this.dir = dir;
        this.options = options;
        this.master = settings.apply(SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret(SECRET).coreOptions(options).logDirectory(dir.resolve("logs"))
                .reapInterval(Duration.ofMillis(200)).dispatchInterval(Duration.ofMillis(500))).build().start();
    }

    SchedulerWorker.Builder workerBuilder(String id, Integer... gpus) {
        return SchedulerWorker.builder()
                .masters("127.0.0.1:" + master.getRpcAddress().getPort())
                .redis(redis.getUri()).workerId(id).secret(SECRET).coreOptions(options)
                .gpuIds(gpus).cpuSlots(4).scriptRoots(REPO_SCRIPTS, TEST_SCRIPTS).runRoot(dir.resolve("runs"))
                .stateDirectory(dir.resolve("state-" + id)).killGrace(Duration.ofSeconds(2))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .nvidiaSmi(dir.resolve("no-nvidia-smi-here").toString());
    }

    SchedulerWorker worker(String id, Integer... gpus) {
        return start(workerBuilder(id, gpus));
    }

    /** Builds and starts a worker (a {@link #workerBuilder} with settings of the test's own); closed with the cluster. */
    SchedulerWorker start(SchedulerWorker.Builder builder) {
        SchedulerWorker worker = builder.build().start();
        workers.add(worker);
        return worker;
    }

    Path logFile(String taskId) {
        return dir.resolve("logs").resolve(taskId + ".log");
    }

    @Override
    public void close() {
        for (SchedulerWorker w : workers) {
            w.close();
        }
        master.close();
    }
}
