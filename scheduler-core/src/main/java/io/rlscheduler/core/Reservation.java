package io.rlscheduler.core;

import java.time.Instant;
import java.util.Objects;

/**
 * A worker kept for a big task that has waited longer than the lab's {@code reserveAfter}: the
 * worker takes no new work that would use the GPUs, CPU slots or memory the task needs, so that
 * the task starts there as soon as the work running on it has freed them. Running work is never
 * stopped for it. An owner has at most one. It ends when the task leaves the queue (started,
 * cancelled) or its worker leaves. Immutable.
 */
public final class Reservation {

    private final String taskId;
    private final String owner;
    private final String workerId;
    private final int gpus;
    private final Instant since;

    public Reservation(String taskId, String owner, String workerId, int gpus, Instant since) {
        this.taskId = Objects.requireNonNull(taskId, "taskId");
        this.owner = Objects.requireNonNull(owner, "owner");
        this.workerId = Objects.requireNonNull(workerId, "workerId");
        this.gpus = gpus;
        this.since = Objects.requireNonNull(since, "since");
    }

    /** Returns the task it is for. */
    public String getTaskId() { return taskId; }
    /** Returns the task's owner. */
    public String getOwner() { return owner; }
    /** Returns the worker kept for it. */
    public String getWorkerId() { return workerId; }
    /** Returns the GPUs the task needs. */
    public int getGpus() { return gpus; }
    /** Returns when the worker was reserved (Redis's clock). */
    public Instant getSince() { return since; }

    @Override
    public String toString() {
        return "Reservation{task=" + taskId + ", owner=" + owner + ", worker=" + workerId + ", gpus=" + gpus
                + ", since=" + since + '}';
    }
}
