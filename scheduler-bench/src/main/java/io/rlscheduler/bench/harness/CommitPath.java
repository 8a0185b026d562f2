package io.rlscheduler.bench.harness;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.ClaimResult;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.core.internal.WriteResult;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.ArtifactOptions;
import io.rlscheduler.worker.internal.artifacts.ArtifactTransfers;
import io.rlscheduler.worker.internal.artifacts.CheckpointCommitter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The worker's checkpoint commit path, driven as a worker drives it, for the checkpoint
 * benchmarks: a started redis-server (or {@code REDIS_URL}'s), a {@link LeaseCore}, a registered
 * worker holding one claimed and acknowledged task, and a {@link CheckpointCommitter} over
 * {@link ArtifactTransfers} of the store given, with the worker's default artifact settings but
 * the transfer threads given and no quiet-period scan. {@link #commit()} marks the whole checkpoint
 * directory as a script's {@code RLS_CHECKPOINT} line does and waits until the pointer in Redis has
 * moved: snapshot (hard links), files sent {@code transferThreads} at once, manifest, the fenced
 * pointer move. Leases are an hour long, so nothing expires and nothing heartbeats while it runs.
 * Not thread-safe: one benchmark thread uses it.
 */
final class CommitPath implements AutoCloseable {

    static final String WORKER = "bench-ckpt-worker";
    static final String SESSION = "bench-ckpt-session";
    static final String TASK = "bench-ckpt-task";
    /** Checkpoints kept per task: more than a run commits, so that no commit deletes an older one while measured. */
    private static final int KEEP = 1000;
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    private final TestRedis redis;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final LeaseCore core;
    private final String persistence;
    private final ArtifactTransfers transfers;
    private final CheckpointCommitter.Slot slot;
    private final TaskLease lease;
    private final List<String> said = new CopyOnWriteArrayList<>();

    /**
     * @param store         the store (not closed by this)
     * @param checkpointDir the attempt's checkpoint directory
     * @param snapshots     the worker's snapshot directory, on the checkpoint directory's file system
     */
    CommitPath(ArtifactStore store, int transferThreads, Path checkpointDir, Path snapshots) throws Exception {
        this.redis = TestRedis.fromEnvironment();
        RedisClient c = null;
        StatefulRedisConnection<String, String> conn = null;
        LeaseCore lc = null;
        ArtifactTransfers t = null;
        try {
            c = RedisClient.create(redis.getUri());
            conn = c.connect();
            this.persistence = LocalCluster.configure(redis, conn.sync(), "off");
            lc = LeaseCore.create(c, CoreOptions.builder().namespace(LocalCluster.freshNamespace())
                    .livenessLease(Duration.ofHours(1)).taskLease(Duration.ofHours(1)).ackTimeout(Duration.ofHours(1))
                    .build());
            this.lease = claimOne(lc);
            t = new ArtifactTransfers(store, false, ArtifactOptions.builder().transferThreads(transferThreads)
                    .checkpointQuietPeriod(Duration.ZERO).build(), WORKER);
            Files.createDirectories(snapshots);
            CheckpointCommitter committer = new CheckpointCommitter(lc, WORKER, SESSION, t, snapshots);
            this.slot = committer.open(lease, 1, checkpointDir, null, said::add, KEEP, 0);
        } catch (Exception | Error e) {
            if (t != null) {
                t.close();
            }
            if (lc != null) {
                lc.close();
            }
            if (conn != null) {
                conn.close();
            }
            if (c != null) {
                c.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            redis.close();
            throw e;
        }
        this.client = c;
        this.connection = conn;
        this.core = lc;
        this.transfers = t;
    }

    /** Registers the worker, submits the task, claims and acknowledges it; returns its lease. */
    private static TaskLease claimOne(LeaseCore core) throws Exception {
        await(core.register(new WorkerRegistration(WORKER, SESSION, Map.of(), 1, 1L << 30, List.of())));
        if (!await(core.submit(TaskDefinition.builder(TASK).cpuSlots(1).build())).isCreated()) {
            throw new IllegalStateException("the benchmark's task was not created");
        }
        ClaimResult claim = await(core.claim(WORKER, SESSION, 1, "bench-ckpt-claim"));
        if (claim.getAssignments().size() != 1) {
            throw new IllegalStateException("claim answered " + claim);
        }
        Assignment a = claim.getAssignments().get(0);
        TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
        WriteResult ack = await(core.acknowledge(lease, WORKER, SESSION));
        if (!ack.isAccepted()) {
            throw new IllegalStateException("acknowledge answered " + ack);
        }
        return lease;
    }

    /**
     * Commits the checkpoint directory as it is now and returns the checkpoint's id once Redis
     * points at it (checked: the newest committed entry is this one).
     *
     * @throws IllegalStateException if the commit failed or the pointer is elsewhere
     */
    String commit() throws Exception {
        String id;
        try {
            id = slot.commit("").get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("the commit failed: " + e.getCause() + "; the task's log said " + said, e);
        }
        List<CheckpointEntry> committed = await(core.artifacts().committed(TASK));
        if (committed.isEmpty() || !committed.get(0).id().equals(id)) {
            throw new IllegalStateException("committed " + id + " but Redis's newest entry is " + committed);
        }
        return id;
    }

    /** Deletes a committed checkpoint's objects from the store (outside any measurement). */
    void deleteFromStore(String checkpointId) {
        transfers.store().deleteAll(RunLayout.checkpoint(TASK, checkpointId));
    }

    /** Returns the transfers the committer uses (its store and transfer threads). */
    ArtifactTransfers transfers() {
        return transfers;
    }

    /** Returns the harness's own Redis connection (for CPU figures). */
    RedisCommands<String, String> admin() {
        return connection.sync();
    }

    /** Returns the Redis server's description and persistence. */
    String persistence() {
        return persistence;
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        transfers.close();
        core.close();
        if (redis.isExternal()) {
            LocalCluster.deleteNamespace(connection.sync(), core.getOptions().getNamespace());
        }
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        redis.close();
    }
}
