package io.rlscheduler.worker;

import io.rlscheduler.core.SchedulerException;

/** An attempt could not be started: its script is missing or outside the script roots, or the process failed to spawn. */
public final class TaskLaunchException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong, naming the task and the cause
     * @param cause   the underlying failure, or null
     */
    public TaskLaunchException(String message, Throwable cause) {
        super(message, false, cause);
    }
}
