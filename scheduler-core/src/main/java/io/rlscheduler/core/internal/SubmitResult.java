package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskRecord;

/**
 * The answer to a submission. Immutable.
 */
public final class SubmitResult {

    private final boolean created;
    private final TaskRecord task;

    SubmitResult(boolean created, TaskRecord task) {
        this.created = created;
        this.task = task;
    }

    /** Returns true if the task was new; false if a task with this id existed and was returned unchanged. */
    public boolean isCreated() {
        return created;
    }

    /** Returns the task's record. */
    public TaskRecord getTask() {
        return task;
    }

    @Override
    public String toString() {
        return "SubmitResult{" + "created=" + created + ", " + "task=" + task + '}';
    }
}
