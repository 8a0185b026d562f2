package io.rlscheduler.core;

/**
 * One entry of a task's state history. Immutable.
 */
public final class TaskTransition {

    private final long atMillis;
    private final TaskState from;
    private final TaskState to;
    private final long epoch;
    private final String workerId;
    private final String reason;

    TaskTransition(long atMillis, TaskState from, TaskState to, long epoch, String workerId, String reason) {
        this.atMillis = atMillis;
        this.from = from;
        this.to = to;
        this.epoch = epoch;
        this.workerId = workerId;
        this.reason = reason;
    }

    /** Returns when it happened, in ms since the epoch by the Redis clock. */
    public long getAtMillis() {
        return atMillis;
    }

    /** Returns the state before, or null for the submission. */
    public TaskState getFrom() {
        return from;
    }

    /** Returns the state after. */
    public TaskState getTo() {
        return to;
    }

    /** Returns the task's fencing epoch at the time (0 before its first assignment). */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the worker holding the task at the time, or the empty string. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns why it happened. */
    public String getReason() {
        return reason;
    }

    @Override
    public String toString() {
        return "TaskTransition{" + "atMillis=" + atMillis + ", " + "from=" + from + ", " + "to=" + to + ", " + "epoch=" + epoch + ", " + "workerId=" + workerId + ", " + "reason=" + reason + '}';
    }
}
