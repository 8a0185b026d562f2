package io.rlscheduler.core;

/** A task cannot make the requested transition from its current state. Not retryable. */
public final class IllegalTaskStateException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String taskId;
    private final TaskState from;
    private final TaskState to;

    /**
     * Creates the exception.
     *
     * @param taskId the task, or null when checked without one
     * @param from   its current state
     * @param to     the state asked for
     */
    public IllegalTaskStateException(String taskId, TaskState from, TaskState to) {
        super("task " + (taskId == null ? "" : "'" + taskId + "' ") + "cannot move from " + from + " to " + to);
        this.taskId = taskId;
        this.from = from;
        this.to = to;
    }

    /** Returns the task id, or null when the check had none. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the current state. */
    public TaskState getFrom() {
        return from;
    }

    /** Returns the requested state. */
    public TaskState getTo() {
        return to;
    }
}
