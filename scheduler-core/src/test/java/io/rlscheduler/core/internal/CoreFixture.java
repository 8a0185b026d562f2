package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Short-lease settings and small helpers shared by the lease-core integration tests. */
final class CoreFixture {

    /** Leases of about a second, so that expiry tests run fast; heartbeats are sent by the tests. */
    static CoreOptions shortLeases(RedisNamespace ns) {
        return CoreOptions.builder()
                .namespace(ns.name())
                .heartbeatInterval(Duration.ofMillis(200))
                .livenessLease(Duration.ofMillis(800))
                .taskLease(Duration.ofMillis(1500))
                .ackTimeout(Duration.ofMillis(800))
                .build();
    }

    /**
     * Settings with the given leases; the heartbeat interval is a tenth of the liveness lease
     * (heartbeats are sent by the tests anyway).
     */
    static CoreOptions leases(RedisNamespace ns, Duration liveness, Duration taskLease, Duration ackTimeout) {
        return CoreOptions.builder()
                .namespace(ns.name())
                .heartbeatInterval(liveness.dividedBy(10))
                .livenessLease(liveness)
                .taskLease(taskLease)
                .ackTimeout(ackTimeout)
                .build();
    }

    static LeaseCore core(RedisClient client, RedisNamespace ns) {
        return LeaseCore.create(client, shortLeases(ns));
    }

    static WorkerRegistration worker(String id, String session, Integer... gpus) {
        return new WorkerRegistration(id, session, Map.of("zone", "a"), 8, 64L << 30, List.of(gpus));
    }

    static TaskDefinition task(String id, int gpus) {
        return TaskDefinition.builder(id).gpus(gpus).owner("alice").specJson("{\"script\":\"train.py\",\"lr\":0.123456789012345678}").build();
    }

    static String requestId() {
        return "r-" + UUID.randomUUID();
    }

    static <T> T join(java.util.concurrent.CompletableFuture<T> future) {
        return future.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join();
    }

    static TaskRecord record(LeaseCore core, String taskId) {
        return join(core.getTask(taskId)).orElseThrow(() -> new AssertionError("no task " + taskId));
    }

    static WorkerInfo workerInfo(LeaseCore core, String workerId) {
        return join(core.listWorkers()).stream().filter(w -> w.getWorkerId().equals(workerId)).findFirst()
                .orElseThrow(() -> new AssertionError("no worker " + workerId));
    }

    static TaskLease lease(Assignment a) {
        return new TaskLease(a.getTaskId(), a.getEpoch());
    }

    /** Registers {@code worker} with {@code session}, submits task t, claims and acknowledges it; returns its lease. */
    static TaskLease running(LeaseCore core, String worker, String session) {
        join(core.register(worker(worker, session)));
        join(core.submit(task("t", 0)));
        TaskLease lease = lease(join(core.claim(worker, session, 1, requestId())).getAssignments().get(0));
        if (!join(core.acknowledge(lease, worker, session)).isAccepted()) {
            throw new AssertionError("task t was not acknowledged");
        }
        return lease;
    }

    /** Every task id of one state index, paging through listTasks. */
    static List<TaskRecord> allInState(LeaseCore core, TaskState state) {
        List<TaskRecord> out = new java.util.ArrayList<>();
        for (int offset = 0; ; offset += 1000) {
            TaskPage page = join(core.listTasks(state, offset, 1000));
            out.addAll(page.getTasks());
            if (offset + 1000 >= page.getTotal()) {
                return out;
            }
        }
    }

    private CoreFixture() {
    }
}
