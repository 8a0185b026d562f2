package io.rlscheduler.core;

import java.util.List;

/** The answer of {@code LeaseCore#removeWorker}. Immutable. */
public final class WorkerRemoval {

    private final String workerId;
    private final WorkerRemovalStatus status;
    private final List<String> heldTasks;
    private final long livenessDeadline;

    public WorkerRemoval(String workerId, WorkerRemovalStatus status, List<String> heldTasks, long livenessDeadline) {
        this.workerId = workerId;
        this.status = status;
        this.heldTasks = List.copyOf(heldTasks);
        this.livenessDeadline = livenessDeadline;
    }

    /** Returns the worker asked about. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns what the removal did. */
    public WorkerRemovalStatus getStatus() {
        return status;
    }

    /** Returns whether the worker was removed. */
    public boolean isRemoved() {
        return status == WorkerRemovalStatus.REMOVED;
    }

    /** With {@link WorkerRemovalStatus#HOLDS_TASKS}: the tasks it holds, sorted; otherwise empty. */
    public List<String> getHeldTasks() {
        return heldTasks;
    }

    /** With {@link WorkerRemovalStatus#LIVE}: when its liveness lease runs out (ms, Redis clock); otherwise 0. */
    public long getLivenessDeadline() {
        return livenessDeadline;
    }

    @Override
    public String toString() {
        return switch (status) {
            case REMOVED -> "worker " + workerId + " removed";
            case UNKNOWN_WORKER -> "worker " + workerId + " is not registered";
            case LIVE -> "worker " + workerId + " is live (its liveness lease runs until " + livenessDeadline
                    + " ms, Redis clock): only a worker gone for good can be removed";
            case HOLDS_TASKS -> "worker " + workerId + " still holds " + heldTasks + ": they are taken back when their"
                    + " leases run out, and it can be removed then";
        };
    }
}
