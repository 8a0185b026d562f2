package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.lease;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The reaper: expired leases and ack deadlines, limits, fencing of late writers, worker restarts. */
class ReaperIT {

    private static final Logger log = LoggerFactory.getLogger(ReaperIT.class);

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private final List<LeaseCore> cores = new ArrayList<>();
    private LeaseCore core;

    @AfterEach
    void close() {
        cores.forEach(LeaseCore::close);
    }

    private LeaseCore open(RedisClient client, CoreOptions options) {
        LeaseCore c = LeaseCore.create(client, options);
        cores.add(c);
        if (core == null) {
            core = c;
        }
        return c;
    }

    private TaskRecord record(String id) {
        return CoreFixture.record(core, id);
    }

    private Assignment claimOne(String worker, String session) {
        ClaimResult claim = join(core.claim(worker, session, 1, requestId()));
        assertThat(claim.getStatus()).isEqualTo(ClaimStatus.OK);
        assertThat(claim.getAssignments()).hasSize(1);
        return claim.getAssignments().get(0);
    }

    /** Calls reap until the task is taken back; returns the call's answer. Waits at most 10 s. */
    private RequeueResult reapUntilTakenBack(String taskId) {
        RequeueResult[] hit = new RequeueResult[1];
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(25)).until(() -> {
            RequeueResult r = join(core.reap());
            boolean found = r.getRequeued().contains(taskId) || r.getFailed().contains(taskId)
                    || r.getCancelled().contains(taskId);
            if (found) {
                hit[0] = r;
            }
            return found;
        });
        return hit[0];
    }

    private static long count(TaskRecord t, TaskState from, TaskState to) {
        return t.getHistory().stream().filter(h -> h.getFrom() == from && h.getTo() == to).count();
    }

    // ------------------------------------------------------------------------------------------
    // (a) two reapers, 1,000 expired leases
    // ------------------------------------------------------------------------------------------

    @Test
    void twoConcurrentReapersTakeBackEachOfAThousandExpiredLeasesExactlyOnce(RedisClient client, RedisNamespace ns)
            throws Exception {
        // Short liveness and task lease; the ack timeout is long, so that only the task lease expires.
        CoreOptions options = CoreFixture.leases(ns, Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(60))
                .mutate().reapBatchSize(37).build();
        LeaseCore first = open(client, options);
        LeaseCore second = open(client, options);

        int workers = 10;
        int perWorker = 100;
        List<CompletableFuture<SubmitResult>> submits = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < workers * perWorker; i++) {
            String id = String.format("t-%04d", i);
            ids.add(id);
            submits.add(first.submit(TaskDefinition.builder(id).owner("alice").build()));
        }
        submits.forEach(f -> assertThat(join(f).isCreated()).isTrue());

        for (int w = 0; w < workers; w++) {
            String id = "w" + w;
            join(first.register(new WorkerRegistration(id, "s1", Map.of(), perWorker, 0, List.of())));
            ClaimResult claim = join(first.claim(id, "s1", perWorker, requestId()));
            assertThat(claim.getAssignments()).hasSize(perWorker);
            List<CompletableFuture<WriteResult>> acks = new ArrayList<>();
            for (Assignment a : claim.getAssignments()) {
                acks.add(first.acknowledge(lease(a), id, "s1"));
            }
            acks.forEach(f -> assertThat(join(f).getStatus()).isEqualTo(WriteStatus.APPLIED));
        }
        assertThat(join(first.listTasks(TaskState.RUNNING, 0, 1)).getTotal()).isEqualTo(workers * perWorker);

        // The workers stop heartbeating: wait until, by the Redis clock, no worker is live and no
        // task lease is valid.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
                join(first.listWorkers()).stream().allMatch(w -> w.getState() == WorkerState.DOWN));

        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<String> byFirst;
        List<String> bySecond;
        try {
            Future<List<String>> a = pool.submit(() -> reapAll(first, start));
            Future<List<String>> b = pool.submit(() -> reapAll(second, start));
            byFirst = a.get(60, TimeUnit.SECONDS);
            bySecond = b.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }

        log.info("reapers took back {} and {} tasks", byFirst.size(), bySecond.size());
        List<String> union = new ArrayList<>(byFirst);
        union.addAll(bySecond);
        assertThat(union).as("requeued by both reapers").doesNotHaveDuplicates().hasSize(ids.size());
        assertThat(new HashSet<>(union)).isEqualTo(ids);
        for (TaskRecord t : CoreFixture.allInState(first, TaskState.QUEUED)) {
            assertThat(t.getLeaseLosses()).as("lease losses of %s", t.getTaskId()).isEqualTo(1);
            assertThat(count(t, TaskState.RUNNING, TaskState.QUEUED)).as("RUNNING -> QUEUED in %s", t.getTaskId()).isEqualTo(1);
            assertThat(t.getHistory()).extracting(TaskTransition::getTo)
                    .containsExactly(TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING, TaskState.QUEUED);
            assertThat(t.getWorkerId()).isEmpty();
        }
        assertThat(join(first.listTasks(TaskState.QUEUED, 0, 1)).getTotal()).isEqualTo(ids.size());
        assertThat(join(first.listTasks(TaskState.RUNNING, 0, 1)).getTotal()).isZero();
        assertThat(join(first.queueDepth())).isEqualTo(ids.size());
        assertThat(join(first.reap()).getRequeued()).isEmpty();
        for (WorkerInfo w : join(first.listWorkers())) {
            assertThat(w.getTasks()).isEmpty();
            assertThat(w.getFreeCpuSlots()).isEqualTo(perWorker);
        }
    }

    private static List<String> reapAll(LeaseCore reaper, CyclicBarrier start) throws Exception {
        start.await(10, TimeUnit.SECONDS);
        List<String> requeued = new ArrayList<>();
        for (int calls = 0; calls < 10_000; calls++) {
            RequeueResult r = join(reaper.reap());
            assertThat(r.getFailed()).isEmpty();
            assertThat(r.getCancelled()).isEmpty();
            requeued.addAll(r.getRequeued());
            if (r.getRequeued().isEmpty() && !r.isMore()) {
                return requeued;
            }
        }
        throw new AssertionError("reaper did not run dry in 10,000 calls");
    }

    // ------------------------------------------------------------------------------------------
    // (b) ack timeout
    // ------------------------------------------------------------------------------------------

    @Test
    void unacknowledgedAssignmentGoesBackToTheQueueWithoutALeaseLoss(RedisClient client, RedisNamespace ns) {
        open(client, CoreFixture.leases(ns, Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofMillis(1500)));
        join(core.register(worker("w1", "s1", 0, 1)));
        join(core.submit(task("t1", 1)));
        Assignment first = claimOne("w1", "s1");
        assertThat(first.getAttempt()).isEqualTo(1);
        assertThat(join(core.reap()).getRequeued()).as("reaped before the ack timeout").isEmpty();
        assertThat(record("t1").getState()).isEqualTo(TaskState.ASSIGNED);

        RequeueResult reaped = reapUntilTakenBack("t1");
        assertThat(reaped.getRequeued()).containsExactly("t1");
        TaskRecord t = record("t1");
        assertThat(t.getState()).isEqualTo(TaskState.QUEUED);
        assertThat(t.getLeaseLosses()).isZero();
        assertThat(t.getAttempt()).isEqualTo(1);
        assertThat(t.getWorkerId()).isEmpty();
        TaskTransition last = t.getHistory().get(t.getHistory().size() - 1);
        assertThat(last.getFrom()).isEqualTo(TaskState.ASSIGNED);
        assertThat(last.getTo()).isEqualTo(TaskState.QUEUED);
        assertThat(last.getReason()).contains("not acknowledged");
        assertThat(join(core.queueDepth())).isEqualTo(1);
        WorkerInfo w = CoreFixture.workerInfo(core, "w1");
        assertThat(w.getFreeGpuIds()).containsExactly(0, 1);
        assertThat(w.getTasks()).isEmpty();
        // The ack arrives too late.
        assertThat(join(core.acknowledge(lease(first), "w1", "s1")).getStatus()).isEqualTo(WriteStatus.STALE);
        assertThat(record("t1").toString()).isEqualTo(t.toString());

        Assignment second = claimOne("w1", "s1");
        assertThat(second.getTaskId()).isEqualTo("t1");
        assertThat(second.getAttempt()).isEqualTo(2);
        assertThat(second.getEpoch()).isGreaterThan(first.getEpoch());
        assertThat(record("t1").getLeaseLosses()).isZero();
    }

    // ------------------------------------------------------------------------------------------
    // (c) limits
    // ------------------------------------------------------------------------------------------

    @Test
    void withNoLeaseLossAllowedOneLossFailsTheTask(RedisClient client, RedisNamespace ns) {
        open(client, CoreFixture.shortLeases(ns));
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(TaskDefinition.builder("t1").gpus(1).maxLeaseLosses(0).build()));
        Assignment a = claimOne("w1", "s1");
        assertThat(join(core.acknowledge(lease(a), "w1", "s1")).getStatus()).isEqualTo(WriteStatus.APPLIED);

        RequeueResult reaped = reapUntilTakenBack("t1");
        assertThat(reaped.getFailed()).containsExactly("t1");
        assertThat(reaped.getRequeued()).isEmpty();
        TaskRecord t = record("t1");
        assertThat(t.getState()).isEqualTo(TaskState.FAILED);
        assertThat(t.getLeaseLosses()).isEqualTo(1);
        assertThat(t.getError()).contains("lease lost 1 times (limit 0)");
        assertThat(t.getReason()).contains("limit 0");
        assertFailedIsOutOfTheQueue("t1");
        assertThat(CoreFixture.workerInfo(core, "w1").getFreeGpuIds()).containsExactly(0);
        assertThat(join(core.finish(lease(a), "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(record("t1").toString()).isEqualTo(t.toString());
    }

    @Test
    void withTwoAttemptsTheLossOfTheSecondAttemptFailsTheTask(RedisClient client, RedisNamespace ns) {
        open(client, CoreFixture.shortLeases(ns));
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(TaskDefinition.builder("t1").gpus(1).maxAttempts(2).maxLeaseLosses(10).build()));

        // Attempt 1 is lost by the ack timeout: back to the queue.
        Assignment first = claimOne("w1", "s1");
        assertThat(reapUntilTakenBack("t1").getRequeued()).containsExactly("t1");
        assertThat(record("t1").getState()).isEqualTo(TaskState.QUEUED);

        // Attempt 2 is lost by its task lease: the attempts are used up.
        join(core.heartbeat("w1", "s1", List.of()));
        Assignment second = claimOne("w1", "s1");
        assertThat(second.getAttempt()).isEqualTo(2);
        assertThat(second.getEpoch()).isGreaterThan(first.getEpoch());
        join(core.acknowledge(lease(second), "w1", "s1"));
        RequeueResult reaped = reapUntilTakenBack("t1");
        assertThat(reaped.getFailed()).containsExactly("t1");
        TaskRecord t = record("t1");
        assertThat(t.getState()).isEqualTo(TaskState.FAILED);
        assertThat(t.getAttempt()).isEqualTo(2);
        assertThat(t.getLeaseLosses()).isEqualTo(1);
        assertThat(t.getError()).contains("2 attempts made (limit 2)");
        assertFailedIsOutOfTheQueue("t1");
        join(core.heartbeat("w1", "s1", List.of()));
        assertThat(join(core.claim("w1", "s1", 1, requestId())).getAssignments()).isEmpty();
    }

    private void assertFailedIsOutOfTheQueue(String id) {
        assertThat(join(core.queueDepth())).isZero();
        assertThat(join(core.listTasks(TaskState.QUEUED, 0, 10)).getTotal()).isZero();
        assertThat(join(core.listTasks(TaskState.FAILED, 0, 10)).getTasks()).extracting(TaskRecord::getTaskId)
                .containsExactly(id);
        assertThat(join(core.reap()).getRequeued()).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // (d) late writers of a lost lease
    // ------------------------------------------------------------------------------------------

    @Test
    void lateHeartbeatAndLateFinishOfTheOldWorkerChangeNothing(RedisClient client, RedisNamespace ns) {
        open(client, CoreFixture.shortLeases(ns));
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        Assignment old = claimOne("w1", "s1");
        join(core.acknowledge(lease(old), "w1", "s1"));
        assertThat(reapUntilTakenBack("t1").getRequeued()).containsExactly("t1");

        // While the task is back in the queue.
        TaskRecord queued = record("t1");
        assertThat(queued.getState()).isEqualTo(TaskState.QUEUED);
        HeartbeatResult hb = join(core.heartbeat("w1", "s1", List.of(lease(old))));
        assertThat(hb.getStatus()).isEqualTo(HeartbeatStatus.OK);
        assertThat(hb.getRevokedTasks()).containsExactly(lease(old));
        assertThat(hb.getRenewedTasks()).isZero();
        assertThat(record("t1").toString()).isEqualTo(queued.toString());
        assertThat(join(core.finish(lease(old), "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(record("t1").toString()).isEqualTo(queued.toString());
        assertThat(join(core.queueDepth())).isEqualTo(1);

        // After another worker took it: the late writes must not touch the new holder's lease.
        join(core.register(worker("w2", "s2", 0)));
        Assignment now = claimOne("w2", "s2");
        assertThat(now.getEpoch()).isGreaterThan(old.getEpoch());
        join(core.acknowledge(lease(now), "w2", "s2"));
        TaskRecord running = record("t1");
        hb = join(core.heartbeat("w1", "s1", List.of(lease(old))));
        assertThat(hb.getRevokedTasks()).containsExactly(lease(old));
        assertThat(hb.getRenewedTasks()).isZero();
        assertThat(join(core.finish(lease(old), "w1", "s1", TaskState.FAILED, 1, "late", null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(join(core.acknowledge(lease(old), "w1", "s1")).getStatus()).isEqualTo(WriteStatus.STALE);
        assertThat(record("t1").toString()).isEqualTo(running.toString());
        assertThat(CoreFixture.workerInfo(core, "w1").getTasks()).isEmpty();
        assertThat(CoreFixture.workerInfo(core, "w1").getFreeGpuIds()).containsExactly(0);
        assertThat(CoreFixture.workerInfo(core, "w2").getTasks()).containsExactly(lease(now));
    }

    // ------------------------------------------------------------------------------------------
    // (e) cancel requested, then the lease expires
    // ------------------------------------------------------------------------------------------

    @Test
    void cancelRequestedTaskWhoseLeaseExpiresIsCancelledNotRequeued(RedisClient client, RedisNamespace ns) {
        open(client, CoreFixture.shortLeases(ns));
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        Assignment a = claimOne("w1", "s1");
        join(core.acknowledge(lease(a), "w1", "s1"));
        assertThat(join(core.cancel("t1", "user asked")).getStatus()).isEqualTo(CancelStatus.CANCEL_REQUESTED);

        RequeueResult reaped = reapUntilTakenBack("t1");
        assertThat(reaped.getCancelled()).containsExactly("t1");
        assertThat(reaped.getRequeued()).isEmpty();
        TaskRecord t = record("t1");
        assertThat(t.getState()).isEqualTo(TaskState.CANCELLED);
        assertThat(t.getReason()).contains("cancel was requested");
        assertThat(count(t, TaskState.RUNNING, TaskState.CANCELLED)).isEqualTo(1);
        assertThat(count(t, TaskState.RUNNING, TaskState.QUEUED)).isZero();
        assertThat(join(core.queueDepth())).isZero();
        assertThat(join(core.listTasks(TaskState.QUEUED, 0, 10)).getTotal()).isZero();
        assertThat(join(core.listTasks(TaskState.CANCELLED, 0, 10)).getTotal()).isEqualTo(1);
        assertThat(CoreFixture.workerInfo(core, "w1").getFreeGpuIds()).containsExactly(0);
        assertThat(join(core.finish(lease(a), "w1", "s1", TaskState.CANCELLED, -15, null, null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(record("t1").toString()).isEqualTo(t.toString());
    }

    // ------------------------------------------------------------------------------------------
    // (f) a new session of a worker
    // ------------------------------------------------------------------------------------------

    @Test
    void newSessionOfAWorkerTakesBackItsTasksAtOnce(RedisClient client, RedisNamespace ns) {
        // Long leases: nothing expires, the take-back is the registration's alone.
        open(client, CoreFixture.leases(ns, Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(60)));
        join(core.register(worker("w1", "s1", 0, 1, 2, 3)));
        join(core.submit(task("running", 2)));
        join(core.submit(task("assigned", 1)));
        ClaimResult claim = join(core.claim("w1", "s1", 2, requestId()));
        assertThat(claim.getAssignments()).extracting(Assignment::getTaskId).containsExactly("running", "assigned");
        Assignment running = claim.getAssignments().get(0);
        Assignment assigned = claim.getAssignments().get(1);
        join(core.acknowledge(lease(running), "w1", "s1"));
        assertThat(CoreFixture.workerInfo(core, "w1").getFreeGpuIds()).containsExactly(3);

        RequeueResult result = join(core.register(worker("w1", "s2", 0, 1, 2, 3)));
        assertThat(result.getRequeued()).containsExactlyInAnyOrder("running", "assigned");
        assertThat(result.getFailed()).isEmpty();
        assertThat(result.getCancelled()).isEmpty();
        for (String id : List.of("running", "assigned")) {
            TaskRecord t = record(id);
            assertThat(t.getState()).as(id).isEqualTo(TaskState.QUEUED);
            assertThat(t.getLeaseLosses()).as(id).isEqualTo(1);
            assertThat(t.getWorkerId()).as(id).isEmpty();
            assertThat(t.getHistory().get(t.getHistory().size() - 1).getReason()).contains("restarted");
        }
        assertThat(join(core.queueDepth())).isEqualTo(2);
        WorkerInfo w = CoreFixture.workerInfo(core, "w1");
        assertThat(w.getSessionId()).isEqualTo("s2");
        assertThat(w.getFreeGpuIds()).containsExactly(0, 1, 2, 3);
        assertThat(w.getFreeCpuSlots()).isEqualTo(w.getCpuSlots());
        assertThat(w.getTasks()).isEmpty();
        assertThat(w.getState()).isEqualTo(WorkerState.IDLE);

        // The old session is fenced off; registering the new one again changes nothing.
        assertThat(join(core.heartbeat("w1", "s1", List.of(lease(running)))).getStatus())
                .isEqualTo(HeartbeatStatus.WRONG_SESSION);
        assertThat(join(core.finish(lease(running), "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(join(core.register(worker("w1", "s2", 0, 1, 2, 3))).getRequeued()).isEmpty();
        assertThat(join(core.reap()).getRequeued()).isEmpty();

        ClaimResult again = join(core.claim("w1", "s2", 2, requestId()));
        assertThat(again.getAssignments()).extracting(Assignment::getTaskId).containsExactly("running", "assigned");
        assertThat(again.getAssignments()).allSatisfy(a -> {
            assertThat(a.getAttempt()).isEqualTo(2);
            assertThat(a.getEpoch()).isGreaterThan(assigned.getEpoch());
        });
    }
}
