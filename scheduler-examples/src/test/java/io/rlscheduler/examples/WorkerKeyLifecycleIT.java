package io.rlscheduler.examples;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.master.RedisValues;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.master.WorkerKeyInfo;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A worker key's life with real workers and python3 runs, on a master that accepts keys only:
 * issued, used, rotated while a task runs (the run goes on; the old key is refused at the next
 * connection, the new one written to the key file is picked up without a restart), revoked
 * while a task runs (the connection closes within a heartbeat, it cannot reconnect, and its task
 * is re-queued once and ends on another worker). Redis never holds a key's secret part.
 */
class WorkerKeyLifecycleIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final Duration HEARTBEAT = Duration.ofMillis(500);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private TestRedis redis;
    private CoreOptions options;
    private SchedulerMaster master;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) {
        this.redis = redis;
        this.options = CoreOptions.builder().namespace(ns.name()).heartbeatInterval(HEARTBEAT)
                .livenessLease(Duration.ofSeconds(5)).taskLease(Duration.ofSeconds(20)).ackTimeout(Duration.ofSeconds(5)).build();
        master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(Cluster.SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs")).workerKeysRequired(true)
                .reapInterval(Duration.ofMillis(200)).dispatchInterval(Duration.ofMillis(500)).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        master.close();
    }

    private <T extends AutoCloseable> T closing(T resource) {
        closing.add(resource);
        return resource;
    }

    /** Writes a key's material where only the worker's user may read it. */
    private Path keyFile(String name, String material) throws Exception {
        Path file = dir.resolve(name + ".key");
        Files.writeString(file, material + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private SchedulerWorker.Builder worker(String id, String masterAddress, Path keyFile) {
        return SchedulerWorker.builder().masters(masterAddress).redis(redis.getUri()).workerId(id).workerKeyFile(keyFile)
                .coreOptions(options).gpuIds(0).cpuSlots(2).scriptRoots(Cluster.REPO_SCRIPTS, Cluster.TEST_SCRIPTS)
                .runRoot(dir.resolve("runs")).stateDirectory(dir.resolve("state-" + id)).killGrace(Duration.ofSeconds(2))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .nvidiaSmi(dir.resolve("no-nvidia-smi-here").toString());
    }

    private String direct() {
        return "127.0.0.1:" + master.getRpcAddress().getPort();
    }

    private static TaskSpec probe(String id, int seconds) {
        return TaskSpec.python("gpu_probe.py").taskId(id).arg("--hold").arg(Integer.toString(seconds)).gpus(1).build();
    }

    private TaskRecord record(String taskId) {
        return master.getTask(taskId).orElseThrow();
    }

    private long refused(RejectReason reason) {
        return master.health().getRefusedHellos(reason);
    }

    @Test
    void issuedRotatedWhileATaskRunsThenRevokedWhileAnotherRuns(RedisClient client, RedisNamespace ns) throws Exception {
        List<String> materials = new ArrayList<>();
        String first = master.workerKeys().issue("w1");
        materials.add(first);
        Path w1Key = keyFile("w1", first);
        FaultProxy toMaster = closing(FaultProxy.start("127.0.0.1", master.getRpcAddress().getPort()));
        SchedulerWorker w1 = closing(worker("w1", "127.0.0.1:" + toMaster.getPort(), w1Key).build().start());
        await().atMost(WAIT).until(w1::isConnected);

        // Rotated while a task runs: the run goes on over the connection made with the old key.
        TaskHandle rotatedUnder = master.submit(probe("t-rotate", 6));
        await().atMost(WAIT).until(() -> record("t-rotate").getState() == TaskState.RUNNING);
        String second = master.workerKeys().rotate("w1");
        materials.add(second);
        assertThat(master.workerKeys().list()).singleElement().satisfies(k -> {
            assertThat(second).contains(":" + k.getKeyId() + ":");
            assertThat(k.getRotatedAtMillis()).isPositive();
        });
        assertThat(w1.isConnected()).isTrue();
        // At the next connection the old key in the file is refused; the new one, once written, is used.
        toMaster.cut();
        await().atMost(WAIT).until(() -> !w1.isConnected());
        toMaster.pass();
        await().atMost(WAIT).until(() -> refused(RejectReason.REJECT_REASON_BAD_KEY) >= 1);
        // The master counts the refusal before its answer reaches the worker: wait for that too.
        await().atMost(WAIT).untilAsserted(() -> assertThat(w1.getLastRejection()).startsWith("REJECT_REASON_BAD_KEY"));
        assertThat(w1.isConnected()).isFalse();
        keyFile("w1", second);
        await().atMost(WAIT).until(w1::isConnected);
        TaskResult rotated = rotatedUnder.result().get(60, TimeUnit.SECONDS);
        assertThat(rotated.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(rotated.getAttempts()).isEqualTo(1);

        // Revoked while a task runs: the connection closes within a heartbeat, it cannot come back,
        // and the task is re-queued once and ends on another worker.
        TaskHandle revokedUnder = master.submit(probe("t-revoke", 4));
        await().atMost(WAIT).until(() -> record("t-revoke").getState() == TaskState.RUNNING);
        String w2Material = master.workerKeys().issue("w2");
        materials.add(w2Material);
        closing(worker("w2", direct(), keyFile("w2", w2Material)).build().start());
        WorkerKeyInfo revoked = master.workerKeys().revoke("w1");
        assertThat(revoked.isRevoked()).isTrue();
        await().atMost(HEARTBEAT).until(() -> !w1.isConnected());
        await().atMost(WAIT).until(() -> refused(RejectReason.REJECT_REASON_KEY_REVOKED) >= 1);
        assertThat(w1.getLastRejection()).startsWith("REJECT_REASON_KEY_REVOKED");
        await().atMost(WAIT).until(() -> w1.getRunningTaskIds().isEmpty());

        TaskResult moved = revokedUnder.result().get(60, TimeUnit.SECONDS);
        assertThat(moved.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(moved.getAttempts()).isEqualTo(2);
        assertThat(moved.getRecord().getWorkerId()).isEqualTo("w2");
        assertThat(moved.getRecord().getLeaseLosses()).as("a revocation is no lease loss").isZero();
        assertThat(moved.getRecord().getHistory()).extracting(TaskTransition::getTo).containsExactly(TaskState.QUEUED,
                TaskState.ASSIGNED, TaskState.RUNNING, TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING,
                TaskState.SUCCEEDED);
        assertThat(moved.getRecord().getHistory().get(3).getReason()).contains("w1 was revoked");
        assertThat(master.listWorkers()).extracting(io.rlscheduler.core.WorkerInfo::getWorkerId).containsExactly("w2");
        assertThat(w1.isConnected()).isFalse();

        // Nothing in Redis holds a key's secret part.
        List<String> values = RedisValues.of(client, ns);
        for (String material : materials) {
            String secretPart = material.substring(material.lastIndexOf(':') + 1);
            assertThat(values).noneMatch(v -> v.contains(secretPart));
        }
    }

    @Test
    void aWorkerConfiguredWithAnotherWorkersKeyDoesNotStart() throws Exception {
        Path foreign = keyFile("w1", master.workerKeys().issue("w1"));
        SchedulerWorker impostor = worker("w3", direct(), foreign).build();
        assertThatThrownBy(impostor::start).isInstanceOf(SchedulerException.class)
                .hasMessageContaining("holds worker w1's key").matches(e -> !((SchedulerException) e).isRetryable());
        impostor.close();
        assertThat(master.listWorkers()).isEmpty();
    }
}
