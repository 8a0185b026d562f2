package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskState;

/**
 * The answer to a cancel. Immutable.
 */
public final class CancelResult {

    private final CancelStatus status;
    private final String workerId;
    private final long epoch;
    private final TaskState state;

    CancelResult(CancelStatus status, String workerId, long epoch, TaskState state) {
        this.status = status;
        this.workerId = workerId;
        this.epoch = epoch;
        this.state = state;
    }

    /** Returns what happened. */
    public CancelStatus getStatus() {
        return status;
    }

    /** Returns with CANCEL_REQUESTED: the worker that must stop the task. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns with CANCEL_REQUESTED: the epoch of the attempt to stop. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the task's state after the call, or null. */
    public TaskState getState() {
        return state;
    }

    @Override
    public String toString() {
        return "CancelResult{" + "status=" + status + ", " + "workerId=" + workerId + ", " + "epoch=" + epoch + ", " + "state=" + state + '}';
    }
}
