package io.rlscheduler.worker.internal.artifacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lettuce.core.RedisClient;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.OutputsState;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.DirectoryStoreOutage;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.worker.ArtifactOptions;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An ended attempt's outputs, from its run directory to a real directory store and a real Redis:
 * what is stored and recorded, and the fencing of an attempt that no longer holds its task.
 */
class OutputsUploaderIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private LeaseCore core;
    private DirectoryStore store;
    private ArtifactTransfers transfers;
    private OutputsUploader uploader;
    private Path runDir;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) throws Exception {
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).build());
        store = new DirectoryStore(dir.resolve("store"));
        transfers = new ArtifactTransfers(store, true, ArtifactOptions.builder()
                .retryBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).build(), "w1");
        uploader = new OutputsUploader(core, "w1", "s1", transfers);
        runDir = Files.createDirectories(dir.resolve("runs/t/attempt-1"));
    }

    @AfterEach
    void close() {
        transfers.close();
        core.close();
    }

    /** Registers w1 with {@code session}, submits and claims task t, acknowledges it; returns its lease. */
    private TaskLease running() {
        join(core.register(new WorkerRegistration("w1", "s1", Map.of(), 4, 1L << 30, List.of())));
        join(core.submit(TaskDefinition.builder("t").specJson("{\"script\":\"x.py\"}").build()));
        Assignment a = join(core.claim("w1", "s1", 1, "r-" + UUID.randomUUID())).getAssignments().get(0);
        TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
        assertThat(join(core.acknowledge(lease, "w1", "s1")).isAccepted()).isTrue();
        return lease;
    }

    private List<AttemptOutputs> records() {
        return join(core.artifacts().outputs("t"));
    }

    private List<String> storedPaths() {
        String prefix = RunLayout.outputs("t", 1) + "/";
        return store.list(RunLayout.outputs("t", 1)).stream().map(StoredObject::getKey).map(k -> k.substring(prefix.length()))
                .toList();
    }

    private JsonNode manifest() throws Exception {
        try (InputStream in = store.open(RunLayout.outputsManifest("t", 1))) {
            return JSON.readTree(in);
        }
    }

    @Test
    void theFilesAreStoredWithTheirChecksumsThenTheManifestThenACompleteRecord() throws Exception {
        TaskLease lease = running();
        byte[] model = new byte[300_000];
        new Random(1).nextBytes(model);
        Files.write(runDir.resolve("model.pt"), model);
        Files.createDirectories(runDir.resolve("plots"));
        Files.writeString(runDir.resolve("plots/reward.txt"), "0.5\n");
        Files.writeString(runDir.resolve(".partial.tmp"), "hidden: an atomic write's temporary file");
        Files.createSymbolicLink(runDir.resolve("etc"), Path.of("/etc"));
        Files.createSymbolicLink(runDir.resolve("latest.pt"), Path.of("model.pt"));
        join(core.finish(lease, "w1", "s1", TaskState.FAILED, 1, "exited with code 1", null));

        assertThat(uploader.upload(lease, 1, runDir, true).get(20, TimeUnit.SECONDS)).isEqualTo(OutputsState.COMPLETE);

        assertThat(storedPaths()).containsExactly("model.pt", "plots/reward.txt");
        JsonNode m = manifest();
        assertThat(m.get("format").asText()).isEqualTo("rls-outputs/1");
        assertThat(m.get("complete").asBoolean()).isTrue();
        assertThat(m.get("epoch").asText()).isEqualTo(Long.toString(lease.getEpoch()));
        assertThat(m.get("files").get(0).get("path").asText()).isEqualTo("model.pt");
        assertThat(m.get("files").get(0).get("size").asLong()).isEqualTo(model.length);
        assertThat(m.get("files").get(0).get("sha256").asText()).isEqualTo(sha256(model));
        assertThat(m.get("skipped").findValuesAsText("path")).containsExactly("etc", "latest.pt");
        assertThat(m.get("skipped").findValuesAsText("reason")).containsOnly("SYMBOLIC_LINK");

        AttemptOutputs o = records().get(0);
        assertThat(o.getState()).isEqualTo(OutputsState.COMPLETE);
        assertThat(o.getManifestKey()).isEqualTo(RunLayout.outputsManifest("t", 1));
        assertThat(o.getFiles()).isEqualTo(2);
        assertThat(o.getBytes()).isEqualTo(model.length + 4);
        assertThat(o.getError()).isEmpty();
        assertThat(o.getSkipped()).containsExactly("etc: a symbolic link, not followed",
                "latest.pt: a symbolic link, not followed");
    }

    /**
     * With its end recorded, the attempt is refused at the pending record and sends nothing;
     * without (fenced), its files are sent, the record refused, and what it sent deleted.
     */
    @ParameterizedTest(name = "end recorded: {0}")
    @ValueSource(booleans = {true, false})
    void anAttemptWhoseTaskWasTakenBackRecordsNothingAndLeavesNothingInTheStore(boolean endRecorded) throws Exception {
        TaskLease lease = running();
        Files.writeString(runDir.resolve("out.txt"), "x");
        // The worker's session is replaced: its task is taken back.
        join(core.register(new WorkerRegistration("w1", "s2", Map.of(), 4, 1L << 30, List.of())));

        assertThat(uploader.upload(lease, 1, runDir, endRecorded).get(20, TimeUnit.SECONDS)).isNull();
        assertThat(storedPaths()).isEmpty();
        assertThat(store.stat(RunLayout.outputsManifest("t", 1))).isEmpty();
        assertThat(records()).isEmpty();
    }

    @Test
    void aFencedAttemptThatStillHoldsItsTaskRecordsItsOutputs() throws Exception {
        TaskLease lease = running();
        Files.writeString(runDir.resolve("out.txt"), "x");
        assertThat(uploader.upload(lease, 1, runDir, false).get(20, TimeUnit.SECONDS)).isEqualTo(OutputsState.COMPLETE);
        assertThat(storedPaths()).containsExactly("out.txt");
        assertThat(records()).singleElement().satisfies(o -> assertThat(o.getWorkerId()).isEqualTo("w1"));
    }

    @Test
    void whileTheStoreIsDownTheRecordSaysPendingAndWhyThenCompleteOnceItIsBack() throws Exception {
        TaskLease lease = running();
        Files.writeString(runDir.resolve("out.txt"), "x");
        join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, "", null));
        DirectoryStoreOutage.begin(store);

        CompletableFuture<OutputsState> done = uploader.upload(lease, 1, runDir, true);
        await().atMost(WAIT).until(() -> !records().isEmpty() && records().get(0).getError().startsWith("waiting for the artifact store"));
        AttemptOutputs pending = records().get(0);
        assertThat(pending.getState()).isEqualTo(OutputsState.PENDING);
        assertThat(pending.getFiles()).isEqualTo(1);
        assertThat(done).isNotDone();

        DirectoryStoreOutage.end(store);
        assertThat(done.get(20, TimeUnit.SECONDS)).isEqualTo(OutputsState.COMPLETE);
        assertThat(records().get(0).getError()).isEmpty();
        assertThat(storedPaths()).containsExactly("out.txt");
    }

    @Test
    void aSecondUploadOfTheSameAttemptWhileTheFirstIsUnderWayDoesNothing() throws Exception {
        TaskLease lease = running();
        Files.writeString(runDir.resolve("out.txt"), "x");
        DirectoryStoreOutage.begin(store);
        CompletableFuture<OutputsState> first = uploader.upload(lease, 1, runDir, false);
        assertThat(uploader.upload(lease, 1, runDir, false).get(20, TimeUnit.SECONDS)).isNull();
        DirectoryStoreOutage.end(store);
        assertThat(first.get(20, TimeUnit.SECONDS)).isEqualTo(OutputsState.COMPLETE);
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private static <T> T join(CompletableFuture<T> f) {
        return f.orTimeout(10, TimeUnit.SECONDS).join();
    }
}
