package io.rlscheduler.worker.internal.artifacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.ArtifactOptions;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committer's pacing against a real directory store and a real Redis: while one upload is in
 * flight, checkpoints marked meanwhile wait as one, the newest replacing the older; the script is
 * never held up. The store's puts are held at a gate (a real store behind it) to make "in flight"
 * last as long as the test needs.
 */
class CheckpointCommitterIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    @TempDir
    Path dir;

    private LeaseCore core;
    private GatedStore store;
    private ArtifactTransfers transfers;
    private CheckpointCommitter committer;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).build());
        store = new GatedStore(new DirectoryStore(dir.resolve("store")));
        transfers = new ArtifactTransfers(store, true, ArtifactOptions.builder().checkpointQuietPeriod(Duration.ZERO).build(), "w1");
        committer = new CheckpointCommitter(core, "w1", "s1", transfers, dir.resolve("snapshots"));
    }

    @AfterEach
    void close() {
        store.gate.countDown();
        transfers.close();
        core.close();
    }

    private TaskLease running() {
        join(core.register(new WorkerRegistration("w1", "s1", Map.of(), 4, 1L << 30, List.of())));
        join(core.submit(TaskDefinition.builder("t").specJson("{\"script\":\"x.py\"}").build()));
        Assignment a = join(core.claim("w1", "s1", 1, "r-" + UUID.randomUUID())).getAssignments().get(0);
        TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
        assertThat(join(core.acknowledge(lease, "w1", "s1")).isAccepted()).isTrue();
        return lease;
    }

    @Test
    void atMostOneUploadIsInFlightAndTheNewestCheckpointReplacesTheQueuedOnes() throws Exception {
        TaskLease lease = running();
        Path ckpt = Files.createDirectories(dir.resolve("runs/t/checkpoints"));
        List<String> said = new CopyOnWriteArrayList<>();
        CheckpointCommitter.Slot slot = committer.open(lease, 1, ckpt, null, said::add, 0, 0);

        List<CompletableFuture<String>> commits = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            // Each save replaces the file (a new inode), as an atomic write does.
            Path tmp = ckpt.resolve(".state.tmp");
            Files.writeString(tmp, "step " + i);
            Files.move(tmp, ckpt.resolve("state.txt"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            long before = System.nanoTime();
            commits.add(slot.commit(""));
            // Marking returns at once, whatever the store does: the script is never held up.
            assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(2));
            if (i == 1) {
                await().atMost(Duration.ofSeconds(10)).until(() -> store.waiting.get() == 1);
            }
        }
        assertThat(store.waiting.get()).as("puts held at the gate: only the first checkpoint's").isEqualTo(1);
        store.gate.countDown();

        String first = commits.get(0).get(20, TimeUnit.SECONDS);
        String last = commits.get(4).get(20, TimeUnit.SECONDS);
        for (int i = 1; i <= 3; i++) {
            CompletableFuture<String> replaced = commits.get(i);
            assertThatThrownBy(() -> replaced.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().hasMessageContaining("was replaced by the newer e" + lease.getEpoch() + "-");
        }
        assertThat(store.maxInFlight.get()).as("uploads of this attempt at once").isEqualTo(1);
        List<CheckpointEntry> committed = join(core.artifacts().committed("t"));
        assertThat(committed).extracting(CheckpointEntry::id).containsExactly(last, first);
        try (InputStream in = store.open(io.rlscheduler.store.RunLayout.checkpointFile("t", last, "state.txt"))) {
            assertThat(new String(in.readAllBytes())).isEqualTo("step 5");
        }
        // The first one was snapshotted when marked: its stored file is step 1, whatever came later.
        try (InputStream in = store.open(io.rlscheduler.store.RunLayout.checkpointFile("t", first, "state.txt"))) {
            assertThat(new String(in.readAllBytes())).isEqualTo("step 1");
        }
        assertThat(dir.resolve("snapshots")).isEmptyDirectory();
    }

    @Test
    void theEndSettlesOnceTheCheckpointInFlightAndTheLastOneOfAChangedDirectoryAreCommitted() throws Exception {
        TaskLease lease = running();
        Path ckpt = Files.createDirectories(dir.resolve("runs/t/checkpoints"));
        CheckpointCommitter.Slot slot = committer.open(lease, 1, ckpt, null, line -> { }, 0, 0);
        Files.writeString(ckpt.resolve("state.txt"), "marked");
        CompletableFuture<String> marked = slot.commit("");
        await().atMost(Duration.ofSeconds(10)).until(() -> store.waiting.get() == 1);
        // Changed after the mark: the end takes a last checkpoint of it.
        Files.writeString(ckpt.resolve("extra.txt"), "written after the mark");

        CompletableFuture<Void> settled = slot.ended(true);
        assertThat(settled).as("settled while the marked checkpoint is held at the store").isNotDone();
        store.gate.countDown();
        settled.get(20, TimeUnit.SECONDS);
        assertThat(marked).isCompleted();
        List<CheckpointEntry> committed = join(core.artifacts().committed("t"));
        assertThat(committed).as("the last one first, then the marked one, both committed when the end settles")
                .hasSize(2);
        assertThat(committed.get(1).id()).isEqualTo(marked.getNow(null));
        try (InputStream in = store.open(io.rlscheduler.store.RunLayout.checkpointFile("t", committed.get(0).id(),
                "extra.txt"))) {
            assertThat(new String(in.readAllBytes())).isEqualTo("written after the mark");
        }
        assertThat(slot.ended(true)).as("nothing left in flight").succeedsWithin(Duration.ofSeconds(10));
    }

    /**
     * A checkpoint whose commit call failed with its outcome unknown, dropped for a newer one, keeps
     * its objects: Redis may have run the commit (here it did, as when Redis is killed after the
     * script ran and before its answer went out). Deleting them would leave the list of committed
     * checkpoints pointing at nothing; the collection at the next attempt deletes them if the list
     * does not hold them.
     */
    @Test
    void aCheckpointWhoseCommitsAnswerWasLostKeepsItsObjectsWhenANewerOneReplacesIt(TestRedis server, RedisURI uri,
                                                                                  RedisNamespace ns) throws Exception {
        server.assumeControllable();
        TaskLease lease = running();
        // The worker's own kind of client: commands fail at once while Redis is away.
        RedisClient rejecting = RedisClient.create(uri);
        rejecting.setOptions(ClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        LeaseCore workerCore = LeaseCore.create(rejecting, CoreOptions.builder().namespace(ns.name()).build());
        try {
            CheckpointCommitter c = new CheckpointCommitter(workerCore, "w1", "s1", transfers, dir.resolve("snapshots"));
            Path ckpt = Files.createDirectories(dir.resolve("runs/t/checkpoints"));
            CheckpointCommitter.Slot slot = c.open(lease, 1, ckpt, null, line -> { }, 0, 0);
            Files.writeString(ckpt.resolve("state.txt"), "step 1");
            CompletableFuture<String> first = slot.commit("");
            await().atMost(Duration.ofSeconds(10)).until(() -> store.waiting.get() == 1);
            String id = "e" + lease.getEpoch() + "-1";
            String manifest = io.rlscheduler.store.RunLayout.checkpointManifest("t", id);
            // What the lost answer had done: the commit ran in Redis.
            join(core.artifacts().commit(lease, "w1", "s1", 1, 1, manifest, "ab".repeat(32), 6, 1, 2, 0));
            Path tmp = ckpt.resolve(".state.tmp"); // a new inode, as an atomic save makes: the first snapshot stands
            Files.writeString(tmp, "step 2");
            Files.move(tmp, ckpt.resolve("state.txt"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            CompletableFuture<String> second = slot.commit("");

            server.kill();
            store.gate.countDown();
            assertThatThrownBy(() -> first.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().hasMessageContaining("its commit's answer was lost");
            assertThat(store.stat(manifest)).as("the manifest of a checkpoint Redis lists").isPresent();
            assertThat(store.stat(io.rlscheduler.store.RunLayout.checkpointFile("t", id, "state.txt"))).isPresent();

            server.restart();
            String newer = second.get(30, TimeUnit.SECONDS);
            assertThat(join(core.artifacts().committed("t"))).extracting(CheckpointEntry::id).containsExactly(newer, id);
        } finally {
            workerCore.close();
            rejecting.shutdown();
        }
    }

    private static <T> T join(CompletableFuture<T> f) {
        return f.orTimeout(10, TimeUnit.SECONDS).join();
    }

    /** A real store whose file puts wait at a gate until it opens, counting how many are in flight. */
    private static final class GatedStore implements ArtifactStore {
        final ArtifactStore store;
        final CountDownLatch gate = new CountDownLatch(1);
        final AtomicInteger waiting = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();

        GatedStore(ArtifactStore store) {
            this.store = store;
        }

        @Override
        public StoredObject put(String key, Path source) {
            int now = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            try {
                waiting.incrementAndGet();
                gate.await();
                return store.put(key, source);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } finally {
                waiting.decrementAndGet();
                inFlight.decrementAndGet();
            }
        }

        @Override public URI getUri() { return store.getUri(); }
        @Override public StoredObject put(String key, byte[] bytes) { return store.put(key, bytes); }
        @Override public StoredObject get(String key, Path target) { return store.get(key, target); }
        @Override public InputStream open(String key) { return store.open(key); }
        @Override public Optional<StoredObject> stat(String key) { return store.stat(key); }
        @Override public List<StoredObject> list(String prefix) { return store.list(prefix); }
        @Override public void delete(String key) { store.delete(key); }
        @Override public void close() { store.close(); }
    }
}
