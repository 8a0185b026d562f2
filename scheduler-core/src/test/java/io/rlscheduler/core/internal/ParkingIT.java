package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerRemoval;
import io.rlscheduler.core.WorkerRemovalStatus;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tasks that no registered worker could run are parked out of the claims' sight, so they cannot
 * stall the queue behind them, and come back when a worker that could run them registers; a
 * worker gone for good can be removed. Against a real Redis.
 */
class ParkingIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private RedisClient client;
    private RedisNamespace ns;

    /** A claim looks at 5 queued tasks; leases long enough that nothing expires unless a test waits for it. */
    private void open(RedisClient client, RedisNamespace ns, Duration liveness) {
        this.client = client;
        this.ns = ns;
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).claimScanLimit(5)
                .heartbeatInterval(liveness.dividedBy(10)).livenessLease(liveness).taskLease(Duration.ofSeconds(30))
                .ackTimeout(Duration.ofMillis(500)).build());
    }

    @AfterEach
    void close() {
        if (core != null) {
            core.close();
        }
    }

    private static WorkerRegistration worker(String id, Map<String, String> labels, Integer... gpus) {
        return new WorkerRegistration(id, "s-" + id, labels, 8, 64L << 30, List.of(gpus));
    }

    private static TaskDefinition gpuTask(String id, int gpus) {
        return TaskDefinition.builder(id).gpus(gpus).build();
    }

    private List<String> claim(String workerId, int max) {
        ClaimResult r = join(core.claim(workerId, "s-" + workerId, max, requestId()));
        assertThat(r.getStatus()).isEqualTo(ClaimStatus.OK);
        return r.getAssignments().stream().map(Assignment::getTaskId).toList();
    }

    private List<String> queued() {
        return CoreFixture.allInState(core, TaskState.QUEUED).stream().map(TaskRecord::getTaskId).toList();
    }

    @Test
    void tasksNoRegisteredWorkerCanRunAreParkedAndNoLongerHoldBackTheQueue(RedisClient client, RedisNamespace ns) {
        open(client, ns, Duration.ofSeconds(30));
        join(core.register(worker("w1", Map.of("zone", "a"), 0, 1)));
        // Ten tasks at the head that need 4 GPUs (w1 has 2) or a zone nobody has; a claim looks at 5.
        for (int i = 0; i < 8; i++) {
            join(core.submit(gpuTask("big-" + i, 4)));
        }
        join(core.submit(TaskDefinition.builder("zone-b").selector("zone", "b").build()));
        join(core.submit(TaskDefinition.builder("zone-a").selector("zone", "a").gpus(4).build()));
        for (int i = 0; i < 3; i++) {
            join(core.submit(gpuTask("small-" + i, 1)));
        }

        // Each claim parks the hopeless tasks it looks at; the third reaches the small ones.
        ClaimResult first = join(core.claim("w1", "s-w1", 16, requestId()));
        assertThat(first.getAssignments()).isEmpty();
        assertThat(first.getQueued()).as("parked tasks are not claimable").isEqualTo(8);
        assertThat(claim("w1", 16)).isEmpty();
        assertThat(claim("w1", 16)).containsExactly("small-0", "small-1");

        assertThat(join(core.parkedCount())).isEqualTo(10);
        assertThat(join(core.claimableCount())).isEqualTo(1);
        assertThat(join(core.queueDepth())).as("parked tasks still wait in the queue").isEqualTo(11);
        assertThat(join(core.isParked("big-0"))).isTrue();
        assertThat(join(core.isParked("small-2"))).isFalse();
        assertThat(join(core.isParked("small-0"))).as("assigned, not queued").isFalse();
        // Still QUEUED, listed at the end of the queue in their own order, saying why.
        assertThat(queued()).containsExactly("small-2", "big-0", "big-1", "big-2", "big-3", "big-4", "big-5", "big-6",
                "big-7", "zone-b", "zone-a");
        TaskRecord big = CoreFixture.record(core, "big-3");
        assertThat(big.getState()).isEqualTo(TaskState.QUEUED);
        assertThat(big.getReason()).startsWith("parked: no registered worker has the CPU slots, memory, GPUs and labels");
        assertThat(big.getHistory()).extracting(TaskTransition::getTo).containsExactly(TaskState.QUEUED);

        // A parked task can be cancelled like any queued one.
        assertThat(join(core.cancel("big-7", "not needed")).getStatus()).isEqualTo(CancelStatus.CANCELLED);
        assertThat(join(core.parkedCount())).isEqualTo(9);
    }

    @Test
    void aWorkerThatCouldRunParkedTasksBringsThemBackToTheirPlace(RedisClient client, RedisNamespace ns) {
        open(client, ns, Duration.ofSeconds(30));
        join(core.register(worker("w1", Map.of("zone", "a"), 0, 1)));
        join(core.submit(gpuTask("big", 4)));
        join(core.submit(TaskDefinition.builder("zone-b").selector("zone", "b").build()));
        join(core.submit(gpuTask("first-small", 1)));
        assertThat(claim("w1", 1)).containsExactly("first-small");
        assertThat(join(core.parkedCount())).isEqualTo(2);
        join(core.submit(gpuTask("later", 1)));

        // Another worker of w1's shape (the same resources and labels) changes nothing.
        join(core.register(worker("w1-twin", Map.of("zone", "a"), 0, 1)));
        assertThat(join(core.parkedCount())).isEqualTo(2);

        // A worker with 4 GPUs could run "big" (not "zone-b"): it comes back ahead of "later".
        RequeueResult registered = join(core.register(worker("w4", Map.of("zone", "a"), 0, 1, 2, 3)));
        assertThat(registered.getRequeued()).isEmpty();
        assertThat(join(core.isParked("big"))).isFalse();
        assertThat(join(core.isParked("zone-b"))).isTrue();
        assertThat(CoreFixture.record(core, "big").getReason())
                .isEqualTo("back in the queue: worker w4 registered, and it could run it");
        assertThat(queued()).containsExactly("big", "later", "zone-b");
        assertThat(claim("w4", 1)).containsExactly("big");

        // A worker of zone b brings back the task that asks for it.
        join(core.register(worker("wb", Map.of("zone", "b"))));
        assertThat(join(core.parkedCount())).isZero();
        assertThat(claim("wb", 4)).containsExactly("zone-b");
    }

    @Test
    void lostShapeCountsAreCountedAgainInsteadOfParkingWhatAWorkerCouldRun(RedisClient client, RedisNamespace ns) {
        open(client, ns, Duration.ofSeconds(30));
        join(core.register(worker("w1", Map.of(), 0, 1)));
        join(core.register(worker("w4", Map.of(), 0, 1, 2, 3)));
        // The counts are lost (a key deleted by hand): the workers are not counted.
        try (var connection = client.connect()) {
            connection.sync().del(ns.key("shapes"));
            join(core.submit(gpuTask("four", 4)));
            join(core.submit(gpuTask("eight", 8)));
            assertThat(claim("w1", 4)).isEmpty();
            assertThat(join(core.isParked("four"))).as("w4 could run it").isFalse();
            assertThat(join(core.isParked("eight"))).as("nobody could").isTrue();
            assertThat(connection.sync().hgetall(ns.key("shapes"))).hasSize(2).containsValues("1");
        }
    }

    @Test
    void aWorkerCountedUnderAnotherShapeIsCountedRightAtItsNextRegistration(RedisClient client, RedisNamespace ns) {
        open(client, ns, Duration.ofSeconds(30));
        join(core.register(worker("w1", Map.of(), 0, 1)));
        join(core.register(worker("w4", Map.of(), 0, 1, 2, 3)));
        try (var connection = client.connect()) {
            var redisSync = connection.sync();
            // The counts edited by hand, w4 counted under another shape: the total is right (2
            // workers), so no claim counts again, and w4's real shape is missing.
            String w4Shape = redisSync.hkeys(ns.key("shapes")).stream().filter(k -> k.contains("\"4\"")).findFirst()
                    .orElseThrow();
            redisSync.hdel(ns.key("shapes"), w4Shape);
            redisSync.hset(ns.key("shapes"), "[\"1\",\"0\",\"0\",[]]", "1");
            join(core.submit(gpuTask("four", 4)));
            assertThat(claim("w1", 4)).isEmpty();
            assertThat(join(core.isParked("four"))).as("judged by the wrong counts").isTrue();

            // w4 registers again (a restart), same shape: counted, and the task comes back.
            join(core.register(new WorkerRegistration("w4", "s-w4-2", Map.of(), 8, 64L << 30, List.of(0, 1, 2, 3))));
            assertThat(join(core.isParked("four"))).isFalse();
            assertThat(claim("w1", 4)).as("the next claim counts all shapes again").isEmpty();
            assertThat(redisSync.hgetall(ns.key("shapes"))).containsOnlyKeys(w4Shape,
                    "[\"8\",\"68719476736\",\"2\",{}]").containsValues("1");
            assertThat(join(core.claim("w4", "s-w4-2", 4, requestId())).getAssignments())
                    .extracting(Assignment::getTaskId).containsExactly("four");
        }
    }

    @Test
    void aWorkerGoneForGoodCanBeRemovedOnceItIsDownAndHoldsNothing(RedisClient client, RedisNamespace ns) {
        open(client, ns, Duration.ofMillis(1500));
        join(core.register(worker("w4", Map.of(), 0, 1, 2, 3)));
        join(core.submit(gpuTask("t1", 1)));
        assertThat(claim("w4", 1)).containsExactly("t1");

        WorkerRemoval live = join(core.removeWorker("w4"));
        assertThat(live.getStatus()).isEqualTo(WorkerRemovalStatus.LIVE);
        assertThat(live.getLivenessDeadline()).isPositive();
        assertThat(live.toString()).contains("only a worker gone for good can be removed");

        // No heartbeats: its liveness runs out, but it still holds t1 until the reaper takes it back.
        WorkerRemoval holding = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> join(core.removeWorker("w4")), r -> r.getStatus() != WorkerRemovalStatus.LIVE);
        assertThat(holding.getStatus()).isEqualTo(WorkerRemovalStatus.HOLDS_TASKS);
        assertThat(holding.getHeldTasks()).containsExactly("t1");
        assertThat(CoreFixture.workerInfo(core, "w4").getState()).isEqualTo(WorkerState.DOWN);
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> join(core.reap()).getRequeued().contains("t1"));

        assertThat(join(core.removeWorker("w4")).getStatus()).isEqualTo(WorkerRemovalStatus.REMOVED);
        assertThat(join(core.listWorkers())).extracting(WorkerInfo::getWorkerId).doesNotContain("w4");
        assertThat(join(core.removeWorker("w4")).getStatus()).isEqualTo(WorkerRemovalStatus.UNKNOWN_WORKER);
        assertThat(join(core.heartbeat("w4", "s-w4", List.of())).getStatus()).isEqualTo(HeartbeatStatus.UNKNOWN_WORKER);
        assertThatThrownBy(() -> core.removeWorker("bad id")).isInstanceOf(IllegalArgumentException.class);

        // With w4 gone, no registered worker has 4 GPUs: a claim for the worker left parks such a task
        // (a claim reads tasks that need GPUs only for a worker with a free one).
        join(core.register(worker("w1", Map.of(), 0, 1)));
        join(core.submit(gpuTask("four", 4)));
        assertThat(claim("w1", 4)).containsExactly("t1");
        assertThat(join(core.isParked("four"))).isTrue();
        try (var connection = client.connect()) {
            assertThat(connection.sync().hgetall(ns.key("shapes"))).hasSize(1);
            assertThat(connection.sync().exists(ns.key("workers", "res", "w4"))).isZero();
        }
    }
}
