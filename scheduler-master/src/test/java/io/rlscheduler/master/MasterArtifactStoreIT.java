package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.master.internal.log.LogFixtures;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's artifact store: opened at start (or the host's own), published in Redis for the
 * workers, the master's ended logs copied into it, and an ended run's log served whole by a
 * master on another machine (an empty log directory of its own) from it, or a typed error when it
 * is down. Real masters on real Redis, real directory stores on temp directories; the worker's
 * calls to Redis are made here directly, as a worker makes them, and the log of a run that
 * printed lines is written by a log manager with the store, as the master that ran it did.
 */
class MasterArtifactStoreIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final byte[] SECRET = "artifact-store-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private TestRedis redis;
    private CoreOptions options;
    private RedisClient client;
    private LeaseCore core;

    @BeforeEach
    void connect(TestRedis redis, RedisNamespace ns) throws Exception {
        this.redis = redis;
        options = CoreOptions.builder().namespace(ns.name()).build();
        client = RedisClient.create(redis.getUri());
        core = LeaseCore.create(client, options);
        core.register(new WorkerRegistration("w1", "s1", Map.of(), 8, 1L << 30, List.of())).get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void disconnect() {
        core.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private SchedulerMaster.Builder master(String id, String logs) {
        return SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve(logs)).masterId(id);
    }

    private String published() throws Exception {
        return core.artifacts().publishedStore().get(30, TimeUnit.SECONDS);
    }

    /** Submits t1, and claims and starts it as worker w1 does. */
    private Assignment running(String taskId) throws Exception {
        core.submit(TaskDefinition.builder(taskId).build()).get(30, TimeUnit.SECONDS);
        Assignment a = core.claim("w1", "s1", 1, "c-" + taskId).get(30, TimeUnit.SECONDS).getAssignments().get(0);
        assertThat(core.acknowledge(new TaskLease(taskId, a.getEpoch()), "w1", "s1").get(30, TimeUnit.SECONDS)
                .isAccepted()).isTrue();
        return a;
    }

    /** Records the end as its worker does, with the attempt's line count (-1: not known). */
    private void finish(String taskId, Assignment a, long lines) throws Exception {
        assertThat(core.finish(new TaskLease(taskId, a.getEpoch()), "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null,
                lines).get(30, TimeUnit.SECONDS).isAccepted()).isTrue();
    }

    /**
     * Runs t1 with three lines (the second a metrics line), as on a master of its own: that
     * master's log manager writes its log, ends it and copies it into {@code store}; then the
     * worker records the end.
     */
    private void endedRunWithLines(DirectoryStore store) throws Exception {
        Assignment a = running("t1");
        try (TaskLogManager ran = new TaskLogManager(dir.resolve("logs-ran"), TaskLogManager.Limits.defaults(),
                TaskLogManager.RecordLookup.NONE, store, () -> true)) {
            LogFixtures.await(ran.open("t1", "trace-1", a.getEpoch(), a.getAttempt()));
            LogFixtures.await(ran.appendChunks("t1", a.getEpoch(),
                    List.of(LogFixtures.chunk(1, "step 1\nRLS_METRIC {\"reward\": 0.5}\nstep 3\n"))));
            ran.complete("t1", a.getEpoch(), 3, TaskState.SUCCEEDED);
            await().atMost(WAIT).until(() -> ran.uploads().stored() == 1);
        }
        finish("t1", a, 3);
    }

    private static byte[] stored(ArtifactStore store, String taskId) {
        try (InputStream in = store.open(RunLayout.log(taskId))) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theMasterPublishesItsStoreAndAMasterWithAnotherStoreReplacesItWithAWarning() throws Exception {
        assertThat(published()).isNull();
        try (SchedulerMaster first = master("m1", "logs-1").artifactStore(dir.resolve("store-1").toString()).build().start()) {
            assertThat(published()).isEqualTo(dir.resolve("store-1").toUri().toString());
            assertThat(Path.of(first.getOptions().getArtifactStore())).isEqualTo(dir.resolve("store-1"));
            try (SchedulerMaster second = master("m2", "logs-2").build().start()) {
                // The default: beside its log directory. Masters of one namespace should share one.
                URI secondStore = dir.resolve(MasterOptions.DEFAULT_ARTIFACT_STORE_DIRECTORY).toUri();
                assertThat(second.getOptions().getArtifactStore()).isEqualTo(secondStore);
                assertThat(published()).isEqualTo(secondStore.toString());
                assertThat(Files.isDirectory(dir.resolve(MasterOptions.DEFAULT_ARTIFACT_STORE_DIRECTORY))).isTrue();
            }
        }
    }

    @Test
    void aStoreThatCannotBeOpenedFailsTheStartNamingIt() throws Exception {
        SchedulerMaster noS3 = master("m1", "logs").artifactStore("s3://runs/lab").build();
        assertThatThrownBy(noS3::start).isInstanceOf(SchedulerException.class)
                .hasMessageContaining("s3://runs/lab").hasMessageContaining("scheduler-store-s3")
                .satisfies(e -> assertThat(((SchedulerException) e).isRetryable()).isFalse());
        assertThat(noS3.isShutdown()).isTrue();

        Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
        SchedulerMaster unreachable = master("m2", "logs").artifactStore(file.resolve("store").toString()).build();
        assertThatThrownBy(unreachable::start).isInstanceOf(SchedulerException.class)
                .hasMessageContaining("artifact store").hasMessageContaining(file.resolve("store").toString())
                .satisfies(e -> assertThat(((SchedulerException) e).isRetryable()).isTrue());
        assertThat(published()).as("nothing published by a master that did not start").isNull();
    }

    @Test
    void aHostsOwnStoreIsUsedAndLeftOpenAtShutdown() throws Exception {
        HostStore host = new HostStore(new DirectoryStore(dir.resolve("host-store")));
        Assignment a = running("t1");
        try (SchedulerMaster master = master("m1", "logs").artifactStore(host).build().start()) {
            assertThat(published()).isEqualTo(dir.resolve("host-store").toUri().toString());
            finish("t1", a, -1);
            await().atMost(WAIT).until(() -> host.stat(RunLayout.log("t1")).isPresent()
                    && master.health().getLogUploadsPending() == 0);
        }
        assertThat(host.closed).as("the host closes its store").isFalse();
    }

    @Test
    void aMastersOwnEndOfALogIsInItsStoreAndAMasterOnAnEmptyDirectoryServesItFromThere() throws Exception {
        DirectoryStore store = new DirectoryStore(dir.resolve("store"));
        Assignment a = running("t1");
        Path ranFile;
        try (SchedulerMaster ran = master("m1", "logs-1").artifactStore(store.getRoot().toString()).build().start()) {
            // Its worker recorded no line count: the master ends the log at once, incomplete.
            finish("t1", a, -1);
            await().atMost(WAIT).until(() -> store.stat(RunLayout.log("t1")).isPresent()
                    && ran.health().getLogUploadsPending() == 0);
            ranFile = LogFiles.fileOf(dir.resolve("logs-1"), "t1");
            assertThat(stored(store, "t1")).isEqualTo(Files.readAllBytes(ranFile));
            assertThat(ran.health().getLogUploadsRefused()).isZero();
        }
        LogRecord endInFile = LogFiles.read(ranFile).get(0);

        try (SchedulerMaster other = master("m2", "logs-2").artifactStore(store.getRoot().toString()).build().start()) {
            List<LogRecord> records = new CopyOnWriteArrayList<>();
            LogRecord end = other.task("t1").followLogs(records::add).whenEnded().get(30, TimeUnit.SECONDS);
            assertThat(end.isComplete()).isFalse();
            assertThat(end.getNote()).as("the end the first master wrote, not one of this master's own")
                    .isEqualTo(endInFile.getNote());
            assertThat(Files.readAllBytes(LogFiles.fileOf(dir.resolve("logs-2"), "t1"))).isEqualTo(stored(store, "t1"));
            assertThat(other.health().getLogUploadsPending()).isZero();
        }
    }

    @Test
    void aMasterStartedLaterWithAnEmptyLogDirectoryServesTheWholeLogAndMetricsOfAnEndedRun() throws Exception {
        DirectoryStore store = new DirectoryStore(dir.resolve("store"));
        endedRunWithLines(store);
        try (SchedulerMaster later = master("m2", "logs-later").artifactStore(store.getRoot().toString()).build()
                .start()) {
            List<LogRecord> records = new CopyOnWriteArrayList<>();
            LogRecord end = later.task("t1").followLogs(records::add).whenEnded().get(30, TimeUnit.SECONDS);
            assertThat(end.isComplete()).isTrue();
            assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(records).filteredOn(LogRecord::isLine).extracting(LogRecord::getText)
                    .containsExactly("step 1", "RLS_METRIC {\"reward\": 0.5}", "step 3");
            assertThat(Files.readAllBytes(LogFiles.fileOf(dir.resolve("logs-later"), "t1")))
                    .as("brought into its log directory").isEqualTo(stored(store, "t1"));

            List<MetricPoint> points = new CopyOnWriteArrayList<>();
            assertThat(later.task("t1").followMetrics(points::add).whenEnded().get(30, TimeUnit.SECONDS).isComplete())
                    .isTrue();
            assertThat(points).singleElement().satisfies(p -> {
                assertThat(p.get("reward")).isEqualTo(0.5);
                assertThat(p.getSequence()).isEqualTo(2);
            });
        }
    }

    @Test
    void aStoreThatIsDownWhenAnEndedRunsLogIsFollowedFailsTheFollowWithStoreUnavailable() throws Exception {
        DirectoryStore store = new DirectoryStore(dir.resolve("store"));
        endedRunWithLines(store);
        try (SchedulerMaster later = master("m2", "logs-later").artifactStore(store.getRoot().toString()).build()
                .start()) {
            Files.move(store.getRoot(), dir.resolve("store-away"));
            Files.writeString(store.getRoot(), "not a directory");
            List<LogRecord> records = new CopyOnWriteArrayList<>();
            LogFollow follow = later.task("t1").followLogs(records::add);
            assertThat(follow.whenEnded()).failsWithin(WAIT).withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(StoreUnavailableException.class);
            assertThat(records).singleElement().satisfies(r -> {
                assertThat(r.isEndOfStream()).isTrue();
                assertThat(r.isComplete()).isFalse();
                assertThat(r.getNote()).contains("artifact store");
            });

            Files.delete(store.getRoot());
            Files.move(dir.resolve("store-away"), store.getRoot());
            List<LogRecord> again = new CopyOnWriteArrayList<>();
            assertThat(later.task("t1").followLogs(again::add).whenEnded().get(30, TimeUnit.SECONDS).isComplete()).isTrue();
            assertThat(again).filteredOn(LogRecord::isLine).hasSize(3);
        }
    }

    /** A host application's store: a directory store that records whether it was closed. */
    private static final class HostStore implements ArtifactStore {
        private final DirectoryStore store;
        volatile boolean closed;

        HostStore(DirectoryStore store) {
            this.store = store;
        }

        @Override
        public URI getUri() {
            return store.getUri();
        }

        @Override
        public StoredObject put(String key, Path source) {
            return store.put(key, source);
        }

        @Override
        public StoredObject put(String key, byte[] bytes) {
            return store.put(key, bytes);
        }

        @Override
        public StoredObject get(String key, Path target) {
            return store.get(key, target);
        }

        @Override
        public InputStream open(String key) {
            return store.open(key);
        }

        @Override
        public Optional<StoredObject> stat(String key) {
            return store.stat(key);
        }

        @Override
        public List<StoredObject> list(String prefix) {
            return store.list(prefix);
        }

        @Override
        public void delete(String key) {
            store.delete(key);
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
