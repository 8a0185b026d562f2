package io.rlscheduler.bench;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.SubmitResult;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.core.internal.WriteResult;
import io.rlscheduler.core.internal.WriteStatus;
import io.rlscheduler.redis.embedded.RedisServerBinary;
import io.rlscheduler.testkit.TestRedis;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One trial's Redis server, Lettuce client and {@link LeaseCore}, with the task and worker shapes
 * the lease benchmarks use. Not thread-safe: one benchmark thread owns it.
 *
 * <p>The server is {@link TestRedis#fromEnvironment()}: a redis-server started for this trial on a
 * free loopback port, or the external server named by {@code REDIS_URL}. A started server gets the
 * persistence setting {@code aof} (see {@link #open(String)}); an external one is left as it is,
 * and only this trial's keys are deleted from it at {@link #close()}.
 */
final class LeaseFixture implements AutoCloseable {

    /** The opaque spec of every task: a small training-run description, as a client would send. */
    static final String SPEC = "{\"script\":\"train.py\",\"image\":\"rl/train:1.4\","
            + "\"args\":{\"env\":\"HalfCheetah-v4\",\"lr\":0.0003,\"batch\":256,\"seed\":7}}";

    /** Final metrics reported by every finish. */
    static final String METRICS = "{\"episodes\":1200,\"reward\":3121.5}";

    /** Worker shape: 64 CPU slots, 1 TiB, GPUs 0 to 7, two labels. */
    static final int WORKER_CPU_SLOTS = 64;
    static final long WORKER_MEMORY = 1L << 40;
    static final List<Integer> WORKER_GPUS = List.of(0, 1, 2, 3, 4, 5, 6, 7);

    /** Submits in flight at once when filling the queue (outside any measurement). */
    private static final int SUBMIT_WINDOW = 256;

    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);

    private final TestRedis server;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final LeaseCore core;
    private final String namespace;
    private long taskCounter;

    private LeaseFixture(TestRedis server, RedisClient client, StatefulRedisConnection<String, String> connection,
                         LeaseCore core, String namespace) {
        this.server = server;
        this.client = client;
        this.connection = connection;
        this.core = core;
        this.namespace = namespace;
    }

    /**
     * Opens the server, a client, a plain connection and a lease core in a fresh namespace.
     *
     * @param aof persistence of a started server: {@code off} (AOF disabled, the default of the
     *            benchmark), {@code everysec} (AOF, fsync once a second in the background) or
     *            {@code always} (AOF fsynced before every reply, as {@link TestRedis} starts it);
     *            AOF rewrites are switched off in the last two so that no fork runs mid-measurement
     */
    static LeaseFixture open(String aof) {
        TestRedis server = TestRedis.fromEnvironment();
        RedisClient client = null;
        StatefulRedisConnection<String, String> connection = null;
        try {
            client = RedisClient.create(server.getUri());
            connection = client.connect();
            RedisCommands<String, String> admin = connection.sync();
            if (server.isExternal()) {
                System.out.println("# lease bench: external Redis " + server.getUri() + ", its persistence left as is ("
                        + persistence(admin) + "); parameter aof=" + aof + " ignored");
            } else {
                switch (aof) {
                    case "off" -> admin.configSet("appendonly", "no");
                    case "everysec" -> {
                        admin.configSet("appendfsync", "everysec");
                        admin.configSet("auto-aof-rewrite-percentage", "0");
                    }
                    case "always" -> {
                        admin.configSet("appendfsync", "always");
                        admin.configSet("auto-aof-rewrite-percentage", "0");
                    }
                    default -> throw new IllegalArgumentException("aof must be off, everysec or always, was " + aof);
                }
                System.out.println("# lease bench: " + RedisServerBinary.version() + ", started on port " + server.getPort()
                        + ", " + persistence(admin));
            }
            byte[] random = new byte[8];
            new SecureRandom().nextBytes(random);
            String namespace = "rls-bench-" + HexFormat.of().formatHex(random);
            CoreOptions options = CoreOptions.builder()
                    .namespace(namespace)
                    // Nothing heartbeats between the measured calls and no reaper runs: leases
                    // long enough that nothing expires during a trial.
                    .livenessLease(Duration.ofHours(1))
                    .taskLease(Duration.ofHours(1))
                    .ackTimeout(Duration.ofHours(1))
                    .build();
            LeaseCore core = LeaseCore.create(client, options);
            return new LeaseFixture(server, client, connection, core, namespace);
        } catch (RuntimeException e) {
            if (connection != null) {
                connection.close();
            }
            if (client != null) {
                client.shutdown();
            }
            server.close();
            throw e;
        }
    }

    /** The server's AOF settings as CONFIG GET reports them (one key per call: Redis 6.2 takes one). */
    private static String persistence(RedisCommands<String, String> admin) {
        return "appendonly=" + admin.configGet("appendonly").get("appendonly")
                + ", appendfsync=" + admin.configGet("appendfsync").get("appendfsync");
    }

    LeaseCore core() {
        return core;
    }

    /** A plain connection to the same server, for the SET baseline. */
    StatefulRedisConnection<String, String> connection() {
        return connection;
    }

    /** Returns a key in this trial's namespace (deleted at close from an external server). */
    String key(String name) {
        return "{" + namespace + "}:bench:" + name;
    }

    /** Returns a registration of a worker of the standard shape. */
    static WorkerRegistration worker(String workerId, String sessionId) {
        return new WorkerRegistration(workerId, sessionId, Map.of("zone", "a", "pool", "h100"),
                WORKER_CPU_SLOTS, WORKER_MEMORY, WORKER_GPUS);
    }

    /** Returns a new task of the standard shape: 1 GPU, 1 CPU slot, 8 GiB, selector zone=a. */
    TaskDefinition nextTask() {
        String id = "task-" + (++taskCounter);
        return TaskDefinition.builder(id)
                .priority(500)
                .gpus(1)
                .cpuSlots(1)
                .memoryBytes(8L << 30)
                .selector("zone", "a")
                .owner("alice")
                .traceId("trace-" + id)
                .specJson(SPEC)
                .build();
    }

    /** Submits {@code n} new tasks, {@value #SUBMIT_WINDOW} at a time, and checks each was created. */
    void submitMany(int n) {
        List<CompletableFuture<SubmitResult>> window = new ArrayList<>(SUBMIT_WINDOW);
        for (int done = 0; done < n; ) {
            int batch = Math.min(SUBMIT_WINDOW, n - done);
            for (int i = 0; i < batch; i++) {
                window.add(core.submit(nextTask()));
            }
            for (CompletableFuture<SubmitResult> f : window) {
                if (!await(f).isCreated()) {
                    throw new IllegalStateException("a fresh task id was not created");
                }
            }
            window.clear();
            done += batch;
        }
    }

    /** Finishes held tasks as SUCCEEDED, all at once, and checks that each finish applied. */
    void finishAll(List<TaskLease> leases, String workerId, String sessionId) {
        List<CompletableFuture<WriteResult>> pending = new ArrayList<>(leases.size());
        for (TaskLease lease : leases) {
            pending.add(core.finish(lease, workerId, sessionId, TaskState.SUCCEEDED, 0, null, METRICS));
        }
        for (int i = 0; i < pending.size(); i++) {
            WriteResult r = await(pending.get(i));
            if (r.getStatus() != WriteStatus.APPLIED) {
                throw new IllegalStateException("finish of " + leases.get(i) + " answered " + r);
            }
        }
    }

    /** Waits for a setup or teardown step, at most 30 s. */
    static <T> T await(CompletableFuture<T> future) {
        return future.orTimeout(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    /** Closes the core, deletes this trial's keys from an external server, closes the client and the server. */
    @Override
    public void close() {
        try {
            core.close();
            if (server.isExternal()) {
                deleteNamespace();
            }
            connection.close();
        } finally {
            try {
                client.shutdown();
            } finally {
                server.close();
            }
        }
    }

    private void deleteNamespace() {
        RedisCommands<String, String> sync = connection.sync();
        ScanArgs args = ScanArgs.Builder.matches("{" + namespace + "}:*").limit(1000);
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = sync.scan(cursor, args);
            if (!page.getKeys().isEmpty()) {
                sync.unlink(page.getKeys().toArray(new String[0]));
            }
            cursor = page;
        } while (!cursor.isFinished());
    }
}
