package io.rlscheduler.core;

import java.util.List;

/**
 * One page of a task listing. Immutable.
 */
public final class TaskPage {

    private final List<TaskRecord> tasks;
    private final long total;

    TaskPage(List<TaskRecord> tasks, long total) {
        this.tasks = java.util.List.copyOf(tasks);
        this.total = total;
    }

    /** Returns the tasks of this page, in submission order. */
    public List<TaskRecord> getTasks() {
        return tasks;
    }

    /** Returns how many tasks match in all. */
    public long getTotal() {
        return total;
    }

    @Override
    public String toString() {
        return "TaskPage{" + "tasks=" + tasks + ", " + "total=" + total + '}';
    }
}
