package io.rlscheduler.master;

import io.rlscheduler.core.internal.Json;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import java.util.Collections;
import java.util.Map;

/**
 * How a task ended: its final state, exit code, final metrics and where its last attempt ran.
 * The code each attempt ran is not part of it: {@link TaskHandle#provenance()} reads it.
 * Immutable and thread-safe.
 */
public final class TaskResult {


    private final TaskRecord record;
    private final Map<String, Object> finalMetrics;

    TaskResult(TaskRecord record) {
        this.record = record;
        this.finalMetrics = parse(record.getFinalMetricsJson());
    }

    private static Map<String, Object> parse(String json) {
        if (json == null || json.isEmpty()) {
            return Collections.emptyMap();
        }
        try {
            return Collections.unmodifiableMap(Json.map(json));
        } catch (java.io.IOException e) {
            return Collections.emptyMap();
        }
    }

    /** Returns the task id. */
    public String getTaskId() { return record.getTaskId(); }
    /** Returns the final state: SUCCEEDED, FAILED, CANCELLED or TIMED_OUT. */
    public TaskState getState() { return record.getState(); }
    /** Returns whether the task succeeded. */
    public boolean isSucceeded() { return record.getState() == TaskState.SUCCEEDED; }
    /** Returns the exit code of the last attempt, or null if it has none (e.g. cancelled while queued). */
    public Integer getExitCode() { return record.getExitCode(); }
    /** Returns the error message, or the empty string. */
    public String getError() { return record.getError(); }
    /** Returns the latest value of each metric the script printed as {@code RLS_METRIC} lines; unmodifiable. */
    public Map<String, Object> getFinalMetrics() { return finalMetrics; }
    /** Returns the worker of the last attempt, or the empty string. */
    public String getWorkerId() { return record.getWorkerId(); }
    /** Returns the number of attempts made. */
    public int getAttempts() { return record.getAttempt(); }
    /** Returns the last attempt's run directory on its worker's machine, or the empty string. */
    public String getRunDir() { return record.getRunDir(); }
    /** Returns the full task record as it was when the task ended. */
    public TaskRecord getRecord() { return record; }

    @Override
    public String toString() {
        return "TaskResult{taskId=" + getTaskId() + ", state=" + getState() + ", exitCode=" + getExitCode()
                + ", finalMetrics=" + finalMetrics + ", worker=" + getWorkerId() + ", attempts=" + getAttempts() + '}';
    }
}
