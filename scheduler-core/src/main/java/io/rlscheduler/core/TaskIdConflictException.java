package io.rlscheduler.core;

/**
 * A submission used the id of an existing task with a different spec: different parameters,
 * script, resources or limits. Nothing was changed; the existing task keeps its own spec. Not
 * retryable: submit under a new id, or the same spec to get the existing task back.
 */
public final class TaskIdConflictException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String taskId;
    private final String difference;

    /**
     * Creates the exception.
     *
     * @param taskId     the id submitted again
     * @param difference what differs, e.g. {@code "parameters.lr: existing 0.1, submitted 0.2"}
     */
    public TaskIdConflictException(String taskId, String difference) {
        super("task '" + taskId + "' exists with a different spec (" + difference + "); nothing was changed");
        this.taskId = taskId;
        this.difference = difference;
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns what differs between the existing task and the submission. */
    public String getDifference() {
        return difference;
    }
}
