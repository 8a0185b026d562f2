package io.rlscheduler.master;

import io.rlscheduler.core.AttemptOutputs;
import java.util.List;
import java.util.Optional;
import io.rlscheduler.core.internal.Json;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import java.util.Collections;
import java.util.Map;

/**
 * How a task ended: its final state, exit code, final metrics, where its last attempt ran, and
 * what of it is in the artifact store as the task ended: the latest committed checkpoint and each
 * attempt's outputs record (whether its run directory's files are all stored, the manifest's key).
 * The outputs upload begins just after the end is recorded, so the last attempt's record may be
 * missing or {@code PENDING} here; {@link TaskHandle#artifacts()} reads them again.
 * The code each attempt ran is not part of it: {@link TaskHandle#provenance()} reads it.
 * Immutable and thread-safe.
 */
public final class TaskResult {


    private final TaskRecord record;
    private final Map<String, Object> finalMetrics;
    private final String latestCheckpoint;
    private final List<AttemptOutputs> outputs;

    TaskResult(TaskRecord record, String latestCheckpoint, List<AttemptOutputs> outputs) {
        this.record = record;
        this.latestCheckpoint = latestCheckpoint;
        this.outputs = List.copyOf(outputs);
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
    /** Returns the id of the task's latest committed checkpoint ({@code e<epoch>-<n>}) when it ended, or empty for none. */
    public Optional<String> getLatestCheckpoint() { return Optional.ofNullable(latestCheckpoint); }
    /** Returns each attempt's outputs record as the task ended (oldest attempt first), the manifest's key in each; unmodifiable. */
    public List<AttemptOutputs> getOutputs() { return outputs; }
    /** Returns the full task record as it was when the task ended. */
    public TaskRecord getRecord() { return record; }

    @Override
    public String toString() {
        return "TaskResult{taskId=" + getTaskId() + ", state=" + getState() + ", exitCode=" + getExitCode()
                + ", finalMetrics=" + finalMetrics + ", worker=" + getWorkerId() + ", attempts=" + getAttempts() + '}';
    }
}
