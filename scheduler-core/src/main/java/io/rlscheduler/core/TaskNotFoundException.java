package io.rlscheduler.core;

/** No task with the given id exists in this namespace. Not retryable. */
public final class TaskNotFoundException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String taskId;

    /** Creates the exception for {@code taskId}. */
    public TaskNotFoundException(String taskId) {
        super("no task with id '" + taskId + "'");
        this.taskId = taskId;
    }

    /** Returns the id that was not found. */
    public String getTaskId() {
        return taskId;
    }
}
