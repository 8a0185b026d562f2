package io.rlscheduler.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.OutputsState;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.DirectoryStoreOutage;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.testkit.JvmProcess;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.ArtifactOptions;
import io.rlscheduler.worker.SchedulerWorker;
import io.lettuce.core.RedisClient;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attempt's outputs outlive its machine: once it ends, however it ends, its worker stores
 * the files its script left in the run directory (real python3 scripts, a real directory store,
 * workers with run roots of their own) and records them in Redis. Hostile entries are skipped
 * and said, limits hold, a store that is down delays only the outputs, and an attempt that lost
 * its task leaves nothing visible.
 */
class OutputsIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** What outputs.py --training writes, and the worker's parameter file, in path order. */
    private static final String[] TRAINING_FILES = {"model.pt", "params.json", "plots/reward.png",
            "tb/events.out.tfevents.1700000000.host"};

    private TestRedis redis;
    private Cluster cluster;
    private LeaseCore core;
    private DirectoryStore store;
    private JvmProcess jvmWorker;

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns, RedisClient client) {
        this.redis = redis;
        this.cluster = new Cluster(redis, ns, dir);
        this.core = LeaseCore.create(client, cluster.options);
        this.store = new DirectoryStore(dir.resolve("store"));
    }

    @AfterEach
    void tearDown() {
        if (jvmWorker != null) {
            jvmWorker.close();
        }
        core.close();
        cluster.close();
    }

    // ------------------------------------------------------------------------------------------

    @Test
    void aTrainingRunsEventsFilePlotAndModelAreStoredWithTheirBytesAndTheRecordSaysComplete() throws Exception {
        worker("wa", ArtifactOptions.defaults());
        TaskResult result = cluster.master.submit(outputs("train-1").arg("--training").build()).result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);

        AttemptOutputs o = storedTrainingOutputs("train-1");
        assertThat(o.getState()).isEqualTo(OutputsState.COMPLETE);
        assertThat(o.isComplete()).isTrue();
        assertThat(o.getError()).isEmpty();
        assertThat(o.getWorkerId()).isEqualTo("wa");
        assertThat(o.getBytes()).isGreaterThan(3L * 1024 * 1024);
        JsonNode m = manifest(o);
        assertThat(m.get("complete").asBoolean()).isTrue();
        assertThat(m.get("skipped")).isEmpty();
    }

    @Test
    void aFailedRunsOutputsAreStoredToo() throws Exception {
        worker("wa", ArtifactOptions.defaults());
        TaskResult result = cluster.master.submit(outputs("failed-1").arg("--training").arg("--exit").arg("1").build())
                .result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.FAILED);
        assertThat(result.getExitCode()).isEqualTo(1);

        assertThat(storedTrainingOutputs("failed-1").getState()).isEqualTo(OutputsState.COMPLETE);
    }

    @Test
    void hostileEntriesAreSkippedAndListedWithTheirReasonsAndNothingOutsideTheRunDirectoryIsRead() throws Exception {
        worker("wa", ArtifactOptions.defaults());
        TaskResult result = cluster.master.submit(outputs("hostile-1").arg("--hostile").build()).result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);

        AttemptOutputs o = finalRecord("hostile-1", 1);
        // Only the plain files: no link followed, no fifo opened, no name stored that a store cannot hold.
        assertStoredAsWritten("wa", "hostile-1", o, "ok.txt", "params.json");
        assertThat(o.getState()).as("two files could not be stored").isEqualTo(OutputsState.INCOMPLETE);
        assertThat(o.getError()).isEqualTo("2 files with a name that cannot be stored (control characters, a backslash,"
                + " too long) not stored");
        assertThat(o.getSkippedCount()).isEqualTo(7);
        assertThat(o.getSkipped()).containsExactly(
                "back\\slash.txt: a name that cannot be stored (control characters, a backslash, too long)",
                "bad\\x0aname.txt: a name that cannot be stored (control characters, a backslash, too long)",
                "etc: a symbolic link, not followed",
                "passwd: a symbolic link, not followed",
                "pipe: not a regular file",
                "task-dir: a symbolic link, not followed",
                "up: a symbolic link, not followed");
        JsonNode m = manifest(o);
        assertThat(m.get("complete").asBoolean()).isFalse();
        Map<String, String> reasons = new TreeMap<>();
        m.get("skipped").forEach(s -> reasons.put(s.get("path").asText(), s.get("reason").asText()));
        assertThat(reasons).containsExactlyEntriesOf(new TreeMap<>(Map.of("back\\slash.txt", "UNSTORABLE_NAME",
                "bad\\x0aname.txt", "UNSTORABLE_NAME", "etc", "SYMBOLIC_LINK", "passwd", "SYMBOLIC_LINK",
                "pipe", "NOT_REGULAR", "task-dir", "SYMBOLIC_LINK", "up", "SYMBOLIC_LINK")));
        assertThat(store.list("")).extracting(StoredObject::getKey)
                .allSatisfy(k -> assertThat(k).startsWith("tasks/hostile-1/outputs/attempt-1"));
    }

    @Test
    void theFilesAndBytesLimitsHoldAndTheRecordNamesEachLimitWithItsValue() throws Exception {
        worker("wa", ArtifactOptions.builder().maxOutputFiles(1000).maxOutputBytes(1 << 20).build());
        TaskHandle tiny = cluster.master.submit(outputs("tiny-1").arg("--tiny").arg("10000").build());
        TaskHandle big = cluster.master.submit(outputs("big-1").arg("--big").arg(Integer.toString(3 << 20)).build());
        assertThat(tiny.result().get(90, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(big.result().get(90, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);

        AttemptOutputs t = finalRecord("tiny-1", 1);
        assertThat(t.getState()).isEqualTo(OutputsState.INCOMPLETE);
        assertThat(t.getFiles()).isEqualTo(1000);
        // params.json and tiny/00000 .. tiny/00998: the first 1000 in path order.
        List<String> stored = storedPaths("tiny-1", 1);
        assertThat(stored).hasSize(1000).startsWith("params.json", "tiny/00000").endsWith("tiny/00998");
        assertThat(t.getError()).isEqualTo("more files than maxOutputFiles (1000): 9001 files not stored");
        assertThat(t.getSkippedCount()).isEqualTo(9001);
        assertThat(t.getSkipped()).hasSize(AttemptOutputs.MAX_LISTED).first()
                .isEqualTo("tiny/00999: over maxOutputFiles (1000)");
        assertThat(manifest(t).get("files")).hasSize(1000);
        assertThat(manifest(t).get("skipped")).hasSize(1000);

        AttemptOutputs b = finalRecord("big-1", 1);
        assertThat(b.getState()).isEqualTo(OutputsState.INCOMPLETE);
        assertThat(storedPaths("big-1", 1)).containsExactly("model.pt", "params.json");
        assertThat(b.getBytes()).isLessThanOrEqualTo(1 << 20);
        assertThat(b.getError()).isEqualTo("1 file of " + (3 << 20) + " bytes over maxOutputBytes (1048576 bytes) not stored");
        assertThat(b.getSkipped()).containsExactly("big.bin: " + (3 << 20) + " bytes, over maxOutputBytes (1048576 bytes)");
    }

    @Test
    void whileTheStoreIsDownTheTaskEndsAtOnceAndItsOutputsArePendingUntilTheStoreIsBack() throws Exception {
        worker("wa", ArtifactOptions.builder().retryBackoff(Duration.ofMillis(100), Duration.ofMillis(400)).build());
        // The store's directory for new objects replaced by a file: every put fails.
        DirectoryStoreOutage.begin(store);

        TaskResult result = cluster.master.submit(outputs("down-1").arg("--training").build()).result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        await().atMost(WAIT).until(() -> record("down-1", 1) != null
                && record("down-1", 1).getError().startsWith("waiting for the artifact store"));
        AttemptOutputs pending = record("down-1", 1);
        assertThat(pending.getState()).isEqualTo(OutputsState.PENDING);
        assertThat(pending.isComplete()).isFalse();
        assertThat(pending.getFiles()).isEqualTo(4);
        assertThat(storedPaths("down-1", 1)).isEmpty();

        DirectoryStoreOutage.end(store);
        AttemptOutputs o = storedTrainingOutputs("down-1");
        assertThat(o.getState()).isEqualTo(OutputsState.COMPLETE);
        assertThat(o.getError()).isEmpty();
    }

    @Test
    void aFrozenWorkerWhoseAttemptLostItsTaskRecordsNoOutputsAndLeavesNoneInTheStore() throws Exception {
        JvmProcess a = workerJvm("wa");
        TaskHandle run = cluster.master.submit(outputs("frozen-1").arg("--training").arg("--sleep-first").arg("600").build());
        await().atMost(WAIT).until(() -> Files.exists(dir.resolve("runs-wa/frozen-1/attempt-1/model.pt")));
        worker("wb", ArtifactOptions.defaults());
        a.freeze();
        TaskResult result = run.result().get(90, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wb");
        assertThat(result.getAttempts()).isEqualTo(2);
        AttemptOutputs second = finalRecord("frozen-1", 2);
        assertThat(second.getWorkerId()).isEqualTo("wb");

        a.thaw();
        a.awaitOutput("task frozen-1 attempt 1: outputs not recorded (", WAIT);
        assertThat(join(core.artifacts().outputs("frozen-1"))).extracting(AttemptOutputs::getAttempt).containsExactly(2);
        // What it sent before its record was refused is deleted: its files, then its manifest.
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(storedPaths("frozen-1", 1)).isEmpty();
            assertThat(store.stat(RunLayout.outputsManifest("frozen-1", 1))).isEmpty();
        });
        assertThat(storedPaths("frozen-1", 2)).contains("model.pt");
    }

    // ------------------------------------------------------------------------------------------

    private static TaskSpec.Builder outputs(String id) {
        return TaskSpec.python("outputs.py").taskId(id).maxAttempts(3);
    }

    /** An in-process worker with a run root and state directory of its own, and the store. */
    private SchedulerWorker worker(String id, ArtifactOptions artifacts) {
        return cluster.start(cluster.workerBuilder(id).cpuSlots(2).runRoot(dir.resolve("runs-" + id))
                .artifacts(artifacts.mutate().store(store.getUri().toString()).build()));
    }

    /** A worker in a JVM of its own (to be frozen), with its own run root; closed after the test. */
    private JvmProcess workerJvm(String id) {
        JvmProcess p = jvmWorker = JvmProcess.builder(WorkerMain.class).args(
                        "--masters", "127.0.0.1:" + cluster.master.getRpcAddress().getPort(),
                        "--redis", redis.getUri().toURI().toString(), "--worker-id", id, "--secret", Cluster.SECRET,
                        "--gpus", "", "--cpu-slots", "2", "--scripts", Cluster.TEST_SCRIPTS.toString(),
                        "--runs", dir.resolve("runs-" + id).toString(), "--store", store.getUri().toString(),
                        "--namespace", cluster.options.getNamespace(), "--heartbeat-ms", "200", "--liveness-ms", "1000",
                        "--task-lease-ms", "2000", "--ack-timeout-ms", "2000", "--kill-grace-ms", "1000")
                .logFile(dir.resolve(id + ".log")).start();
        p.awaitOutput("started, session", WAIT);
        return p;
    }

    private AttemptOutputs record(String taskId, int attempt) {
        return join(core.artifacts().outputs(taskId)).stream().filter(o -> o.getAttempt() == attempt).findFirst()
                .orElse(null);
    }

    /** The outputs record of a run of outputs.py --training on wa, once final, its files checked in the store. */
    private AttemptOutputs storedTrainingOutputs(String taskId) throws Exception {
        AttemptOutputs o = finalRecord(taskId, 1);
        assertStoredAsWritten("wa", taskId, o, TRAINING_FILES);
        return o;
    }

    /** The attempt's outputs record once its state is final. */
    private AttemptOutputs finalRecord(String taskId, int attempt) {
        await().atMost(WAIT).until(() -> record(taskId, attempt) != null && record(taskId, attempt).getState().isFinal());
        return record(taskId, attempt);
    }

    private List<String> storedPaths(String taskId, int attempt) {
        String prefix = RunLayout.outputs(taskId, attempt) + "/";
        return store.list(RunLayout.outputs(taskId, attempt)).stream().map(StoredObject::getKey)
                .map(k -> k.substring(prefix.length())).toList();
    }

    private JsonNode manifest(AttemptOutputs o) throws Exception {
        try (InputStream in = store.open(o.getManifestKey())) {
            return JSON.readTree(in);
        }
    }

    /**
     * The store holds exactly {@code paths} of the attempt's outputs, each with the bytes the
     * script left in the worker's run directory, and the manifest and record agree with them.
     */
    private void assertStoredAsWritten(String workerId, String taskId, AttemptOutputs o, String... paths) throws Exception {
        assertThat(storedPaths(taskId, o.getAttempt())).containsExactly(paths);
        Path runDir = dir.resolve("runs-" + workerId).resolve(taskId).resolve("attempt-" + o.getAttempt());
        JsonNode files = manifest(o).get("files");
        assertThat(files).hasSize(paths.length);
        long total = 0;
        for (int i = 0; i < paths.length; i++) {
            byte[] written = Files.readAllBytes(runDir.resolve(paths[i]));
            byte[] stored;
            try (InputStream in = store.open(RunLayout.outputs(taskId, o.getAttempt()) + "/" + paths[i])) {
                stored = in.readAllBytes();
            }
            assertThat(stored).as(paths[i]).isEqualTo(written);
            JsonNode f = files.get(i);
            assertThat(f.get("path").asText()).isEqualTo(paths[i]);
            assertThat(f.get("size").asLong()).isEqualTo(written.length);
            assertThat(f.get("sha256").asText()).isEqualTo(sha256(written));
            total += written.length;
        }
        assertThat(o.getFiles()).isEqualTo(paths.length);
        assertThat(o.getBytes()).isEqualTo(total);
        assertThat(manifest(o).get("bytes").asLong()).isEqualTo(total);
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private static <T> T join(CompletableFuture<T> f) {
        return f.orTimeout(10, TimeUnit.SECONDS).join();
    }
}
