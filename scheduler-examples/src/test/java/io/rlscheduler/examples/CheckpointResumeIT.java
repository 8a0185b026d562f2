package io.rlscheduler.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.Artifact;
import io.rlscheduler.master.RunArtifacts;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.DirectoryStoreOutage;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.store.s3.S3ProxyServer;
import io.rlscheduler.testkit.JvmProcess;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.ArtifactOptions;
import io.rlscheduler.worker.SchedulerWorker;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints that outlive their machine: every worker here has its own run root and state
 * directory (separate machines), and the only thing they share is the artifact store (a
 * directory store, as an NFS mount would be, or a real S3 server: s3proxy in this JVM) and Redis. A run whose worker is killed resumes on
 * the other worker from the newest checkpoint committed before the kill; a frozen worker's
 * commits after it lost its task are refused and leave nothing visible; a corrupt checkpoint is
 * detected and the one before it taken.
 */
class CheckpointResumeIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();
    @RegisterExtension
    static S3ProxyServer s3 = S3ProxyServer.of(S3ProxyServer.Backend.TRANSIENT);

    /** The stores the tests run against. */
    enum Store { DIRECTORY, S3 }

    private static final String SECRET = Cluster.SECRET;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private TestRedis redis;
    private CoreOptions options;
    private LeaseCore core;
    private DirectoryStore directory;
    /** The store the test reads and corrupts; the workers open it by URI. */
    private ArtifactStore store;
    private String storeUri;
    private Map<String, String> storeSettings = Map.of();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns, RedisClient client) {
        this.redis = redis;
        this.options = CoreOptions.builder().namespace(ns.name())
                .heartbeatInterval(Duration.ofMillis(200)).livenessLease(Duration.ofSeconds(1))
                .taskLease(Duration.ofSeconds(3)).ackTimeout(Duration.ofSeconds(2)).maxLeaseLosses(3).build();
        this.core = closing(LeaseCore.create(client, options));
        this.directory = new DirectoryStore(dir.resolve("store"));
        use(Store.DIRECTORY);
    }

    private void use(Store kind) {
        if (kind == Store.DIRECTORY) {
            store = directory;
            storeUri = directory.getUri().toString();
            storeSettings = Map.of();
        } else {
            String prefix = "runs-" + java.util.UUID.randomUUID();
            store = closing(s3.store(prefix));
            storeUri = s3.uri(prefix);
            storeSettings = Map.of("access-key", S3ProxyServer.ACCESS_KEY, "secret-key", S3ProxyServer.SECRET_KEY);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeables.add(c);
        return c;
    }

    // ------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Store.class)
    void aRunWhoseWorkerIsKilledResumesOnAnotherWorkerFromTheNewestCheckpointCommittedBeforeTheKill(Store kind) throws Exception {
        use(kind);
        SchedulerMaster master = master();
        JvmProcess a = workerJvm("wa", master);
        TaskHandle run = master.submit(train("resume-far", 400, 20, 0.01));
        await().atMost(WAIT).until(() -> newestEpisode("resume-far") >= 60);

        a.kill();
        await().atMost(WAIT).until(() -> workerState(master, "wa") == WorkerState.DOWN);
        CheckpointEntry newest = committed("resume-far").get(0);
        int episodeAtKill = episodeOf("resume-far", newest);
        assertThat(newest.workerId()).isEqualTo("wa");

        closing(worker("wb", master, ArtifactOptions.defaults()));
        TaskResult result = run.result().get(90, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wb");
        assertThat(result.getAttempts()).isEqualTo(2);
        // train.py's own count: the second attempt went on from the checkpoint's episode, on a
        // machine whose run root never held it.
        assertThat(((Number) result.getFinalMetrics().get("resumed_from_episode")).intValue()).isEqualTo(episodeAtKill);
        assertThat(dir.resolve("runs-wb/resume-far/attempt-1")).doesNotExist();
        // The result names the latest checkpoint as the task ended (attempt 2's last, episode 400),
        // and the outputs records there were then: attempt 1 was killed with -9 and has none; attempt
        // 2's upload begins just after its end is recorded, so it may not have one yet.
        assertThat(result.getLatestCheckpoint()).hasValueSatisfying(id -> assertThat(id).startsWith("e" + result.getRecord().getEpoch() + "-"));
        assertThat(result.getOutputs()).allSatisfy(o -> assertThat(o.getAttempt()).isEqualTo(2));
        await().atMost(WAIT).untilAsserted(() -> assertThat(join(core.artifacts().outputs("resume-far")))
                .singleElement().satisfies(o -> {
                    assertThat(o.getAttempt()).isEqualTo(2);
                    assertThat(o.getState()).isEqualTo(io.rlscheduler.core.OutputsState.COMPLETE);
                }));
        assertThat(logLines(master, "resume-far")).anySatisfy(l ->
                assertThat(l).startsWith("rl-scheduler: resuming from checkpoint " + newest.id() + " (attempt 1 on wa"));
        JsonNode note = JSON.readTree(join(core.artifacts().restores("resume-far")).get(2));
        assertThat(note.get("from").asText()).isEqualTo(newest.id());
        assertThat(note.get("worker").asText()).isEqualTo("wb");
        assertThat(note.get("skipped")).isEmpty();
        // The second attempt committed its own, and the newest K are kept: by default two.
        await().atMost(WAIT).until(() -> committed("resume-far").get(0).workerId().equals("wb"));
        assertThat(committed("resume-far")).hasSize(ArtifactOptions.DEFAULT_CHECKPOINTS_KEPT);
        assertOnlyCommittedCheckpointsAreStored("resume-far");

        // The run's artifacts through the API: the kept checkpoints' files and the ended log, downloaded and checked.
        await().atMost(WAIT).until(() -> !run.artifacts().list(Artifact.Kind.LOG).isEmpty());
        RunArtifacts artifacts = run.artifacts();
        assertThat(artifacts.list(Artifact.Kind.CHECKPOINT)).extracting(Artifact::getCheckpointId)
                .containsExactlyElementsOf(committed("resume-far").stream().map(CheckpointEntry::id).toList());
        assertThat(artifacts.list(Artifact.Kind.CHECKPOINT)).allSatisfy(file -> {
            assertThat(file.getPath()).isEqualTo("checkpoint.json");
            assertThat(file.getSha256()).hasSize(64);
            assertThat(file.getAttempt()).isEqualTo(2);
        });
        Path down = artifacts.downloadAll(dir.resolve("download"));
        Artifact newestFile = artifacts.list(Artifact.Kind.CHECKPOINT).get(0);
        Path fetched = down.resolve("checkpoints").resolve(newestFile.getCheckpointId()).resolve("checkpoint.json");
        assertThat(JSON.readTree(fetched.toFile()).get("episode").asInt()).isEqualTo(400);
        assertThat(down.resolve("resume-far.log")).hasSameBinaryContentAs(dir.resolve("logs/resume-far.log"));
    }

    @Test
    void aFrozenWorkersCommitsAfterItLostItsTaskAreRefusedAndLeaveNothingVisible() throws Exception {
        SchedulerMaster master = master();
        JvmProcess a = workerJvm("wa", master);
        // A checkpoint line every episode: while the worker is frozen its script (until the
        // launcher stops it) leaves many of them in the pipe, which the thawed worker then reads.
        TaskHandle run = master.submit(train("frozen-ckpt", 600, 1, 0.02));
        await().atMost(WAIT).until(() -> newestEpisode("frozen-ckpt") >= 5);
        closing(worker("wb", master, ArtifactOptions.defaults()));
        a.freeze();
        long frozenEpoch = committed("frozen-ckpt").get(0).epoch();
        await().atMost(WAIT).until(() -> !committed("frozen-ckpt").isEmpty()
                && committed("frozen-ckpt").get(0).workerId().equals("wb"));
        a.thaw();
        a.awaitOutput("no longer holds the task", WAIT);
        TaskResult result = run.result().get(120, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wb");

        // The checkpoints the thawed worker tried to commit: refused, and none of them visible.
        java.util.regex.Pattern refusedLine = java.util.regex.Pattern.compile("checkpoint (e\\d+-\\d+) refused \\(STALE\\)");
        List<String> refused = a.output().stream().map(refusedLine::matcher).filter(java.util.regex.Matcher::find)
                .map(m -> m.group(1)).toList();
        assertThat(refused).isNotEmpty().allSatisfy(id -> assertThat(id).startsWith("e" + frozenEpoch + "-"));
        assertThat(committed("frozen-ckpt")).extracting(CheckpointEntry::id).doesNotContainAnyElementsOf(refused);
        assertOnlyCommittedCheckpointsAreStored("frozen-ckpt");
        assertThat(storedCheckpointIds("frozen-ckpt")).doesNotContainAnyElementsOf(refused);
    }

    @ParameterizedTest
    @EnumSource(Store.class)
    void aCorruptCheckpointIsDetectedByItsChecksumAndTheOneBeforeItIsTaken(Store kind) throws Exception {
        use(kind);
        SchedulerMaster master = master();
        SchedulerWorker a = worker("wa", master, ArtifactOptions.defaults());
        TaskHandle run = master.submit(train("corrupt-1", 400, 20, 0.01));
        await().atMost(WAIT).until(() -> committed("corrupt-1").size() >= 2 && newestEpisode("corrupt-1") >= 60);
        // Stopped without recording the end (as a machine that dies): the lease lapses, the task is re-queued.
        a.shutdownNow();
        assertThat(a.awaitTermination(WAIT)).isTrue();
        List<CheckpointEntry> list = committed("corrupt-1");
        CheckpointEntry newest = list.get(0);
        CheckpointEntry previous = list.get(1);
        int previousEpisode = episodeOf("corrupt-1", previous);
        // Bytes changed under the store: same size, other content.
        String key = RunLayout.checkpointFile("corrupt-1", newest.id(), "checkpoint.json");
        byte[] bytes;
        try (InputStream in = store.open(key)) {
            bytes = in.readAllBytes();
        }
        bytes[bytes.length / 2] ^= 0x20;
        store.put(key, bytes);

        closing(worker("wb", master, ArtifactOptions.defaults()));
        TaskResult result = run.result().get(90, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(((Number) result.getFinalMetrics().get("resumed_from_episode")).intValue()).isEqualTo(previousEpisode);
        assertThat(logLines(master, "corrupt-1")).contains("rl-scheduler: checkpoint " + newest.id()
                + " skipped: checkpoint.json is corrupt (its SHA-256 differs from the manifest's)");
        JsonNode note = JSON.readTree(join(core.artifacts().restores("corrupt-1")).get(2));
        assertThat(note.get("from").asText()).isEqualTo(previous.id());
        assertThat(note.get("skipped").get(0).get("id").asText()).isEqualTo(newest.id());
        assertThat(note.get("skipped").get(0).get("reason").asText()).contains("corrupt");
    }

    @Test
    void whileTheStoreIsDownRunsGoOnNothingIsMarkedCommittedAndCommitsResumeOnceItIsBack() throws Exception {
        SchedulerMaster master = master();
        closing(worker("wa", master, ArtifactOptions.builder().retryBackoff(Duration.ofMillis(100), Duration.ofMillis(400)).build()));
        TaskHandle run = master.submit(train("down-1", 1500, 10, 0.01));
        await().atMost(WAIT).until(() -> newestEpisode("down-1") >= 20);
        // The store's directory for new objects replaced by a file: every put fails.
        DirectoryStoreOutage.begin(directory);
        int committedBefore = committed("down-1").size();
        List<Artifact> listedBefore = master.task("down-1").artifacts().list(Artifact.Kind.CHECKPOINT);
        String newestBefore = committed("down-1").get(0).id();
        await().atMost(WAIT).until(() -> logLines(master, "down-1").stream().anyMatch(l -> l.contains("not committed yet")));
        assertThat(committed("down-1").get(0).id()).isEqualTo(newestBefore);
        assertThat(committed("down-1")).hasSize(committedBefore);
        assertThat(run.getRecord().getState()).isEqualTo(TaskState.RUNNING);

        DirectoryStoreOutage.end(directory);
        await().atMost(WAIT).until(() -> !committed("down-1").get(0).id().equals(newestBefore));
        TaskResult result = run.result().get(90, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).isEqualTo(1);
        await().atMost(WAIT).until(() -> episodeOf("down-1", committed("down-1").get(0)) == 1500);
        assertOnlyCommittedCheckpointsAreStored("down-1");
        // A checkpoint listed before and dropped by retention since: a typed error, not a stream of nothing.
        RunArtifacts now = run.artifacts();
        assertThatThrownBy(() -> now.open(listedBefore.get(listedBefore.size() - 1)))
                .isInstanceOf(ArtifactNotFoundException.class);
    }

    @Test
    void aStoreThatStaysDownHoldsTheEndUpNoLongerThanTheEndWait() throws Exception {
        SchedulerMaster master = master();
        closing(worker("wa", master, ArtifactOptions.builder().retryBackoff(Duration.ofMillis(100), Duration.ofMillis(400))
                .checkpointEndWait(Duration.ofSeconds(2)).build()));
        DirectoryStoreOutage.begin(directory);
        TaskHandle run = master.submit(train("down-end", 20, 10, 0));
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(committed("down-end")).isEmpty();
        // The end was recorded while the checkpoint was still retrying: what the log says of it is that.
        assertThat(endedLog(master, "down-end")).anySatisfy(l -> assertThat(l).contains("not committed yet"));
        DirectoryStoreOutage.end(directory);
    }

    @Test
    void checkpointsOverTheTasksByteLimitAreNotCommittedAndTheRecordSaysWhy() throws Exception {
        SchedulerMaster master = master();
        closing(worker("wa", master, ArtifactOptions.defaults()));
        // train.py's checkpoint of a 6x6 grid is a few KiB: one fits in 12 KiB, the two kept do not.
        TaskHandle run = master.submit(TaskSpec.python("train.py").taskId("limit-1").param("episodes", 40)
                .param("checkpoint-every", 10).param("seed", 7).gpus(1).maxCheckpointBytes(12_000).build());
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        // The end waits for the checkpoints in flight: once the result is in, the record and the log say it all.
        assertThat(run.getRecord().getArtifactError()).matches("checkpoint e\\d+-\\d+ not committed: the 2 kept"
                + " checkpoints would hold \\d+ bytes, over the task's limit of 12000 bytes \\(maxCheckpointBytes\\)");
        assertThat(committed("limit-1")).hasSize(1);
        assertOnlyCommittedCheckpointsAreStored("limit-1");
        assertThat(endedLog(master, "limit-1")).anySatisfy(l -> assertThat(l).contains("not committed: the 2 kept"
                + " checkpoints would exceed the task's limit of 12000 bytes"));

        // A single checkpoint larger than the limit is not even sent.
        TaskHandle tiny = master.submit(TaskSpec.python("train.py").taskId("limit-2").param("episodes", 20)
                .param("checkpoint-every", 10).param("seed", 7).gpus(1).maxCheckpointBytes(100).build());
        assertThat(tiny.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        await().atMost(WAIT).untilAsserted(() -> assertThat(tiny.getRecord().getArtifactError())
                .contains("not committed: more than 100 bytes (at checkpoint.json)"));
        assertThat(storedCheckpointIds("limit-2")).isEmpty();
    }

    @Test
    void anInJvmExecutorsCommitAfterItsAttemptLostTheTaskFailsWithLeaseLostAndLeavesNothingVisible() throws Exception {
        SchedulerMaster master = master();
        java.util.concurrent.CompletableFuture<io.rlscheduler.worker.TaskOutput> output = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.CompletableFuture<io.rlscheduler.worker.TaskContext> context = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.CompletableFuture<io.rlscheduler.worker.ExecutionResult> done = new java.util.concurrent.CompletableFuture<>();
        io.rlscheduler.worker.TaskExecutor inJvm = (ctx, out) -> {
            context.complete(ctx);
            output.complete(out);
            return new io.rlscheduler.worker.TaskExecution() {
                @Override
                public java.util.concurrent.CompletableFuture<io.rlscheduler.worker.ExecutionResult> completion() {
                    return done;
                }

                @Override
                public void stop(io.rlscheduler.worker.StopReason reason, Duration grace) {
                    done.complete(new io.rlscheduler.worker.ExecutionResult(143, reason, "stopped: " + reason));
                }
            };
        };
        closing(SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort()).redis(redis.getUri())
                .workerId("wj").secret(SECRET).coreOptions(options).gpuIds(0).cpuSlots(2).executor(inJvm)
                .runRoot(dir.resolve("runs-wj")).stateDirectory(dir.resolve("state-wj"))
                .nvidiaSmi(dir.resolve("no-nvidia-smi").toString())
                .artifacts(ArtifactOptions.builder().store(storeUri).build()).build().start());
        master.submit(TaskSpec.python("in-jvm").taskId("jvm-1").gpus(1).build());
        Path ckpt = context.get(30, TimeUnit.SECONDS).getCheckpointDir();
        Files.writeString(ckpt.resolve("weights.bin"), "step 1");
        String first = output.get().checkpoint("").get(30, TimeUnit.SECONDS);
        assertThat(committed("jvm-1")).extracting(CheckpointEntry::id).containsExactly(first);

        // The worker's session is replaced (as by a restart elsewhere under its id): its task is taken back.
        join(core.register(new io.rlscheduler.core.internal.WorkerRegistration("wj", "another-session", Map.of(), 2,
                1L << 30, List.of(0))));
        Files.writeString(ckpt.resolve("weights.bin"), "step 2");
        java.util.concurrent.CompletableFuture<String> late = output.get().checkpoint("");
        assertThatThrownBy(() -> late.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(io.rlscheduler.core.LeaseLostException.class)
                .cause().hasMessageContaining("no longer holds the task");
        assertThat(committed("jvm-1")).extracting(CheckpointEntry::id).containsExactly(first);
        assertOnlyCommittedCheckpointsAreStored("jvm-1");
    }

    @Test
    void aScriptThatPrintsNoLineHasItsDirectoryCommittedAfterTheQuietPeriodAndAtItsEnd() throws Exception {
        SchedulerMaster master = master();
        closing(worker("wa", master, ArtifactOptions.builder().checkpointQuietPeriod(Duration.ofMillis(300)).build()));
        TaskHandle run = master.submit(TaskSpec.python("unmarked_checkpoint.py").taskId("quiet-1").param("hold", 2.0)
                .gpus(1).build());
        assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        // Unchanged for the quiet period while the script held still: committed; changed just before
        // the end: committed by the end. The hidden temporary file of the atomic write is never part of one.
        await().atMost(WAIT).until(() -> committed("quiet-1").size() == 2);
        List<CheckpointEntry> list = committed("quiet-1");
        assertThat(stateOf("quiet-1", list.get(0))).isEqualTo("step 2");
        assertThat(stateOf("quiet-1", list.get(1))).isEqualTo("step 1");
        assertThat(list).allSatisfy(c -> assertThat(c.files()).isEqualTo(1));
    }

    private String stateOf(String taskId, CheckpointEntry entry) throws Exception {
        try (InputStream in = store.open(RunLayout.checkpointFile(taskId, entry.id(), "state.txt"))) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    // ------------------------------------------------------------------------------------------

    private SchedulerMaster master() {
        return closing(SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs")).masterId("m1")
                .artifactStore(storeUri).artifactStoreSettings(storeSettings)
                .reapInterval(Duration.ofMillis(200)).dispatchInterval(Duration.ofMillis(500)).build().start());
    }

    /** An in-process worker with a run root and state directory of its own. */
    private SchedulerWorker worker(String id, SchedulerMaster master, ArtifactOptions artifacts) {
        return SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort()).redis(redis.getUri())
                .workerId(id).secret(SECRET).coreOptions(options).gpuIds(0).cpuSlots(2)
                .scriptRoots(Cluster.REPO_SCRIPTS, Cluster.TEST_SCRIPTS).runRoot(dir.resolve("runs-" + id)).stateDirectory(dir.resolve("state-" + id))
                .killGrace(Duration.ofSeconds(1)).reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .nvidiaSmi(dir.resolve("no-nvidia-smi").toString())
                .artifacts(artifacts.mutate().store(storeUri).storeSettings(storeSettings).build()).build().start();
    }

    /** A worker in a JVM of its own (to be killed or frozen), with its own run root. */
    private JvmProcess workerJvm(String id, SchedulerMaster master) {
        JvmProcess.Builder b = JvmProcess.builder(WorkerMain.class);
        if (storeSettings.containsKey("access-key")) {
            // This machine's credentials, from the standard AWS chain: never in the URI the masters publish.
            b.env("AWS_ACCESS_KEY_ID", storeSettings.get("access-key")).env("AWS_SECRET_ACCESS_KEY", storeSettings.get("secret-key"));
        }
        JvmProcess p = closing(b.args(
                        "--masters", "127.0.0.1:" + master.getRpcAddress().getPort(), "--redis", redis.getUri().toURI().toString(),
                        "--worker-id", id, "--secret", SECRET, "--gpus", "0", "--cpu-slots", "2",
                        "--scripts", Cluster.REPO_SCRIPTS.toString(), "--runs", dir.resolve("runs-" + id).toString(),
                        "--store", storeUri,
                        "--namespace", options.getNamespace(), "--heartbeat-ms", "200", "--liveness-ms", "1000",
                        "--task-lease-ms", "3000", "--ack-timeout-ms", "2000", "--kill-grace-ms", "1000")
                .logFile(dir.resolve(id + "-" + closeables.size() + ".log")).start());
        p.awaitOutput("started, session", WAIT);
        return p;
    }

    private static TaskSpec train(String id, int episodes, int checkpointEvery, double delay) {
        return TaskSpec.python("train.py").taskId(id).param("episodes", episodes).param("checkpoint-every", checkpointEvery)
                .param("episode-delay", delay).param("seed", 7).gpus(1).build();
    }

    private List<CheckpointEntry> committed(String taskId) {
        return join(core.artifacts().committed(taskId));
    }

    /** The episode of the task's newest committed checkpoint, read from the store; 0 for none. */
    private int newestEpisode(String taskId) throws Exception {
        List<CheckpointEntry> list = committed(taskId);
        return list.isEmpty() ? 0 : episodeOf(taskId, list.get(0));
    }

    private int episodeOf(String taskId, CheckpointEntry entry) throws Exception {
        try (InputStream in = store.open(RunLayout.checkpointFile(taskId, entry.id(), "checkpoint.json"))) {
            return JSON.readTree(in).get("episode").asInt();
        }
    }

    /** The ids of the checkpoints that have objects in the store. */
    private List<String> storedCheckpointIds(String taskId) {
        String prefix = RunLayout.checkpoints(taskId) + "/";
        return store.list(RunLayout.checkpoints(taskId)).stream().map(StoredObject::getKey)
                .map(k -> k.substring(prefix.length(), k.indexOf('/', prefix.length()))).distinct().toList();
    }

    /** The store holds the committed checkpoints' objects and no others (dropped ones were deleted). */
    private void assertOnlyCommittedCheckpointsAreStored(String taskId) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(storedCheckpointIds(taskId))
                .containsExactlyInAnyOrderElementsOf(committed(taskId).stream().map(CheckpointEntry::id).toList()));
    }

    private WorkerState workerState(SchedulerMaster master, String id) {
        return master.listWorkers().stream().filter(w -> w.getWorkerId().equals(id)).map(WorkerInfo::getState)
                .findFirst().orElse(null);
    }

    private List<String> logLines(SchedulerMaster master, String taskId) throws Exception {
        Path file = dir.resolve("logs").resolve(taskId + ".log");
        return Files.exists(file) ? Files.readAllLines(file) : List.of();
    }

    /** The task's log once its end line is written. */
    private List<String> endedLog(SchedulerMaster master, String taskId) {
        return await().atMost(WAIT).until(() -> logLines(master, taskId),
                lines -> lines.stream().anyMatch(l -> l.startsWith("##RLS_END ")));
    }

    private static <T> T join(java.util.concurrent.CompletableFuture<T> f) {
        return f.orTimeout(10, TimeUnit.SECONDS).join();
    }

}
