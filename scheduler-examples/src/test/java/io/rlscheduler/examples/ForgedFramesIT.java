package io.rlscheduler.examples;

import com.google.protobuf.ByteString;
import io.lettuce.core.RedisClient;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.master.HolderRefusals;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.ExecuteTaskAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.protocol.MessageType;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a peer that holds the shared secret, connected as a worker of its own that holds no task,
 * can do to other tasks over the RPC port: nothing. A real master and a real worker run a real
 * python3 task while a hand-made connection ({@link RawWorker}) sends frames for it: lines into
 * its log, lines beyond its end, an epoch it never had, an acknowledgement, and a log for a task
 * id never submitted. Each is answered with a typed refusal and writes nothing; the task runs on,
 * and its log holds exactly the lines the script printed, as many as its record says. (The
 * status reports a worker once sent are gone: an attempt's end comes only from its record in
 * Redis, written by its holder through the fenced finish script; a frame of their old type is
 * an unknown type, answered and closed by the codec.)
 */
class ForgedFramesIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private Cluster cluster;
    private RedisClient client;
    private LeaseCore core;
    private RawWorker forger;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) throws Exception {
        cluster = new Cluster(redis, ns, dir);
        cluster.worker("wa", 0);
        client = RedisClient.create(redis.getUri());
        core = LeaseCore.create(client, cluster.options);
        // Registered as a worker of its own, without a GPU: the tasks here need one, so it holds none.
        core.register(new WorkerRegistration("w-forger", "s-forger", Map.of(), 1, 0, List.of())).get(10, TimeUnit.SECONDS);
        forger = RawWorker.connect(cluster.master.getRpcAddress(), Cluster.SECRET, "w-forger", "s-forger");
    }

    @AfterEach
    void stop() {
        if (forger != null) {
            forger.close();
        }
        core.close();
        client.shutdown();
        cluster.close();
    }

    @Test
    void framesForAnotherWorkersTaskAreRefusedAndItsLogHoldsExactlyWhatItsScriptPrinted() throws Exception {
        TaskHandle run = cluster.master.submit(TaskSpec.python("marked.py").taskId("victim").param("lines", 30)
                .param("delay", 0.05).gpus(1).build());
        await().atMost(WAIT).until(() -> outputLines("victim").size() >= 3);
        assertThat(cluster.master.health().getKnownAttemptHolders()).as("the running victim's holder").isEqualTo(1);
        long epoch = cluster.master.getTask("victim").orElseThrow().getEpoch();

        forger.send(batch("victim", epoch, 1, "FORGED replacing line 1\n"));
        forger.send(batch("victim", epoch, 4, "FORGED next line\n"));
        forger.send(batch("victim", epoch, 1_000_000, "FORGED far beyond the end\n"));
        forger.send(batch("victim", epoch + 1, 1, "FORGED attempt that never was\n"));
        forger.send(ExecuteTaskAck.newBuilder().setTaskId("victim").setEpoch(epoch).setAccepted(false)
                .setMessage("FORGED refusal").build());
        await().atMost(WAIT).until(() -> forger.errors("victim").size() == 5);
        assertThat(forger.errors("victim")).allSatisfy(e -> {
            assertThat(e.getCode()).isEqualTo(ErrorCode.ERROR_CODE_NOT_HOLDER);
            assertThat(e.getMessage()).contains("w-forger").contains("does not hold task victim");
        });
        assertThat(forger.errors("victim")).extracting(ErrorReply::getOffendingType).containsExactly(
                MessageType.LOG_BATCH.getCode(), MessageType.LOG_BATCH.getCode(), MessageType.LOG_BATCH.getCode(),
                MessageType.LOG_BATCH.getCode(), MessageType.EXECUTE_TASK_ACK.getCode());
        assertThat(forger.received).noneMatch(m -> m instanceof io.rlscheduler.protocol.LogAck);
        assertThat(forger.isActive()).as("a few refusals do not cost the connection").isTrue();

        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).isEqualTo(1);
        TaskRecord record = result.getRecord();
        await().atMost(WAIT).until(() -> logEnded("victim"));
        List<String> lines = outputLines("victim");
        assertThat(lines).containsExactlyElementsOf(IntStream.rangeClosed(1, 30)
                .mapToObj(i -> "line " + i + " of epoch " + epoch).toList());
        assertThat((long) lines.size()).as("the log and the record agree").isEqualTo(record.getLogLines());
        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.master.health().getKnownAttemptHolders())
                .as("acknowledged by its holder and its log ended: nothing more is expected of it").isZero());
        HolderRefusals refusals = cluster.master.health().getHolderRefusals();
        assertThat(refusals.notHolder()).isEqualTo(5);
        assertThat(refusals.disconnects()).isZero();
    }

    @Test
    void aLogForATaskIdNeverSubmittedIsRefusedAndNoFileIsMade() throws Exception {
        forger.send(batch("never-submitted", 1, 1, "FORGED\n"));
        await().atMost(WAIT).until(() -> !forger.errors("never-submitted").isEmpty());
        assertThat(forger.errors("never-submitted")).singleElement().satisfies(e -> {
            assertThat(e.getCode()).isEqualTo(ErrorCode.ERROR_CODE_UNKNOWN_TASK);
            assertThat(e.getEpoch()).isEqualTo(1);
        });
        assertThat(cluster.logFile("never-submitted")).doesNotExist();
        try (var files = Files.list(dir.resolve("logs"))) {
            assertThat(files.toList()).isEmpty();
        }
        assertThat(cluster.master.health().getHolderRefusals().unknownTask()).isEqualTo(1);
    }

    @Test
    void aPeerThatKeepsSendingFramesForTasksItDoesNotHoldIsDisconnectedAndTheRealWorkerServesOn() throws Exception {
        for (int i = 0; i < 16; i++) {
            forger.send(batch("nothing-" + i, 1, 1, "FORGED\n"));
        }
        await().atMost(WAIT).until(() -> !forger.isActive());
        assertThat(cluster.master.health().getHolderRefusals().disconnects()).isEqualTo(1);
        TaskHandle run = cluster.master.submit(TaskSpec.python("marked.py").taskId("after").param("lines", 3)
                .param("delay", 0.01).gpus(1).build());
        assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        try (var files = Files.list(dir.resolve("logs"))) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("after.log");
        }
    }

    private static LogBatch batch(String taskId, long epoch, long first, String text) {
        return LogBatch.newBuilder().setTaskId(taskId).setEpoch(epoch).addChunks(LogChunk.newBuilder()
                .setFirstSequence(first).setStream(LogStream.LOG_STREAM_STDOUT).setTimestampUnixMs(System.currentTimeMillis())
                .setText(ByteString.copyFromUtf8(text))).build();
    }

    private List<String> outputLines(String taskId) throws Exception {
        Path file = cluster.logFile(taskId);
        if (!Files.exists(file)) {
            return List.of();
        }
        return Files.readAllLines(file).stream().filter(l -> !l.startsWith("TRACE_ID:") && !l.startsWith("##RLS_")).toList();
    }

    private boolean logEnded(String taskId) throws Exception {
        return Files.readAllLines(cluster.logFile(taskId)).stream().anyMatch(l -> l.startsWith("##RLS_END"));
    }
}
