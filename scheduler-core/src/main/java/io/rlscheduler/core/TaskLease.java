package io.rlscheduler.core;

/**
 * A task id with the fencing epoch of one assignment of it. Immutable.
 */
public final class TaskLease {

    private final String taskId;
    private final long epoch;

    /** Creates an instance; see the getters for what each argument means. */
    public TaskLease(String taskId, long epoch) {
        this.taskId = taskId;
        this.epoch = epoch;
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the fencing epoch of the assignment. */
    public long getEpoch() {
        return epoch;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TaskLease other && other.epoch == epoch && other.taskId.equals(taskId);
    }

    @Override
    public int hashCode() {
        return taskId.hashCode() * 31 + Long.hashCode(epoch);
    }

    @Override
    public String toString() {
        return "TaskLease{" + "taskId=" + taskId + ", " + "epoch=" + epoch + '}';
    }
}
