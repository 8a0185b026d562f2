package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskState;

/**
 * The answer to a fenced worker-side write (acknowledge, finish). Immutable.
 */
public final class WriteResult {

    private final WriteStatus status;
    private final long currentEpoch;
    private final TaskState currentState;

    WriteResult(WriteStatus status, long currentEpoch, TaskState currentState) {
        this.status = status;
        this.currentEpoch = currentEpoch;
        this.currentState = currentState;
    }

    /** Returns what happened. */
    public WriteStatus getStatus() {
        return status;
    }

    /** Returns the task's current epoch (0 for an unknown task). */
    public long getCurrentEpoch() {
        return currentEpoch;
    }

    /** Returns the task's state after the call, or null for an unknown task. */
    public TaskState getCurrentState() {
        return currentState;
    }

    /** Returns whether the write is recorded: applied now, or found already applied. */
    public boolean isAccepted() {
        return status == WriteStatus.APPLIED || status == WriteStatus.DUPLICATE;
    }

    @Override
    public String toString() {
        return "WriteResult{" + "status=" + status + ", " + "currentEpoch=" + currentEpoch + ", " + "currentState=" + currentState + '}';
    }
}
