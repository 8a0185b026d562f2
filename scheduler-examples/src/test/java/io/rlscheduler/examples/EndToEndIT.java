package io.rlscheduler.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.MetricPoint;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The product end to end: real Redis, a master and workers over loopback, real python3 processes. */
class EndToEndIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Cluster cluster;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) {
        cluster = new Cluster(redis, ns, dir);
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    private TaskResult result(TaskHandle run) throws Exception {
        return run.result().get(60, TimeUnit.SECONDS);
    }

    @Test
    void metricsOfARunAreFollowedAsItPrintsThemAndTheLastIsItsFinalMetrics() throws Exception {
        cluster.worker("w1", 0);
        TaskHandle run = cluster.master.submit(TaskSpec.python("train.py").taskId("curve-1")
                .param("algo", "q-learning").param("episodes", 40L).param("seed", 3L).gpus(1).build());
        List<MetricPoint> points = new CopyOnWriteArrayList<>();
        try (LogFollow follow = run.followMetrics(points::add)) {
            assertThat(result(run).getState()).isEqualTo(TaskState.SUCCEEDED);
            LogRecord end = follow.whenEnded().get(20, TimeUnit.SECONDS);
            assertThat(end.isComplete()).isTrue();
        }
        // One point per episode (40 episodes: one in each), then the final one; the progress lines
        // between them are not metrics.
        assertThat(points).hasSize(41);
        assertThat(points).extracting(p -> p.get("episode")).startsWith(1, 2, 3).contains(40);
        assertThat(points).allSatisfy(p -> {
            assertThat(p.getTaskId()).isEqualTo("curve-1");
            assertThat(p.getAttempt()).isEqualTo(1);
        });
        assertThat(points).extracting(MetricPoint::getSequence).isSorted().doesNotHaveDuplicates();
        MetricPoint last = points.get(points.size() - 1);
        assertThat(last.get("final")).isEqualTo(true);
        assertThat(((Number) last.get("final_reward")).doubleValue())
                .isEqualTo(((Number) run.result().get().getFinalMetrics().get("final_reward")).doubleValue());
        assertThat(List.copyOf(Files.readAllLines(cluster.logFile("curve-1")))).filteredOn(l -> l.startsWith("RLS_METRIC "))
                .hasSize(41);
    }

    @Test
    void trainingRunSucceedsWithLogFollowerMetricsAndRecord() throws Exception {
        cluster.worker("w1", 0);
        TaskHandle run = cluster.master.submit(TaskSpec.python("train.py").taskId("train-1").traceId("trace-abc")
                .param("algo", "q-learning").param("lr", 0.1).param("seed", 7L).gpus(1).owner("alice").build());
        List<LogRecord> seen = new CopyOnWriteArrayList<>();
        try (LogFollow follow = run.followLogs(seen::add)) {
            TaskResult result = result(run);
            assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(result.getExitCode()).isZero();
            assertThat(result.getFinalMetrics()).containsKey("final_reward");
            await().atMost(Duration.ofSeconds(20)).until(() -> !seen.isEmpty() && seen.get(seen.size() - 1).isEndOfStream());
        }
        List<String> file = Files.readAllLines(cluster.logFile("train-1"));
        assertThat(file.get(0)).isEqualTo("TRACE_ID:trace-abc");
        assertThat(file.get(1)).startsWith("##RLS_ATTEMPT attempt=1 epoch=");
        assertThat(file.get(file.size() - 1)).startsWith("##RLS_END state=SUCCEEDED complete=true");
        List<String> output = file.subList(2, file.size() - 1);
        List<String> followed = seen.stream().filter(r -> !r.isEndOfStream()).map(LogRecord::getText).toList();
        assertThat(followed).as("the follower saw every line of the file, in order").isEqualTo(output);
        assertThat(output).anySatisfy(l -> assertThat(l).startsWith("RLS_METRIC"));
        assertThat(seen.stream().filter(LogRecord::isEndOfStream).count()).isEqualTo(1);

        TaskRecord record = run.getRecord();
        JsonNode spec = JSON.readTree(record.getSpecJson());
        assertThat(spec.get("parameters").get("lr").asDouble()).isEqualTo(0.1);
        assertThat(spec.get("parameters").get("seed").asLong()).isEqualTo(7);
        assertThat(JSON.readTree(record.getFinalMetricsJson()).has("final_reward")).isTrue();
        assertThat(record.getRunDir()).endsWith("train-1/attempt-1");
        assertThat(record.getTraceId()).isEqualTo("trace-abc");
    }

