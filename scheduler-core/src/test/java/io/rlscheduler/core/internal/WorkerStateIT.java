package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.lease;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker's state as listWorkers derives it by the Redis clock, with the short leases of
 * {@link CoreFixture#shortLeases}: liveness 0.8 s, task lease 1.5 s.
 */
class WorkerStateIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private Keys keys;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = CoreFixture.core(client, ns);
        keys = new Keys(ns.name());
    }

    @AfterEach
    void close() {
        core.close();
    }

    private WorkerState state(String worker) {
        return CoreFixture.workerInfo(core, worker).getState();
    }

    /** Polls the worker's state until it is {@code until}; returns the distinct states seen, in order. */
    private List<WorkerState> observeUntil(String worker, WorkerState until, List<WorkerState> seen) {
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
            WorkerState s = state(worker);
            if (seen.isEmpty() || seen.get(seen.size() - 1) != s) {
                seen.add(s);
            }
            return s == until;
        });
        return seen;
    }

    /** Registers w1, runs t1 on it and heartbeats once right after the ack; returns the lease. */
    private TaskLease startOneTask(List<WorkerState> seen) {
        join(core.register(worker("w1", "s1", 0)));
        seen.add(state("w1"));
        join(core.submit(task("t1", 1)));
        ClaimResult claim = join(core.claim("w1", "s1", 1, requestId()));
        assertThat(claim.getAssignments()).hasSize(1);
        TaskLease lease = lease(claim.getAssignments().get(0));
        assertThat(join(core.acknowledge(lease, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.APPLIED);
        HeartbeatResult hb = join(core.heartbeat("w1", "s1", List.of(lease)));
        assertThat(hb.getRenewedTasks()).isEqualTo(1);
        return lease;
    }

    @Test
    void anIdleWorkersRenewalExtendsItsLivenessWithoutRewritingItsRecordAndAStaleReservationIsStillRepaired(
            RedisCommands<String, String> redis) {
        join(core.register(worker("w1", "s1", 0)));
        String record = redis.hget(keys.workers(), "w1");
        WorkerInfo before = CoreFixture.workerInfo(core, "w1");
        long[] deadline = new long[1];
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(() -> {
            HeartbeatResult hb = join(core.heartbeat("w1", "s1", List.of()));
            assertThat(hb.getStatus()).isEqualTo(HeartbeatStatus.OK);
            deadline[0] = hb.getLivenessDeadlineMillis();
            return deadline[0] > before.getLivenessDeadlineMillis();
        });
        WorkerInfo after = CoreFixture.workerInfo(core, "w1");
        assertThat(after.getState()).isEqualTo(WorkerState.IDLE);
        assertThat(after.getLivenessDeadlineMillis()).isEqualTo(deadline[0]);
        assertThat(after.getLastHeartbeatMillis()).isGreaterThan(before.getLastHeartbeatMillis());
        assertThat(redis.hget(keys.workers(), "w1")).as("the record is read, not rewritten").isEqualTo(record);
        assertThat(join(core.heartbeat("w1", "s-other", List.of())).getStatus()).isEqualTo(HeartbeatStatus.WRONG_SESSION);
        assertThat(join(core.heartbeat("nobody", "s1", List.of())).getStatus()).isEqualTo(HeartbeatStatus.UNKNOWN_WORKER);

        // A reservation no task backs (left by a crash mid-way, say) is dropped by the renewal,
        // which hands over to the full heartbeat to repair it.
        redis.hset(keys.workers() + ":res:w1", "ghost", "7|0|1|0");
        assertThat(CoreFixture.workerInfo(core, "w1").getFreeGpuIds()).isEmpty();
        assertThat(join(core.heartbeat("w1", "s1", List.of())).getStatus()).isEqualTo(HeartbeatStatus.OK);
        assertThat(redis.hexists(keys.workers() + ":res:w1", "ghost")).isFalse();
        assertThat(CoreFixture.workerInfo(core, "w1").getFreeGpuIds()).containsExactly(0);

        // A worker registered before the beats hash existed has no beat: the full heartbeat
        // answers it and writes one, after which the bare renewal serves it.
        redis.hdel(keys.workers() + ":beat", "w1");
        assertThat(join(core.heartbeat("w1", "s1", List.of())).getStatus()).isEqualTo(HeartbeatStatus.OK);
        assertThat(redis.hget(keys.workers() + ":beat", "w1")).startsWith("s1|");
        assertThat(join(core.heartbeat("w1", "s-other", List.of())).getStatus()).isEqualTo(HeartbeatStatus.WRONG_SESSION);
    }

    @Test
    void renewalsSentTogetherShareRunsAndEachIsAnsweredAsIfItCameAlone(RedisCommands<String, String> redis) {
        for (int i = 0; i < 40; i++) {
            join(core.register(worker("r" + i, "s" + i, 0)));
        }
        redis.hset(keys.workers() + ":res:r3", "ghost", "7|0|1|0");
        redis.hdel(keys.workers() + ":beat", "r4");
        long runsBefore = evalshaCalls(redis);
        List<CompletableFuture<HeartbeatResult>> answers = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            answers.add(core.heartbeat("r" + i, i == 5 ? "s-other" : "s" + i, List.of()));
        }
        answers.add(core.heartbeat("nobody", "s1", List.of()));
        answers.forEach(CoreFixture::join);
        // 41 renewals and the full heartbeats three of them handed over to, in fewer runs than
        // renewals (typically two: the renewals, then the full heartbeats).
        assertThat(evalshaCalls(redis) - runsBefore).isLessThan(41);
        for (int i = 0; i < 40; i++) {
            HeartbeatResult hb = join(answers.get(i));
            assertThat(hb.getStatus()).as("r%d", i).isEqualTo(i == 5 ? HeartbeatStatus.WRONG_SESSION : HeartbeatStatus.OK);
            if (i != 5) {
                assertThat(CoreFixture.workerInfo(core, "r" + i).getLivenessDeadlineMillis()).as("r%d", i)
                        .isEqualTo(hb.getLivenessDeadlineMillis());
                assertThat(redis.hget(keys.workers() + ":beat", "r" + i)).startsWith("s" + i + "|");
            }
        }
        assertThat(join(answers.get(40)).getStatus()).isEqualTo(HeartbeatStatus.UNKNOWN_WORKER);
        // The ghost reservation and the missing beat went through the full heartbeat, which repaired them.
        assertThat(redis.hexists(keys.workers() + ":res:r3", "ghost")).isFalse();
    }

    private static long evalshaCalls(RedisCommands<String, String> redis) {
        for (String line : redis.info("commandstats").split("\\r?\\n")) {
            if (line.startsWith("cmdstat_evalsha:")) {
                return Long.parseLong(line.replaceAll("^cmdstat_evalsha:calls=(\\d+),.*$", "$1"));
            }
        }
        return 0;
    }

    @Test
    void silentWorkerGoesIdleRunningPendingDown() {
        List<WorkerState> seen = new ArrayList<>();
        TaskLease lease = startOneTask(seen);
        long taskDeadline = CoreFixture.record(core, "t1").getDeadlineMillis();
        long livenessDeadline = CoreFixture.workerInfo(core, "w1").getLivenessDeadlineMillis();
        assertThat(taskDeadline).as("the task lease outlives the liveness lease").isGreaterThan(livenessDeadline);

        observeUntil("w1", WorkerState.DOWN, seen);
        assertThat(seen).containsExactly(WorkerState.IDLE, WorkerState.RUNNING, WorkerState.PENDING, WorkerState.DOWN);

        // Deriving the state changes nothing: the task is still RUNNING until a reaper takes it.
        TaskRecord t = CoreFixture.record(core, "t1");
        assertThat(t.getState()).isEqualTo(TaskState.RUNNING);
        assertThat(CoreFixture.workerInfo(core, "w1").getTasks()).containsExactly(lease);
        assertThat(join(core.reap()).getRequeued()).containsExactly("t1");
        WorkerInfo down = CoreFixture.workerInfo(core, "w1");
        assertThat(down.getState()).isEqualTo(WorkerState.DOWN);
        assertThat(down.getTasks()).isEmpty();
        assertThat(down.getFreeGpuIds()).containsExactly(0);
    }

    @Test
    void pendingWorkerThatHeartbeatsAgainIsRunningAndKeepsItsTask() {
        List<WorkerState> seen = new ArrayList<>();
        TaskLease lease = startOneTask(seen);
        observeUntil("w1", WorkerState.PENDING, seen);
        assertThat(seen).containsExactly(WorkerState.IDLE, WorkerState.RUNNING, WorkerState.PENDING);
        long deadlineBefore = CoreFixture.record(core, "t1").getDeadlineMillis();

        HeartbeatResult hb = join(core.heartbeat("w1", "s1", List.of(lease)));
        assertThat(hb.getStatus()).isEqualTo(HeartbeatStatus.OK);
        assertThat(hb.getRenewedTasks()).isEqualTo(1);
        assertThat(hb.getRevokedTasks()).isEmpty();
        assertThat(state("w1")).isEqualTo(WorkerState.RUNNING);

        RequeueResult reaped = join(core.reap());
        assertThat(reaped.getRequeued()).isEmpty();
        assertThat(reaped.getFailed()).isEmpty();
        TaskRecord t = CoreFixture.record(core, "t1");
        assertThat(t.getState()).isEqualTo(TaskState.RUNNING);
        assertThat(t.getEpoch()).isEqualTo(lease.getEpoch());
        assertThat(t.getLeaseLosses()).isZero();
        assertThat(t.getDeadlineMillis()).isGreaterThan(deadlineBefore);
        assertThat(join(core.queueDepth())).isZero();
        assertThat(CoreFixture.workerInfo(core, "w1").getTasks()).containsExactly(lease);
    }

    @Test
    void idleWorkerThatFallsSilentGoesStraightDownAndFinishingReturnsToIdle() {
        join(core.register(worker("idle", "s1", 0)));
        List<WorkerState> seen = new ArrayList<>();
        seen.add(state("idle"));
        observeUntil("idle", WorkerState.DOWN, seen);
        assertThat(seen).containsExactly(WorkerState.IDLE, WorkerState.DOWN);

        // Back with a heartbeat, run a task and finish it: IDLE, RUNNING, IDLE.
        assertThat(join(core.heartbeat("idle", "s1", List.of())).getStatus()).isEqualTo(HeartbeatStatus.OK);
        assertThat(state("idle")).isEqualTo(WorkerState.IDLE);
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(join(core.claim("idle", "s1", 1, requestId())).getAssignments().get(0));
        join(core.heartbeat("idle", "s1", List.of(lease))); // keeps it live through the checks
        assertThat(state("idle")).isEqualTo(WorkerState.RUNNING);
        assertThat(join(core.finish(lease, "idle", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        join(core.heartbeat("idle", "s1", List.of()));
        assertThat(state("idle")).isEqualTo(WorkerState.IDLE);
    }
}
