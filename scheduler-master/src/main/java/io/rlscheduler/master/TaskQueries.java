package io.rlscheduler.master;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.internal.LeaderElector;
import io.rlscheduler.master.internal.WorkerRegistry;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The queries that read several records and judge them: runs side by side
 * ({@link SchedulerMaster#compare}), why a task waits ({@link SchedulerMaster#whyPending}), and the
 * provenance of a task's attempts ({@link TaskHandle#provenance()}).
 * Blocks the caller while Redis answers, each answer bounded by the API timeout.
 */
final class TaskQueries {

    private final LeaseCore core;
    private final WorkerRegistry registry;
    private final LeaderElector elector;
    private final MasterHealth.Await await;

    TaskQueries(LeaseCore core, WorkerRegistry registry, LeaderElector elector, MasterHealth.Await await) {
        this.core = core;
        this.registry = registry;
        this.elector = elector;
        this.await = await;
    }

    private <T> T await(CompletableFuture<T> answer) {
        return await.await(answer);
    }

    RunComparison compare(java.util.Collection<String> taskIds) {
        Objects.requireNonNull(taskIds, "taskIds");
        if (taskIds.isEmpty() || taskIds.size() > RunComparison.MAX_RUNS) {
            throw new IllegalArgumentException("compare takes 1 to " + RunComparison.MAX_RUNS + " task ids, not "
                    + taskIds.size());
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        List<CompletableFuture<Optional<TaskRecord>>> reads = new java.util.ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            TaskIds.require(id, "task id");
            if (!seen.add(id)) {
                throw new IllegalArgumentException("task id " + id + " is given twice");
            }
        }
        List<CompletableFuture<List<AttemptProvenance>>> provenanceReads = new java.util.ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            reads.add(core.getTask(id));
            provenanceReads.add(core.getProvenance(id));
        }
        List<TaskRecord> records = new java.util.ArrayList<>(taskIds.size());
        java.util.Iterator<String> ids = taskIds.iterator();
        for (CompletableFuture<Optional<TaskRecord>> read : reads) {
            String id = ids.next();
            records.add(await(read).orElseThrow(() -> new TaskNotFoundException(id)));
        }
        List<List<AttemptProvenance>> provenance = new java.util.ArrayList<>(taskIds.size());
        for (CompletableFuture<List<AttemptProvenance>> read : provenanceReads) {
            provenance.add(await(read));
        }
        return RunComparison.of(records, provenance);
    }

    /** The provenance of a task's attempts, by attempt number; the task's existence is read only when it has none. */
    List<AttemptProvenance> provenance(String taskId) {
        TaskIds.require(taskId, "task id");
        List<AttemptProvenance> attempts = await(core.getProvenance(taskId));
        if (attempts.isEmpty() && await(core.getTask(taskId)).isEmpty()) {
            throw new TaskNotFoundException(taskId);
        }
        return attempts;
    }

    PendingReason whyPending(String taskId) {
        TaskIds.require(taskId, "task id");
        CompletableFuture<List<WorkerInfo>> workers = core.listWorkers();
        CompletableFuture<Long> position = core.queuePosition(taskId);
        CompletableFuture<Boolean> parked = core.isParked(taskId);
        TaskRecord task = await(core.getTask(taskId)).orElseThrow(() -> new TaskNotFoundException(taskId));
        int scanLimit = core.getOptions().getClaimScanLimit();
        long ahead = await(position);
        List<TaskRecord> before = new java.util.ArrayList<>();
        for (long offset = 0; ahead < scanLimit && offset < ahead; offset += 1000) {
            // Read a moment after the position: a task that left the queue meanwhile moves this one
            // up into the page, and it must not take its own room.
            await(core.listTasks(TaskState.QUEUED, (int) offset, (int) Math.min(1000, ahead - offset))).getTasks()
                    .stream().filter(t -> !t.getTaskId().equals(taskId)).forEach(before::add);
        }
        LeaderStatus leader = elector.current();
        if (leader != null && leader.getDeadlineMillis() < System.currentTimeMillis()) {
            leader = null; // its lease ran out since this master last looked: nobody may lead now
        }
        java.util.Set<String> connected = new java.util.HashSet<>();
        registry.snapshot().forEach(w -> connected.add(w.getWorkerId() + "/" + w.getSessionId()));
        PendingReason.Dispatch dispatch = new PendingReason.Dispatch(leader == null ? "" : leader.getLeaderId(),
                leader != null && leader.isSelf(), connected);
        return PendingReason.judge(task, await(workers), ahead, scanLimit, before, dispatch, await(parked));
    }
}