    @Test
    void aTaskThatPrintsNothingLeavesNoLogFileAndItsFollowersStillGetItsEnd() throws Exception {
        // A standby sharing the log directory: its watcher sees every end's event too, and must
        // not write an end of its own for an attempt that printed nothing.
        try (SchedulerMaster standby = SchedulerMaster.builder().redis(cluster.redis.getUri()).bindHost("127.0.0.1")
                .rpcPort(0).secret(Cluster.SECRET).coreOptions(cluster.options)
                .logDirectory(cluster.dir.resolve("logs")).build().start()) {
            cluster.worker("w1", 0);
            TaskHandle run = cluster.master.submit(TaskSpec.python("silent.py").taskId("silent-1").gpus(0).build());
            assertThat(result(run).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.getRecord().getLogLines()).as("recorded by the worker").isZero();
            // A task cancelled while queued never ran.
            TaskHandle never = cluster.master.submit(TaskSpec.python("silent.py").taskId("never-ran").gpus(4).build());
            assertThat(never.cancel()).isTrue();
            assertThat(result(never).getState()).isEqualTo(TaskState.CANCELLED);

            LogRecord end = run.followLogs(r -> { }).whenEnded().get(20, TimeUnit.SECONDS);
            assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(end.isComplete()).isTrue();
            assertThat(end.getAttempt()).isEqualTo(1);

            // The standby has no file: the task record tells its followers.
            List<LogRecord> seen = new CopyOnWriteArrayList<>();
            LogRecord later = standby.task("silent-1").followLogs(seen::add).whenEnded().get(20, TimeUnit.SECONDS);
            assertThat(later.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(later.isComplete()).isTrue();
            assertThat(later.getEpoch()).isEqualTo(end.getEpoch());
            assertThat(seen).containsExactly(later);
            LogRecord cancelled = standby.task("never-ran").followLogs(r -> { }).whenEnded().get(20, TimeUnit.SECONDS);
            assertThat(cancelled.getFinalState()).isEqualTo(TaskState.CANCELLED);
            assertThat(cancelled.isComplete()).as("it never ran: nothing is missing").isTrue();

            // Past the line patience (2 task leases): still no file, so neither master wrote an
            // incomplete end contradicting the record.
            await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10))
                    .until(() -> !Files.exists(cluster.logFile("silent-1")) && !Files.exists(cluster.logFile("never-ran")));
        }
    }

    @Test
    void oneGpuWorkerRunsTwoOneGpuTasksOneAfterTheOther() throws Exception {
        cluster.worker("w1", 5);
        TaskHandle a = cluster.master.submit(probe("probe-a"));
        TaskHandle b = cluster.master.submit(probe("probe-b"));
        assertThat(result(a).getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result(b).getState()).isEqualTo(TaskState.SUCCEEDED);
        JsonNode pa = probeOf("probe-a");
        JsonNode pb = probeOf("probe-b");
        assertThat(pa.get("cuda").asText()).isEqualTo("5");
        assertThat(pb.get("cuda").asText()).isEqualTo("5");
        boolean overlap = pa.get("start").asDouble() < pb.get("end").asDouble()
                && pb.get("start").asDouble() < pa.get("end").asDouble();
        assertThat(overlap).as("two tasks on the only GPU never overlap").isFalse();
    }

    @Test
    void twoGpuWorkerRunsTwoTasksSideBySideOnDifferentGpus() throws Exception {
        cluster.worker("w1", 0, 1);
        TaskHandle a = cluster.master.submit(probeHolding("probe-a", 3));
        TaskHandle b = cluster.master.submit(probeHolding("probe-b", 3));
        assertThat(result(a).getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result(b).getState()).isEqualTo(TaskState.SUCCEEDED);
        JsonNode pa = probeOf("probe-a");
        JsonNode pb = probeOf("probe-b");
        assertThat(List.of(pa.get("cuda").asText(), pb.get("cuda").asText())).containsExactlyInAnyOrder("0", "1");
        boolean overlap = pa.get("start").asDouble() < pb.get("end").asDouble()
                && pb.get("start").asDouble() < pa.get("end").asDouble();
        assertThat(overlap).as("with two GPUs they run at the same time").isTrue();
    }

    @Test
    void taskWaitsQueuedUntilAWorkerJoins() throws Exception {
        TaskHandle run = cluster.master.submit(probe("waiting"));
        await().pollDelay(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5))
                .until(() -> run.getState() == TaskState.QUEUED);
        assertThat(run.getState()).isEqualTo(TaskState.QUEUED);
        cluster.worker("late", 0);
        assertThat(result(run).getState()).isEqualTo(TaskState.SUCCEEDED);
    }

    @Test
    void cancelKillsScriptAndGrandchildAndFreesTheGpu() throws Exception {
        cluster.worker("w1", 0);
        TaskHandle run = cluster.master.submit(TaskSpec.python("spawner.py").taskId("spawn-1").gpus(1).build());
        Path pidFile = dir.resolve("runs/spawn-1/attempt-1/pids");
        await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(pidFile) && Files.readString(pidFile).endsWith("\n"));
        String[] pids = Files.readString(pidFile).trim().split(" ");
        assertThat(alive(pids[0])).isTrue();
        assertThat(alive(pids[1])).isTrue();
        assertThat(run.cancel()).isTrue();
        assertThat(result(run).getState()).isEqualTo(TaskState.CANCELLED);
        await().atMost(Duration.ofSeconds(10)).until(() -> !alive(pids[0]) && !alive(pids[1]));
        WorkerInfo w = cluster.master.listWorkers().get(0);
        assertThat(w.getFreeGpuIds()).containsExactly(0);
    }

    @Test
    void timeoutEndsTimedOutWithTheTreeKilled() throws Exception {
        cluster.worker("w1", 0);
        TaskHandle run = cluster.master.submit(TaskSpec.python("spawner.py").taskId("slow-1")
                .timeout(Duration.ofSeconds(2)).build());
        TaskResult result = result(run);
        assertThat(result.getState()).isEqualTo(TaskState.TIMED_OUT);
        String[] pids = Files.readString(dir.resolve("runs/slow-1/attempt-1/pids")).trim().split(" ");
        await().atMost(Duration.ofSeconds(10)).until(() -> !alive(pids[0]) && !alive(pids[1]));
    }

    @Test
    void workerWithWrongSecretIsRejectedWhileGoodWorkerKeepsWorking() throws Exception {
        cluster.worker("good", 0);
        SchedulerWorker intruder = cluster.workerBuilder("intruder", 1).secret("not-the-shared-secret-at-all").build().start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> intruder.getLastRejection().contains("AUTHENTICATION_FAILED"));
            assertThat(intruder.isConnected()).isFalse();
            TaskHandle run = cluster.master.submit(probe("after-intruder"));
            assertThat(result(run).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.getRecord().getWorkerId()).isEqualTo("good");
            assertThat(cluster.master.health().getConnectedWorkers()).isEqualTo(1);
        } finally {
            intruder.close();
        }
    }

    @Test
    void pathTraversalInTaskIdOrScriptIsRejectedAtSubmitAndNothingIsWritten() {
        assertThatThrownBy(() -> TaskSpec.python("train.py").taskId("../evil"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("task id");
        assertThatThrownBy(() -> TaskSpec.python("../outside.py"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("script");
        assertThatThrownBy(() -> TaskSpec.python("/etc/passwd"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("script");
        assertThatThrownBy(() -> TaskSpec.python("rl/../../x.py"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("script");
        assertThat(cluster.master.queueDepth()).isZero();
        assertThat(dir.resolve("logs").toFile().list()).isNullOrEmpty();
    }

    @Test
    void restartedWorkerGetsItsTaskRequeuedAndTheRerunResumesFromTheCheckpoint() throws Exception {
        SchedulerWorker first = cluster.workerBuilder("phoenix", 0).build().start();
        TaskHandle run = cluster.master.submit(TaskSpec.python("train.py").taskId("resume-1")
                .param("episodes", 200L).param("checkpoint-every", 20L).param("episode-delay", 0.02)
                .param("seed", 3L).gpus(1).build());
        Path checkpoint = dir.resolve("runs/resume-1/checkpoints/checkpoint.json");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(checkpoint));
        first.shutdownNow();
        assertThat(first.awaitTermination(Duration.ofSeconds(20))).isTrue();

        SchedulerWorker second = cluster.worker("phoenix", 0);
        TaskResult result = result(run);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).isEqualTo(2);
        assertThat(result.getRecord().getLeaseLosses()).isEqualTo(1);
        assertThat(((Number) result.getFinalMetrics().get("resumed_from_episode")).intValue()).isGreaterThan(0);
        assertThat(second.getSessionId()).isNotEqualTo(first.getSessionId());
        List<String> log = Files.readAllLines(cluster.logFile("resume-1"));
        assertThat(log).anySatisfy(l -> assertThat(l).startsWith("RESUMED from episode"));
    }

    @Test
    void gpusAreDetectedWithNvidiaSmiWhenNoneAreConfigured() throws Exception {
        Path fake = dir.resolve("bin/nvidia-smi");
        Files.createDirectories(fake.getParent());
        Files.writeString(fake, "#!/bin/sh\n"
                + "echo '0, GPU-0a1b, NVIDIA A100-SXM4-80GB, 81920, 1024, 37'\n"
                + "echo '1, GPU-2c3d, NVIDIA A100-SXM4-80GB, 81920, 0, 0'\n");
        fake.toFile().setExecutable(true);
        SchedulerWorker worker = SchedulerWorker.builder()
                .masters("127.0.0.1:" + cluster.master.getRpcAddress().getPort())
                .redis(cluster.redis.getUri()).workerId("detected").secret(Cluster.SECRET).coreOptions(cluster.options)
                .scriptRoots(Cluster.TEST_SCRIPTS).runRoot(dir.resolve("runs")).stateDirectory(dir.resolve("state"))
                .nvidiaSmi(fake.toString()).build().start();
        try {
            WorkerInfo info = cluster.master.listWorkers().stream().filter(w -> w.getWorkerId().equals("detected"))
                    .findFirst().orElseThrow();
            assertThat(info.getGpuIds()).containsExactly(0, 1);
            // What nvidia-smi said of each GPU reaches the master with the heartbeats.
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.health().getWorkerUsage().stream()
                    .anyMatch(u -> u.getWorkerId().equals("detected") && u.getGpus().size() == 2));
            io.rlscheduler.master.WorkerUsage usage = cluster.master.health().getWorkerUsage().stream()
                    .filter(u -> u.getWorkerId().equals("detected")).findFirst().orElseThrow();
            assertThat(usage.getSessionId()).isEqualTo(worker.getSessionId());
            assertThat(usage.getGpus().get(0).getUuid()).isEqualTo("GPU-0a1b");
            assertThat(usage.getGpus().get(0).getName()).isEqualTo("NVIDIA A100-SXM4-80GB");
            assertThat(usage.getGpus().get(0).getMemoryTotalBytes()).isEqualTo(81920L << 20);
            assertThat(usage.getGpus().get(0).getMemoryUsedBytes()).isEqualTo(1024L << 20);
            assertThat(usage.getGpus().get(0).getUtilizationPercent()).isEqualTo(37);
            assertThat(usage.getGpus().get(1).getIndex()).isEqualTo(1);
            assertThat(usage.getCpuCount()).isPositive();
            assertThat(usage.getMemoryTotalBytes()).isPositive();
            assertThat(usage.getSentAtMillis()).as("the worker's clock, here the master's").isPositive()
                    .isLessThanOrEqualTo(usage.getReceivedAtMillis() + 60_000);
            TaskHandle run = cluster.master.submit(probeHolding("on-detected", 3));
            // While it runs, the heartbeats name the attempt and the lines it has printed.
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.health().getWorkerUsage().stream()
                    .filter(u -> u.getWorkerId().equals("detected")).flatMap(u -> u.getRunning().stream())
                    .anyMatch(r -> r.getTaskId().equals("on-detected") && r.getAttempt() == 1 && r.getEpoch() > 0));
            assertThat(result(run).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(probeOf("on-detected").get("cuda").asText()).isIn("0", "1");
        } finally {
            worker.close();
        }
    }

    @Test
    void taskListenersSeeEveryTransitionInOrder() throws Exception {
        List<io.rlscheduler.core.TaskEvent> events = new CopyOnWriteArrayList<>();
        cluster.master.addTaskListener(events::add);
        cluster.worker("w1", 0);
        TaskHandle run = cluster.master.submit(probe("listened"));
        assertThat(result(run).getState()).isEqualTo(TaskState.SUCCEEDED);
        await().atMost(Duration.ofSeconds(10)).until(() -> events.stream()
                .anyMatch(e -> "listened".equals(e.getTaskId()) && e.getTo() == TaskState.SUCCEEDED));
        assertThat(events.stream().filter(e -> "listened".equals(e.getTaskId())).map(e -> e.getTo()).toList())
                .containsExactly(TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING, TaskState.SUCCEEDED);
    }

    private static TaskSpec probe(String id) {
        return probeHolding(id, 1);
    }

    private static TaskSpec probeHolding(String id, double seconds) {
        return TaskSpec.python("gpu_probe.py").taskId(id).param("hold", seconds).gpus(1).build();
    }

    private JsonNode probeOf(String taskId) throws Exception {
        return JSON.readTree(dir.resolve("runs").resolve(taskId).resolve("attempt-1/probe.json").toFile());
    }

    private static boolean alive(String pid) {
        return ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false)
                && !isZombie(pid);
    }

    private static boolean isZombie(String pid) {
        try {
            String stat = Files.readString(Path.of("/proc", pid, "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
