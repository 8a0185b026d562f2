package io.rlscheduler.master;

import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Why a task is still waiting in the queue, from {@link TaskHandle#whyPending()}: judged from its
 * record, the registered workers and its place in the queue at the moment of the call, by the
 * rules a claim applies (a worker fits a task when its labels include the task's selector and its
 * free GPUs, CPU slots and memory cover what the task asks for; a claim looks at the first
 * {@code claimScanLimit} tasks of the queue). Immutable.
 */
public final class PendingReason {

    /** The kinds of reason, in the order they are checked. */
    public enum Code {
        /** The task is not queued (it runs, or ended): nothing holds it back. */
        NOT_QUEUED,
        /** No worker is live (IDLE or RUNNING by its leases): the task waits for one to register. */
        NO_LIVE_WORKER,
        /** No live worker has every label of the task's selector. */
        NO_WORKER_MATCHES_SELECTOR,
        /** Live workers match the selector, but none has as many GPUs, CPU slots or memory in all as the task asks for. */
        NO_WORKER_LARGE_ENOUGH,
        /** More tasks are ahead of it than a claim looks at ({@code claimScanLimit}): it waits for them to leave the queue. */
        BEHIND_IN_QUEUE,
        /** Workers large enough for it exist, but none has that much free now: it waits for running tasks to end. */
        WAITING_FOR_CAPACITY,
        /** A live worker has room for it now: the next dispatch round should assign it. */
        FITS_NOW
    }

    private final String taskId;
    private final Code code;
    private final String message;
    private final long queuePosition;

    PendingReason(String taskId, Code code, String message, long queuePosition) {
        this.taskId = taskId;
        this.code = code;
        this.message = message;
        this.queuePosition = queuePosition;
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }
    /** Returns the kind of reason. */
    public Code getCode() { return code; }
    /** Returns the reason in words, with the figures behind it. */
    public String getMessage() { return message; }
    /** Returns how many tasks are ahead of it in the queue, or -1 when it is not queued. */
    public long getQueuePosition() { return queuePosition; }

    @Override
    public String toString() {
        return code + ": " + message;
    }

    /**
     * Judges why {@code task} waits.
     *
     * @param task           its record
     * @param workers        every registered worker, with its state by the Redis clock
     * @param queuePosition  how many tasks are ahead of it in the queue; -1 when it is not there
     * @param claimScanLimit how many queued tasks a claim looks at
     */
    static PendingReason judge(TaskRecord task, List<WorkerInfo> workers, long queuePosition, int claimScanLimit) {
        String id = task.getTaskId();
        if (task.getState() != TaskState.QUEUED || queuePosition < 0) {
            return new PendingReason(id, Code.NOT_QUEUED, "the task is " + task.getState() + ", not waiting in the queue", -1);
        }
        List<WorkerInfo> live = workers.stream()
                .filter(w -> w.getState() == WorkerState.IDLE || w.getState() == WorkerState.RUNNING).toList();
        if (live.isEmpty()) {
            return new PendingReason(id, Code.NO_LIVE_WORKER, workers.isEmpty() ? "no worker is registered"
                    : "no worker is live; registered: " + describe(workers, w -> w.getWorkerId() + " " + w.getState()),
                    queuePosition);
        }
        Map<String, String> selector = task.getSelector();
        List<WorkerInfo> matching = live.stream()
                .filter(w -> selector.entrySet().stream().allMatch(e -> e.getValue().equals(w.getLabels().get(e.getKey()))))
                .toList();
        if (matching.isEmpty()) {
            return new PendingReason(id, Code.NO_WORKER_MATCHES_SELECTOR, "no live worker has the labels " + selector
                    + " it asks for; live workers' labels: " + describe(live, w -> w.getWorkerId() + " " + w.getLabels()),
                    queuePosition);
        }
        String needs = needs(task);
        List<WorkerInfo> largeEnough = matching.stream().filter(w -> w.getGpuIds().size() >= task.getGpus()
                && w.getCpuSlots() >= task.getCpuSlots() && w.getMemoryBytes() >= task.getMemoryBytes()).toList();
        if (largeEnough.isEmpty()) {
            return new PendingReason(id, Code.NO_WORKER_LARGE_ENOUGH, "it needs " + needs + ", more than any live worker"
                    + (selector.isEmpty() ? "" : " with the labels " + selector) + " has in all: "
                    + describe(matching, w -> w.getWorkerId() + " " + w.getGpuIds().size() + " GPUs, " + w.getCpuSlots()
                            + " CPU slots, " + w.getMemoryBytes() + " bytes"), queuePosition);
        }
        if (queuePosition >= claimScanLimit) {
            return new PendingReason(id, Code.BEHIND_IN_QUEUE, queuePosition + " tasks are ahead of it in the queue, and a"
                    + " claim looks at the first " + claimScanLimit + " (claimScanLimit): it is considered once fewer are"
                    + " ahead. If those ahead cannot run either (see their own reasons), they hold it back", queuePosition);
        }
        List<WorkerInfo> free = largeEnough.stream().filter(w -> w.getFreeGpuIds().size() >= task.getGpus()
                && w.getFreeCpuSlots() >= task.getCpuSlots() && w.getFreeMemoryBytes() >= task.getMemoryBytes()).toList();
        if (free.isEmpty()) {
            return new PendingReason(id, Code.WAITING_FOR_CAPACITY, "it needs " + needs + "; the workers large enough for"
                    + " it have less free now: " + describe(largeEnough, w -> w.getWorkerId() + " " + w.getFreeGpuIds().size()
                            + " GPUs, " + w.getFreeCpuSlots() + " CPU slots, " + w.getFreeMemoryBytes() + " bytes free"),
                    queuePosition);
        }
        return new PendingReason(id, Code.FITS_NOW, describe(free, WorkerInfo::getWorkerId) + " ha"
                + (free.size() == 1 ? "s" : "ve") + " room for it now (" + needs + "), with " + queuePosition
                + " tasks ahead of it in the queue: the next dispatch round should assign it", queuePosition);
    }

    private static String needs(TaskRecord task) {
        return task.getGpus() + " GPUs, " + task.getCpuSlots() + " CPU slots, " + task.getMemoryBytes() + " bytes";
    }

    /** Lists up to 10 workers, then how many more. */
    private static String describe(List<WorkerInfo> workers, java.util.function.Function<WorkerInfo, String> each) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < Math.min(10, workers.size()); i++) {
            parts.add(each.apply(workers.get(i)));
        }
        String listed = parts.stream().collect(Collectors.joining("; "));
        return workers.size() > 10 ? listed + "; and " + (workers.size() - 10) + " more" : listed;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PendingReason p && p.taskId.equals(taskId) && p.code == code && p.message.equals(message)
                && p.queuePosition == queuePosition;
    }

    @Override
    public int hashCode() {
        return Objects.hash(taskId, code, message, queuePosition);
    }
}
