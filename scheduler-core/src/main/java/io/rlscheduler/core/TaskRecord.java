package io.rlscheduler.core;

import io.rlscheduler.core.internal.ValueFactory;
import java.util.List;
import java.util.Map;

/**
 * The durable record of a task: what was submitted (immutable after submission) and everything
 * that happened to it since. Read with {@code LeaseCore#getTask(String)}. Immutable.
 */
public final class TaskRecord {

    static {
        // Gives the internal package this package's value constructors (see ValueFactory).
        ValueFactory.install(new ValueConstructors());
    }

    private final String taskId;
    private final TaskState state;
    private final int priority;
    private final long submitSequence;
    private final int gpus;
    private final int cpuSlots;
    private final long memoryBytes;
    private final Map<String, String> selector;
    private final String owner;
    private final String traceId;
    private final int maxAttempts;
    private final int maxLeaseLosses;
    private final int attempt;
    private final int leaseLosses;
    private final long epoch;
    private final String workerId;
    private final List<Integer> gpuIds;
    private final boolean cancelRequested;
    private final Integer exitCode;
    private final String error;
    private final String finalMetricsJson;
    private final String reason;
    private final long createdAtMillis;
    private final long updatedAtMillis;
    private final long deadlineMillis;
    private final List<TaskTransition> history;
    private final String specJson;
    private final String runDir;
    private final long logLines;
    private final String artifactError;
    private final long logCutAt;

    TaskRecord(String taskId, TaskState state, int priority, long submitSequence, int gpus, int cpuSlots, long memoryBytes, Map<String, String> selector, String owner, String traceId, int maxAttempts, int maxLeaseLosses, int attempt, int leaseLosses, long epoch, String workerId, List<Integer> gpuIds, boolean cancelRequested, Integer exitCode, String error, String finalMetricsJson, String reason, long createdAtMillis, long updatedAtMillis, long deadlineMillis, List<TaskTransition> history, String specJson, String runDir, long logLines, String artifactError, long logCutAt) {
        this.taskId = taskId;
        this.state = state;
        this.priority = priority;
        this.submitSequence = submitSequence;
        this.gpus = gpus;
        this.cpuSlots = cpuSlots;
        this.memoryBytes = memoryBytes;
        this.selector = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(selector));
        this.owner = owner;
        this.traceId = traceId;
        this.maxAttempts = maxAttempts;
        this.maxLeaseLosses = maxLeaseLosses;
        this.attempt = attempt;
        this.leaseLosses = leaseLosses;
        this.epoch = epoch;
        this.workerId = workerId;
        this.gpuIds = java.util.List.copyOf(gpuIds);
        this.cancelRequested = cancelRequested;
        this.exitCode = exitCode;
        this.error = error;
        this.finalMetricsJson = finalMetricsJson;
        this.reason = reason;
        this.createdAtMillis = createdAtMillis;
        this.updatedAtMillis = updatedAtMillis;
        this.deadlineMillis = deadlineMillis;
        this.history = java.util.List.copyOf(history);
        this.specJson = specJson;
        this.runDir = runDir;
        this.logLines = logLines;
        this.artifactError = artifactError;
        this.logCutAt = logCutAt;
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the current state. */
    public TaskState getState() {
        return state;
    }

    /** Returns the priority, 0 to 999. */
    public int getPriority() {
        return priority;
    }

    /** Returns the submission order number. */
    public long getSubmitSequence() {
        return submitSequence;
    }

    /** Returns the GPUs requested. */
    public int getGpus() {
        return gpus;
    }

    /** Returns the CPU slots requested. */
    public int getCpuSlots() {
        return cpuSlots;
    }

    /** Returns the memory requested, in bytes. */
    public long getMemoryBytes() {
        return memoryBytes;
    }

    /** Returns the labels a worker must carry; unmodifiable. */
    public Map<String, String> getSelector() {
        return selector;
    }

    /** Returns the owner (user). */
    public String getOwner() {
        return owner;
    }

    /** Returns the trace id. */
    public String getTraceId() {
        return traceId;
    }

    /** Returns the attempt limit. */
    public int getMaxAttempts() {
        return maxAttempts;
    }

    /** Returns the lease-loss limit. */
    public int getMaxLeaseLosses() {
        return maxLeaseLosses;
    }

    /** Returns the number of assignments so far (the current or last attempt's number). */
    public int getAttempt() {
        return attempt;
    }

