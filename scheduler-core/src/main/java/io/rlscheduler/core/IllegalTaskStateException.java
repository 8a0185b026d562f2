package io.rlscheduler.core;

/**
 * A task cannot make the requested transition from its current state: the transition table
 * ({@link TaskState#getNextStates()}, and the same table in the lease scripts) does not allow it.
 * Thrown by {@link TaskState#requireTransitionTo} and by every {@code LeaseCore} call whose script
 * refused a move, in which case nothing of that move was written. Not retryable: the same call
 * meets the same state.
 */
public final class IllegalTaskStateException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String taskId;
    private final TaskState from;
    private final TaskState to;
    private final long epoch;

    /**
     * Creates the exception for a check without a stored task.
     *
     * @param taskId the task, or null when checked without one
     * @param from   its current state
     * @param to     the state asked for
     */
    public IllegalTaskStateException(String taskId, TaskState from, TaskState to) {
        this(taskId, from, to, -1, null);
    }

    /**
     * Creates the exception.
     *
     * @param taskId the task, or null when checked without one
     * @param from   its current state, or null when the stored state is not a {@link TaskState}
     * @param to     the state asked for
     * @param epoch  the task's epoch when the move was refused, or -1 when not known
     * @param cause  the refusal as Redis reported it, or null
     */
    public IllegalTaskStateException(String taskId, TaskState from, TaskState to, long epoch, Throwable cause) {
        super("task " + (taskId == null ? "" : "'" + taskId + "' ") + "cannot move from "
                + (from == null ? "a state that is not a TaskState" : from) + " to " + to
                + (epoch < 0 ? "" : " (epoch " + epoch + ")"), false, cause);
        this.taskId = taskId;
        this.from = from;
        this.to = to;
        this.epoch = epoch;
    }

    /** Returns the task id, or null when the check had none. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the current state, or null when the stored state is not a {@link TaskState}. */
    public TaskState getFrom() {
        return from;
    }

    /** Returns the requested state. */
    public TaskState getTo() {
        return to;
    }

    /** Returns the task's epoch when the move was refused, or -1 when not known. */
    public long getEpoch() {
        return epoch;
    }
}
