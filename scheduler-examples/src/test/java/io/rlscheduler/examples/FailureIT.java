package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.JvmProcess;
import io.rlscheduler.testkit.ProcessTree;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.PythonTaskExecutor;
import io.rlscheduler.worker.SchedulerWorker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failure drills with real faults: worker JVMs killed with SIGKILL or frozen with SIGSTOP,
 * connections cut by a proxy, a master killed with a standby running, Redis killed and
 * restarted. Each asserts that nothing is lost and nothing runs twice at once.
 *
 * <p>Leases are short (heartbeat 200 ms, liveness 1 s, task lease 3 s, kill grace 1 s), so a
 * worker self-fences a task it cannot renew after 1.6 s and the reaper takes it back after 3 s.
 */
class FailureIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final String SECRET = Cluster.SECRET;
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private TestRedis redis;
    private CoreOptions options;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns) {
        this.redis = redis;
        this.options = CoreOptions.builder().namespace(ns.name())
                .heartbeatInterval(Duration.ofMillis(200)).livenessLease(Duration.ofSeconds(1))
                .taskLease(Duration.ofSeconds(3)).ackTimeout(Duration.ofSeconds(2)).maxLeaseLosses(1).build();
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

    @Test
    void killedWorkerJvmTakesItsProcessesAlongAndTheTaskResumesElsewhereExactlyOnce() throws Exception {
        SchedulerMaster master = master("m1");
        JvmProcess a = workerJvm("wa", master, redis.getUri());
        TaskHandle run = master.submit(marked("crash-1", 60, 0.1));
        await().atMost(WAIT).until(() -> printedLines("crash-1", 1) >= 10);
        List<Long> taskProcesses = a.descendants();
        assertThat(taskProcesses).as("launcher and script run under the worker JVM").isNotEmpty();

        List<WorkerState> seen = new CopyOnWriteArrayList<>();
        a.kill();
        await().atMost(Duration.ofSeconds(10)).until(() -> taskProcesses.stream().noneMatch(ProcessTree::isAlive));
        await().atMost(WAIT).until(() -> {
            WorkerState s = workerState(master, "wa");
            if (seen.isEmpty() || seen.get(seen.size() - 1) != s) {
                seen.add(s);
            }
            return s == WorkerState.DOWN;
        });
        assertThat(seen).contains(WorkerState.DOWN).doesNotContain(WorkerState.IDLE);

        closing(worker("wb", master, redis.getUri()));
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wb");
        assertThat(result.getAttempts()).isEqualTo(2);
        assertThat(result.getRecord().getLeaseLosses()).isEqualTo(1);
        assertThat(logLines("crash-1")).anySatisfy(l -> assertThat(l).startsWith("RESUMED from line"));
        assertNoOverlap("crash-1", 2);
    }

    @Test
    void restartedWorkerKillsWhatItsPreviousRunLeftBehind() throws Exception {
        SchedulerMaster master = master("m1");
        JvmProcess a = workerJvm("wa", master, redis.getUri());
        master.submit(marked("orphan-1", 600, 0.1));
        await().atMost(WAIT).until(() -> printedLines("orphan-1", 1) >= 3);
        long launcher = a.descendants().stream().filter(pid -> cmdline(pid).contains("launcher.py")).findFirst().orElseThrow();
        List<Long> script = ProcessTree.descendants(launcher);
        assertThat(script).as("the script under the launcher").isNotEmpty();
        // The whole supervision chain dies at once (an OOM kill, a crashed container runtime):
        // nothing is left to kill the script, which runs on as an orphan.
        new ProcessBuilder("kill", "-KILL", Long.toString(launcher)).start().waitFor();
        a.kill();
        assertThat(script.stream().allMatch(ProcessTree::isAlive)).as("the script survived as an orphan").isTrue();

        int printedBefore = printedLines("orphan-1", 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> printedLines("orphan-1", 1) > printedBefore + 3);
        assertThat(script.stream().allMatch(ProcessTree::isAlive)).as("the orphan is still working").isTrue();

        JvmProcess restarted = workerJvmRestart("wa", master);
        restarted.awaitOutput("killed 1 process groups left by a previous run of worker wa", Duration.ofSeconds(20));
        await().atMost(Duration.ofSeconds(20)).until(() -> script.stream().noneMatch(ProcessTree::isAlive));
    }

    @Test
    void workerCutOffFromTheMasterKeepsRunningAndDeliversEveryLineOnce() throws Exception {
        SchedulerMaster master = master("m1");
        FaultProxy toMaster = closing(FaultProxy.start("127.0.0.1", master.getRpcAddress().getPort()));
        closing(workerVia("w1", "127.0.0.1:" + toMaster.getPort(), redis.getUri()));
        TaskHandle run = master.submit(marked("cut-1", 80, 0.05));
        await().atMost(WAIT).until(() -> printedLines("cut-1", 1) >= 10);
        toMaster.cut();
        int atCut = printedLines("cut-1", 1);
        await().atMost(WAIT).until(() -> printedLines("cut-1", 1) >= atCut + 20);
        toMaster.pass();
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).isEqualTo(1);
        assertThat(result.getRecord().getLeaseLosses()).isZero();
        List<String> printed = Files.readAllLines(dir.resolve("runs/cut-1/attempt-1/printed.txt"));
        await().atMost(Duration.ofSeconds(20)).until(() -> outputLines("cut-1").size() >= printed.size());
        assertThat(outputLines("cut-1")).as("every line in the master's file, once, in order").isEqualTo(printed);
    }

    @Test
    void workerCutOffFromRedisStopsItsTaskBeforeTheLeaseExpires() throws Exception {
        SchedulerMaster master = master("m1");
        FaultProxy toRedis = closing(FaultProxy.start("127.0.0.1", redis.getPort()));
        RedisURI viaProxy = RedisURI.create("redis://127.0.0.1:" + toRedis.getPort());
        closing(worker("wa", master, viaProxy));
        TaskHandle run = master.submit(marked("fence-1", 100, 0.05));
        await().atMost(WAIT).until(() -> printedLines("fence-1", 1) >= 5);
        closing(worker("wb", master, redis.getUri()));
        toRedis.cut();
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        toRedis.pass();
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wb");
        assertThat(result.getAttempts()).isEqualTo(2);
        assertNoOverlap("fence-1", 2);
    }

    @Test
    void anIdleWorkersLivenessIsRenewedByItselfWhileItCannotReachTheMasterAndByTheMasterWhileItCannotReachRedis()
            throws Exception {
        SchedulerMaster master = master("m1");
        FaultProxy toRedis = closing(FaultProxy.start("127.0.0.1", redis.getPort()));
        FaultProxy toMaster = closing(FaultProxy.start("127.0.0.1", master.getRpcAddress().getPort()));
        SchedulerWorker w1 = closing(workerVia("w1", "127.0.0.1:" + toMaster.getPort(),
                RedisURI.create("redis://127.0.0.1:" + toRedis.getPort())));
        await().atMost(WAIT).until(() -> w1.isConnected() && workerState(master, "w1") == WorkerState.IDLE);

        // Its heartbeats to the master go unanswered (the connection open, nothing comes back): the
        // master renewed its liveness lease for it, and the idle worker renews it itself again, in
        // time: it stays IDLE for four leases.
        toMaster.blackhole();
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(50))
                .until(() -> workerState(master, "w1") == WorkerState.IDLE);
        toMaster.pass();
        await().atMost(WAIT).until(w1::isConnected);

        // Cut off from Redis, it cannot renew the lease itself; the master, which receives its
        // heartbeats, renews it: it stays IDLE.
        toRedis.cut();
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(50))
                .until(() -> workerState(master, "w1") == WorkerState.IDLE);

        // Cut off from both, it is seen DOWN once its lease runs out: the renewals above were real.
        toMaster.cut();
        await().atMost(Duration.ofSeconds(10)).until(() -> workerState(master, "w1") == WorkerState.DOWN);
        toRedis.pass();
        toMaster.pass();
        await().atMost(WAIT).until(() -> workerState(master, "w1") == WorkerState.IDLE);
    }

    @Test
    void anEndThatCannotBeRecordedInRedisAtOnceIsRetriedUntilItIsRecorded() throws Exception {
        SchedulerMaster master = master("m1");
        FaultProxy toRedis = closing(FaultProxy.start("127.0.0.1", redis.getPort()));
        SchedulerWorker worker = closing(worker("wa", master, RedisURI.create("redis://127.0.0.1:" + toRedis.getPort())));
        TaskHandle run = master.submit(marked("retry-1", 12, 0.05));
        await().atMost(WAIT).until(() -> printedLines("retry-1", 1) >= 6);
        toRedis.cut();
        Path marks = dir.resolve("runs/retry-1/checkpoints/marks.log");
        await().atMost(WAIT).until(() -> Files.readString(marks).contains("stop "));
        await().atMost(WAIT).until(() -> ProcessTree.descendants(ProcessHandle.current().pid()).stream()
                .noneMatch(pid -> cmdline(pid).contains("marked.py")));
        // The script has ended, but its end cannot reach Redis: the worker keeps the attempt (and
        // its lease) and retries until Redis has it.
        await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(2)).until(() ->
                master.getTask("retry-1").orElseThrow().getState() == TaskState.RUNNING
                        && worker.getRunningTaskIds().contains("retry-1"));
        toRedis.pass();
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wa");
        assertThat(result.getAttempts()).isEqualTo(1);
        assertThat(result.getRecord().getLeaseLosses()).isZero();
        String end = await().atMost(Duration.ofSeconds(20)).until(() -> logLines("retry-1").stream()
                .filter(l -> l.startsWith("##RLS_END ")).findFirst().orElse(""), l -> !l.isEmpty());
        // The script's 12 lines, and what the worker said of the checkpoint it could not commit
        // while Redis was away (the end waits for it, checkpointEndWait): the log ends complete with all.
        List<String> out = outputLines("retry-1");
        assertThat(end).isEqualTo("##RLS_END state=SUCCEEDED complete=true last=" + out.size());
        assertThat(out.stream().filter(l -> !l.startsWith("rl-scheduler: checkpoint "))).hasSize(12);
    }

    @Test
    void taskStoppedByTheLauncherForLackOfKeepalivesIsALeaseLossNotAFailure() throws Exception {
        // A task the launcher stops because keepalives stopped (SIGTERM, exit 143) is a lease
        // loss even when a lease renewal succeeded just before the worker handled the exit: the
        // worker must not take the exit for the script's own failure and record FAILED ("killed
        // by signal 15"). Here the launcher's timeout (600 ms) is shorter than the worker's own
        // fencing limit (1.6 s), so a short Redis partition makes the launcher stop the task
        // while the worker still counts its lease as fresh.
        SchedulerMaster master = master("m1");
        FaultProxy toRedis = closing(FaultProxy.start("127.0.0.1", redis.getPort()));
        PythonTaskExecutor executor = PythonTaskExecutor.builder().scriptRoots(List.of(Cluster.TEST_SCRIPTS))
                .stateDirectory(dir.resolve("state-wa")).gracePeriod(Duration.ofSeconds(1))
                .keepaliveTimeout(Duration.ofMillis(600)).build();
        closing(SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort())
                .redis(RedisURI.create("redis://127.0.0.1:" + toRedis.getPort())).workerId("wa").secret(SECRET)
                .coreOptions(options).gpuIds(0).cpuSlots(2).scriptRoots(Cluster.TEST_SCRIPTS)
                .runRoot(dir.resolve("runs")).stateDirectory(dir.resolve("state-wa")).executor(executor)
                .killGrace(Duration.ofSeconds(1)).reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .nvidiaSmi(dir.resolve("no-nvidia-smi").toString()).build().start());
        TaskHandle run = master.submit(marked("keepalive-1", 80, 0.05));
        await().atMost(WAIT).until(() -> printedLines("keepalive-1", 1) >= 10);
        toRedis.blackhole();
        Path marks = dir.resolve("runs/keepalive-1/checkpoints/marks.log");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.readString(marks).contains("stop "));
        toRedis.pass();
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).as(result.getError()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).isEqualTo(2);
        assertThat(result.getRecord().getLeaseLosses()).isEqualTo(1);
        assertNoOverlap("keepalive-1", 2);
    }

    @Test
    void attemptWhoseExecutorFailsEndsFailedInsteadOfHoldingItsLeaseForever() throws Exception {
        // An attempt whose executor's completion future fails exceptionally must end: left
        // unended, every heartbeat would renew its lease and the task would never end.
        SchedulerMaster master = master("m1");
        io.rlscheduler.worker.TaskExecutor broken = (context, output) -> new io.rlscheduler.worker.TaskExecution() {
            @Override
            public java.util.concurrent.CompletableFuture<io.rlscheduler.worker.ExecutionResult> completion() {
                return java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException("executor bug"));
            }

            @Override
            public void stop(io.rlscheduler.worker.StopReason reason, Duration grace) {
                // Nothing runs.
            }
        };
        closing(SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort())
                .redis(redis.getUri()).workerId("wb").secret(SECRET).coreOptions(options).gpuIds(0).cpuSlots(2)
                .scriptRoots(Cluster.TEST_SCRIPTS).runRoot(dir.resolve("runs")).stateDirectory(dir.resolve("state-wb"))
                .executor(broken).nvidiaSmi(dir.resolve("no-nvidia-smi").toString()).build().start());
        TaskHandle run = master.submit(TaskSpec.python("noop.py").taskId("broken-1").maxAttempts(1).build());
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.FAILED);
        assertThat(result.getError()).contains("executor bug");
        assertThat(result.getAttempts()).isEqualTo(1);
    }

    @Test
    void attemptWhoseExecutorThrowsAnErrorOnStartEndsFailedInsteadOfHoldingItsLeaseForever() throws Exception {
        // Any Throwable from the executor's launch ends the attempt, an Error too (here what an
        // in-JVM executor missing a class throws): left tracked, its lease would be renewed by
        // every heartbeat and the task would stay RUNNING.
        SchedulerMaster master = master("m1");
        io.rlscheduler.worker.TaskExecutor broken = (context, output) -> {
            throw new NoClassDefFoundError("org/example/TrainingLoop");
        };
        closing(SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort())
                .redis(redis.getUri()).workerId("wc").secret(SECRET).coreOptions(options).gpuIds(0).cpuSlots(2)
                .scriptRoots(Cluster.TEST_SCRIPTS).runRoot(dir.resolve("runs")).stateDirectory(dir.resolve("state-wc"))
                .executor(broken).nvidiaSmi(dir.resolve("no-nvidia-smi").toString()).build().start());
        TaskHandle run = master.submit(TaskSpec.python("noop.py").taskId("error-1").maxAttempts(1).build());
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.FAILED);
        assertThat(result.getError()).contains("org/example/TrainingLoop");
        assertThat(result.getAttempts()).isEqualTo(1);
    }

    @Test
    void frozenWorkerReturningIsFencedAndNeverOverwritesTheNewAttempt() throws Exception {
        SchedulerMaster master = master("m1");
        JvmProcess a = workerJvm("wa", master, redis.getUri());
        TaskHandle run = master.submit(marked("frozen-1", 60, 0.1));
        await().atMost(WAIT).until(() -> printedLines("frozen-1", 1) >= 5);
        closing(worker("wb", master, redis.getUri()));
        a.freeze();
        await().atMost(WAIT).until(() -> printedLines("frozen-1", 2) >= 5);
        a.thaw();
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getWorkerId()).isEqualTo("wb");
        assertThat(result.getAttempts()).isEqualTo(2);
        a.awaitOutput("frozen-1 attempt 1 ended: FENCED", Duration.ofSeconds(30));
        assertThat(run.getRecord().getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(run.getRecord().getWorkerId()).isEqualTo("wb");
        assertThat(run.getRecord().getEpoch()).isEqualTo(result.getRecord().getEpoch());
        assertNoOverlap("frozen-1", 2);
    }

    @Test
    void killedMasterIsReplacedByTheStandbyAndNothingIsLostOrRunTwice() throws Exception {
        LeaderProcess leader = leaderInItsOwnJvm();
        JvmProcess m1 = leader.process();
        String m1Port = leader.port();
        SchedulerMaster m2 = standby(dir.resolve("logs"));
        assertThat(m2.isLeader()).isFalse();
        closing(workerVia("w1", "127.0.0.1:" + m1Port + ",127.0.0.1:" + m2.getRpcAddress().getPort(), redis.getUri()));

        TaskHandle run = m2.submit(marked("failover-1", 80, 0.05));
        await().atMost(WAIT).until(() -> printedLines("failover-1", 1) >= 10);
        m1.kill();
        await().atMost(WAIT).until(m2::isLeader);
        TaskHandle queuedLater = m2.submit(marked("failover-2", 5, 0.01));

        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).as("the running task went on, never restarted").isEqualTo(1);
        assertThat(queuedLater.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        List<String> printed = Files.readAllLines(dir.resolve("runs/failover-1/attempt-1/printed.txt"));
        await().atMost(Duration.ofSeconds(20)).until(() -> outputLines("failover-1").size() >= printed.size());
        assertThat(outputLines("failover-1")).as("one complete file across both masters").isEqualTo(printed);
        assertNoOverlap("failover-1", 1);
    }

    @Test
    void aLeaderKilledMidSweepLeavesTheOrderFairAndTheOwnersCountsExact() throws Exception {
        LeaderProcess leader = leaderInItsOwnJvm();
        SchedulerMaster m2 = standby(dir.resolve("logs-m2"));
        closing(workerVia("w1", "127.0.0.1:" + leader.port() + ",127.0.0.1:" + m2.getRpcAddress().getPort(), redis.getUri()));
        List<TaskHandle> sweep = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            sweep.add(m2.submit(TaskSpec.python("nap.py").taskId("alice-" + i).owner("alice").gpus(1).build()));
        }
        assertThat(sweep.get(1).result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        leader.process().kill();
        await().atMost(WAIT).until(m2::isLeader);
        // The fair order lives in Redis: the new leader serves bob's one run at the next free slot.
        long submitted = System.currentTimeMillis();
        TaskHandle bob = m2.submit(TaskSpec.python("nap.py").taskId("bob-0").owner("bob").gpus(1).build());
        TaskResult bobs = bob.result().get(60, TimeUnit.SECONDS);
        assertThat(bobs.getState()).isEqualTo(TaskState.SUCCEEDED);
        long bobAssigned = bobs.getRecord().getHistory().stream().filter(t -> t.getTo() == TaskState.ASSIGNED)
                .mapToLong(io.rlscheduler.core.TaskTransition::getAtMillis).min().orElseThrow();
        long aliceBetween = sweep.stream().map(TaskHandle::getRecord).filter(r -> r.getHistory().stream()
                .anyMatch(t -> t.getTo() == TaskState.ASSIGNED && t.getAtMillis() > submitted && t.getAtMillis() < bobAssigned))
                .count();
        assertThat(aliceBetween).as("alice's runs assigned between bob's submission and his start").isLessThanOrEqualTo(1);
        for (TaskHandle run : sweep) {
            run.cancel();
        }
        await().atMost(WAIT).until(() -> sweep.stream().allMatch(r -> r.getRecord().getState().isTerminal()));
        // Held GPUs and running counts came back to zero through the failover; nothing for the repair pass to do.
        assertThat(m2.sharing().shares()).allSatisfy(s -> {
            assertThat(s.getHeldGpus()).isZero();
            assertThat(s.getRunning()).isZero();
            assertThat(s.getQueued()).isZero();
        });
        assertThat(m2.sharing().repair()).isEmpty();
    }

    @Test
    void standbyWithALogDirectoryOfItsOwnGoesOnWithTheLogAfterTheLinesItNeverGot() throws Exception {
        // A new leader without the lines the old one acknowledged (each master with its own log
        // directory) meets a gap the worker can never fill: its log goes on after them, or the
        // attempt's log would stall and, once maxBufferedLines waited, the task would block on
        // its output for good.
        LeaderProcess leader = leaderInItsOwnJvm();
        JvmProcess m1 = leader.process();
        String m1Port = leader.port();
        Path ownLogs = dir.resolve("logs-m2");
        SchedulerMaster m2 = standby(ownLogs);
        closing(workerVia("w1", "127.0.0.1:" + m1Port + ",127.0.0.1:" + m2.getRpcAddress().getPort(), redis.getUri()));

        TaskHandle run = m2.submit(marked("own-dir-1", 80, 0.05));
        await().atMost(WAIT).until(() -> Files.exists(dir.resolve("logs/own-dir-1.log")) && outputLines("own-dir-1").size() >= 10);
        m1.kill();
        await().atMost(WAIT).until(m2::isLeader);

        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).isEqualTo(1);
        List<String> printed = Files.readAllLines(dir.resolve("runs/own-dir-1/attempt-1/printed.txt"));
        Path file = ownLogs.resolve("own-dir-1.log");
        await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(file)
                && Files.readAllLines(file).stream().anyMatch(l -> l.startsWith("##RLS_END state=SUCCEEDED")));
        List<String> lines = Files.readAllLines(file);
        String marker = lines.stream().filter(l -> l.startsWith("##RLS_ATTEMPT ")).findFirst().orElseThrow();
        assertThat(marker).as("the lines the first master acknowledged are named as missing here").contains(" after=");
        int after = Integer.parseInt(marker.replaceAll(".* after=(\\d+).*", "$1"));
        assertThat(after).isBetween(10, printed.size() - 1);
        List<String> mine = lines.stream().filter(l -> !l.startsWith("TRACE_ID:") && !l.startsWith("##RLS_")).toList();
        assertThat(mine).as("every line after them, once, in order").isEqualTo(printed.subList(after, printed.size()));
        assertThat(outputLines("own-dir-1").subList(0, after)).as("the first master has the ones before")
                .isEqualTo(printed.subList(0, after));
        List<LogRecord> followed = new java.util.concurrent.CopyOnWriteArrayList<>();
        run.followLogs(followed::add).whenEnded().get(20, TimeUnit.SECONDS);
        assertThat(followed).filteredOn(r -> !r.isEndOfStream()).extracting(LogRecord::getSequence)
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(after + 1, printed.size()).boxed().toList());
    }

    @Test
    void redisRestartLeavesRunningTasksRunningAndQueuedTasksDispatchAfterwards() throws Exception {
        redis.assumeControllable();
        SchedulerMaster master = master("m1");
        closing(worker("w1", master, redis.getUri()));
        TaskHandle run = master.submit(marked("restart-1", 60, 0.05));
        await().atMost(WAIT).until(() -> printedLines("restart-1", 1) >= 10);
        redis.kill();
        redis.restart();
        TaskHandle after = master.submit(marked("restart-2", 5, 0.01));
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).as("not re-queued by the restart").isEqualTo(1);
        assertThat(result.getRecord().getLeaseLosses()).isZero();
        assertThat(after.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
    }

    @Test
    void poisonTaskEndsFailedAfterTheLeaseLossLimitInsteadOfCyclingForever() throws Exception {
        SchedulerMaster master = master("m1");
        JvmProcess a = workerJvm("wa", master, redis.getUri());
        TaskHandle run = master.submit(TaskSpec.python("poison.py").taskId("poison-1").gpus(1).build());
        await().atMost(WAIT).until(() -> !a.isAlive());
        JvmProcess b = workerJvm("wb", master, redis.getUri());
        await().atMost(WAIT).until(() -> !b.isAlive());
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.FAILED);
        assertThat(result.getRecord().getLeaseLosses()).isEqualTo(2);
        assertThat(result.getError()).contains("lease lost 2 times (limit 1)");
        assertThat(master.queueDepth()).isZero();
    }

    // ------------------------------------------------------------------------------------------

    private SchedulerMaster master(String id) {
        return closing(SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs")).masterId(id)
                .reapInterval(Duration.ofMillis(200)).dispatchInterval(Duration.ofMillis(500)).build().start());
    }

    private SchedulerWorker worker(String id, SchedulerMaster master, RedisURI redisUri) {
        return workerVia(id, "127.0.0.1:" + master.getRpcAddress().getPort(), redisUri);
    }

    private SchedulerWorker workerVia(String id, String masters, RedisURI redisUri) {
        return SchedulerWorker.builder().masters(masters.split(",")).redis(redisUri).workerId(id).secret(SECRET)
                .coreOptions(options).gpuIds(0).cpuSlots(2).scriptRoots(Cluster.TEST_SCRIPTS)
                .runRoot(dir.resolve("runs")).stateDirectory(dir.resolve("state-" + id))
                .killGrace(Duration.ofSeconds(1)).reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .nvidiaSmi(dir.resolve("no-nvidia-smi").toString()).build().start();
    }

    private JvmProcess workerJvm(String id, SchedulerMaster master, RedisURI redisUri) {
        JvmProcess p = closing(JvmProcess.builder(WorkerMain.class).args(
                        "--masters", "127.0.0.1:" + master.getRpcAddress().getPort(), "--redis", redisUri.toURI().toString(),
                        "--worker-id", id, "--secret", SECRET, "--gpus", "0", "--cpu-slots", "2",
                        "--scripts", Cluster.TEST_SCRIPTS.toString(), "--runs", dir.resolve("runs").toString(),
                        "--namespace", options.getNamespace(), "--heartbeat-ms", "200", "--liveness-ms", "1000",
                        "--task-lease-ms", "3000", "--ack-timeout-ms", "2000", "--kill-grace-ms", "1000")
                .logFile(dir.resolve(id + "-" + closeables.size() + ".log")).start());
        p.awaitOutput("started, session", WAIT);
        return p;
    }

    /** Starts a worker JVM again with the same id and state directory as {@link #workerJvm}. */
    private JvmProcess workerJvmRestart(String id, SchedulerMaster master) {
        return workerJvm(id, master, redis.getUri());
    }

    private static String cmdline(long pid) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"))).replace('\0', ' ');
        } catch (IOException e) {
            return "";
        }
    }

    private static TaskSpec marked(String id, long lines, double delay) {
        return TaskSpec.python("marked.py").taskId(id).param("lines", lines).param("delay", delay).gpus(1).build();
    }

    /** A leading master in a JVM of its own (so it can be killed with -9), its task logs in dir/logs. */
    private record LeaderProcess(JvmProcess process, String port) {
    }

    private LeaderProcess leaderInItsOwnJvm() throws Exception {
        JvmProcess m1 = closing(JvmProcess.builder(MasterMain.class).args(
                        "--redis", redis.getUri().toURI().toString(), "--port", "0", "--bind", "127.0.0.1",
                        "--secret", SECRET, "--namespace", options.getNamespace(), "--log-dir", dir.resolve("logs").toString(),
                        "--heartbeat-ms", "200", "--liveness-ms", "1000", "--task-lease-ms", "3000",
                        "--ack-timeout-ms", "2000", "--leader-lease-ms", "1000", "--reap-interval-ms", "200")
                .logFile(dir.resolve("m1.log")).start());
        String ready = m1.awaitOutput(line -> line.startsWith("master ") && line.contains(" ready at "), WAIT);
        return new LeaderProcess(m1, ready.replaceAll(".* ready at [^:]+:(\\d+).*", "$1"));
    }

    /** A standby master "m2" in this JVM, with the leader's leases, writing task logs to {@code logDirectory}. */
    private SchedulerMaster standby(Path logDirectory) {
        return closing(SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret(SECRET).coreOptions(options).logDirectory(logDirectory).masterId("m2")
                .leaderLease(Duration.ofSeconds(1)).reapInterval(Duration.ofMillis(200)).build().start());
    }

    private int printedLines(String taskId, int attempt) throws IOException {
        Path file = dir.resolve("runs").resolve(taskId).resolve("attempt-" + attempt).resolve("printed.txt");
        return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    }

    private WorkerState workerState(SchedulerMaster master, String id) {
        return master.listWorkers().stream().filter(w -> w.getWorkerId().equals(id)).map(WorkerInfo::getState)
                .findFirst().orElse(null);
    }

    private List<String> logLines(String taskId) throws IOException {
        return Files.readAllLines(dir.resolve("logs").resolve(taskId + ".log"));
    }

    /** The task's output lines as the master's log file holds them, without its control lines. */
    private List<String> outputLines(String taskId) throws IOException {
        return logLines(taskId).stream().filter(l -> !l.startsWith("TRACE_ID:") && !l.startsWith("##RLS_")).toList();
    }

    /** Every attempt started and stopped (by its own marks), and no two were ever running at once. */
    private void assertNoOverlap(String taskId, int attempts) throws IOException {
        Map<String, double[]> byEpoch = new LinkedHashMap<>();
        for (String line : Files.readAllLines(dir.resolve("runs").resolve(taskId).resolve("checkpoints/marks.log"))) {
            String[] f = line.split(" ");
            double[] span = byEpoch.computeIfAbsent(f[1], e -> new double[] {Double.NaN, Double.NaN});
            span[f[0].equals("start") ? 0 : 1] = Double.parseDouble(f[2]);
        }
        assertThat(byEpoch).as("attempts by epoch").hasSize(attempts);
        List<double[]> spans = new ArrayList<>(byEpoch.values());
        assertThat(spans).allSatisfy(s -> {
            assertThat(s[0]).as("start mark").isNotNaN();
            assertThat(s[1]).as("stop mark").isNotNaN();
        });
        spans.sort(Comparator.comparingDouble(s -> s[0]));
        for (int i = 1; i < spans.size(); i++) {
            assertThat(spans.get(i)[0]).as("attempt %d starts after attempt %d stopped", i + 1, i)
                    .isGreaterThan(spans.get(i - 1)[1]);
        }
    }
}