    /** Returns how often the task was taken back because its holder lost the lease. */
    public int getLeaseLosses() {
        return leaseLosses;
    }

    /** Returns the fencing epoch of the current or last assignment; 0 before the first. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the worker holding or last finishing the task, or the empty string. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns the GPU ids reserved for the current attempt; empty when none. */
    public List<Integer> getGpuIds() {
        return gpuIds;
    }

    /** Returns whether a cancel is pending for a held task. */
    public boolean isCancelRequested() {
        return cancelRequested;
    }

    /** Returns the exit code of the finished attempt, or null. */
    public Integer getExitCode() {
        return exitCode;
    }

    /** Returns the error message of a failure, or the empty string. */
    public String getError() {
        return error;
    }

    /** Returns the final metrics reported (JSON object), or the empty string. */
    public String getFinalMetricsJson() {
        return finalMetricsJson;
    }

    /** Returns why the task entered its current state. */
    public String getReason() {
        return reason;
    }

    /** Returns when it was submitted, ms by the Redis clock. */
    public long getCreatedAtMillis() {
        return createdAtMillis;
    }

    /** Returns when it last changed, ms by the Redis clock. */
    public long getUpdatedAtMillis() {
        return updatedAtMillis;
    }

    /** Returns the current ack or lease deadline, ms by the Redis clock; 0 when none. */
    public long getDeadlineMillis() {
        return deadlineMillis;
    }

    /** Returns every transition, oldest first. */
    public List<TaskTransition> getHistory() {
        return history;
    }

    /** Returns the opaque spec, exactly as submitted. */
    public String getSpecJson() {
        return specJson;
    }

    /** Returns the run directory of the finished attempt on its worker's machine, or the empty string. */
    public String getRunDir() {
        return runDir;
    }

    /**
     * Returns how many output lines the finished attempt printed, as its worker counted them when
     * it recorded the end (the attempt's last log sequence number; 0 when it printed nothing), or
     * -1 when not known: the task has not finished, it ended without its worker recording the end
     * (failed by the reaper, cancelled while queued), or its worker recorded the end without a count.
     */
    public long getLogLines() {
        return logLines;
    }

    /**
     * Returns why the task's last artifact could not be stored (a checkpoint over the task's
     * size limit, naming the limit), or the empty string. Cleared by the next checkpoint committed.
     */
    public String getArtifactError() {
        return artifactError;
    }

    /**
     * Returns whether a master cut the task's log at its size limit (the master's
     * {@code maxLogBytesPerTask}): the log file keeps the lines up to {@link #getLogCutAt()}
     * bytes and a marker saying so; the task ran on, its later lines were not kept.
     */
    public boolean isLogCut() {
        return logCutAt >= 0;
    }

    /** Returns the bytes the task's log file holds before its cut marker, or -1 when it was not cut. */
    public long getLogCutAt() {
        return logCutAt;
    }

    @Override
    public String toString() {
        return "TaskRecord{" + "taskId=" + taskId + ", " + "state=" + state + ", " + "priority=" + priority + ", " + "submitSequence=" + submitSequence + ", " + "gpus=" + gpus + ", " + "cpuSlots=" + cpuSlots + ", " + "memoryBytes=" + memoryBytes + ", " + "selector=" + selector + ", " + "owner=" + owner + ", " + "traceId=" + traceId + ", " + "maxAttempts=" + maxAttempts + ", " + "maxLeaseLosses=" + maxLeaseLosses + ", " + "attempt=" + attempt + ", " + "leaseLosses=" + leaseLosses + ", " + "epoch=" + epoch + ", " + "workerId=" + workerId + ", " + "gpuIds=" + gpuIds + ", " + "cancelRequested=" + cancelRequested + ", " + "exitCode=" + exitCode + ", " + "error=" + error + ", " + "finalMetricsJson=" + finalMetricsJson + ", " + "reason=" + reason + ", " + "createdAtMillis=" + createdAtMillis + ", " + "updatedAtMillis=" + updatedAtMillis + ", " + "deadlineMillis=" + deadlineMillis + ", " + "history=" + history + ", " + "specJson=" + specJson + ", " + "runDir=" + runDir + ", " + "logLines=" + logLines + ", " + "artifactError=" + artifactError + ", logCutAt=" + logCutAt + '}';
    }
}
