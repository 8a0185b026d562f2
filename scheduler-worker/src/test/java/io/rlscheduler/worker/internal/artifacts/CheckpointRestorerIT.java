package io.rlscheduler.worker.internal.artifacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.worker.ArtifactOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The restorer against a real Redis that goes away as an attempt starts: it keeps trying for as
 * long as it was given (the worker gives it the time an attempt may go without a lease renewal),
 * so an attempt that starts just before a Redis restart still resumes from the task's checkpoint
 * instead of starting from scratch; only once that time is over does it start without one.
 * Its Redis client rejects commands while disconnected, as a worker's does.
 */
class CheckpointRestorerIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    @TempDir
    Path dir;

    private RedisClient client;
    private LeaseCore core;
    private ArtifactTransfers transfers;

    @BeforeEach
    void open(RedisNamespace ns) {
        redis.server().assumeControllable();
        client = RedisClient.create(redis.server().getUri());
        client.setOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).build());
        transfers = new ArtifactTransfers(new DirectoryStore(dir.resolve("store")), true, ArtifactOptions.builder()
                .checkpointQuietPeriod(Duration.ZERO).retryBackoff(Duration.ofMillis(100), Duration.ofMillis(400)).build(), "w1");
    }

    @AfterEach
    void close() {
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
        transfers.close();
        core.close();
        client.shutdown();
    }

    /** A running attempt of task t with one committed checkpoint holding state.txt = "episode 130". */
    private TaskLease runningWithACheckpoint() throws Exception {
        join(core.register(new WorkerRegistration("w1", "s1", Map.of(), 4, 1L << 30, List.of())));
        join(core.submit(TaskDefinition.builder("t").specJson("{\"script\":\"x.py\"}").build()));
        Assignment a = join(core.claim("w1", "s1", 1, "r-" + UUID.randomUUID())).getAssignments().get(0);
        TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
        assertThat(join(core.acknowledge(lease, "w1", "s1")).isAccepted()).isTrue();
        Path made = Files.createDirectories(dir.resolve("first-machine/checkpoints"));
        Files.writeString(made.resolve("state.txt"), "episode 130");
        CheckpointCommitter committer = new CheckpointCommitter(core, "w1", "s1", transfers, dir.resolve("snapshots"));
        committer.open(lease, 1, made, null, line -> { }, 0, 0).commit("").get(20, TimeUnit.SECONDS);
        return lease;
    }

    @Test
    void anAttemptStartedAsRedisGoesDownResumesFromTheCheckpointOnceRedisIsBack() throws Exception {
        TaskLease lease = runningWithACheckpoint();
        CheckpointRestorer restorer = new CheckpointRestorer(core, "w2", "s2", transfers, Duration.ofSeconds(60));
        Path resumeInto = Files.createDirectories(dir.resolve("second-machine/checkpoints"));
        List<String> said = new CopyOnWriteArrayList<>();

        redis.server().kill();
        CompletableFuture<String> restored = restoreAsync(restorer, lease, resumeInto, said, () -> false);
        // Down for longer than many tries (100-400 ms apart): the restore keeps waiting, says nothing yet.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> !restored.isDone());
        assertThat(said).isEmpty();
        redis.server().restart();

        assertThat(restored.get(60, TimeUnit.SECONDS)).isNotNull();
        assertThat(Files.readString(resumeInto.resolve("state.txt"))).isEqualTo("episode 130");
        assertThat(said).singleElement().asString().startsWith("rl-scheduler: resuming from checkpoint e" + lease.getEpoch() + "-");
    }

    @Test
    void onlyOnceItsPatienceIsOverDoesTheAttemptStartWithTheDirectoryAsItIs() throws Exception {
        TaskLease lease = runningWithACheckpoint();
        CheckpointRestorer restorer = new CheckpointRestorer(core, "w2", "s2", transfers, Duration.ofSeconds(2));
        Path resumeInto = Files.createDirectories(dir.resolve("second-machine/checkpoints"));
        Files.writeString(resumeInto.resolve("local.txt"), "left here by an earlier attempt");
        List<String> said = new CopyOnWriteArrayList<>();

        redis.server().kill();
        long started = System.nanoTime();
        String fingerprint = restorer.restore(lease, 2, resumeInto, said::add, () -> false);
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(fingerprint).isNull();
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(2)).isLessThan(Duration.ofSeconds(30));
        assertThat(said).singleElement().asString()
                .startsWith("rl-scheduler: cannot read the task's committed checkpoints")
                .endsWith("starting with the checkpoint directory as it is");
        try (var files = Files.list(resumeInto)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("local.txt");
        }
    }

    @Test
    void anAttemptAskedToStopWhileRedisIsDownStopsWaitingAtOnce() throws Exception {
        TaskLease lease = runningWithACheckpoint();
        CheckpointRestorer restorer = new CheckpointRestorer(core, "w2", "s2", transfers, Duration.ofSeconds(60));
        Path resumeInto = Files.createDirectories(dir.resolve("second-machine/checkpoints"));
        List<String> said = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();

        redis.server().kill();
        CompletableFuture<String> restored = restoreAsync(restorer, lease, resumeInto, said, stopping::get);
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> !restored.isDone());
        stopping.set(true); // cancelled, fenced, or the worker stopping
        assertThat(restored.get(5, TimeUnit.SECONDS)).isNull();
        assertThat(said).singleElement().asString().isEqualTo("rl-scheduler: the attempt is stopping; its checkpoint is not restored");
    }

    /** Attempt 2's restore on another thread, as a worker's launch thread runs it. */
    private static CompletableFuture<String> restoreAsync(CheckpointRestorer restorer, TaskLease lease, Path into,
                                                          List<String> said, java.util.function.BooleanSupplier stopping) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return restorer.restore(lease, 2, into, said::add, stopping);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static <T> T join(CompletableFuture<T> f) {
        return f.orTimeout(10, TimeUnit.SECONDS).join();
    }
}
