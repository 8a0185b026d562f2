package io.rlscheduler.core.internal;

import java.util.List;

/**
 * A task claimed for a worker: what the worker must run, under which epoch, on which GPUs. Immutable.
 */
public final class Assignment {

    private final String taskId;
    private final long epoch;
    private final int attempt;
    private final List<Integer> gpuIds;
    private final int cpuSlots;
    private final long memoryBytes;
    private final String specJson;

    Assignment(String taskId, long epoch, int attempt, List<Integer> gpuIds, int cpuSlots, long memoryBytes, String specJson) {
        this.taskId = taskId;
        this.epoch = epoch;
        this.attempt = attempt;
        this.gpuIds = java.util.List.copyOf(gpuIds);
        this.cpuSlots = cpuSlots;
        this.memoryBytes = memoryBytes;
        this.specJson = specJson;
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the fencing epoch of this assignment; every report about it must carry it. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the attempt number, 1 for the first assignment. */
    public int getAttempt() {
        return attempt;
    }

    /** Returns the exact GPU ids reserved for it, ascending; unmodifiable. */
    public List<Integer> getGpuIds() {
        return gpuIds;
    }

    /** Returns the CPU slots reserved for it. */
    public int getCpuSlots() {
        return cpuSlots;
    }

    /** Returns the memory reserved for it, in bytes. */
    public long getMemoryBytes() {
        return memoryBytes;
    }

    /** Returns the task's opaque spec, as submitted. */
    public String getSpecJson() {
        return specJson;
    }

    @Override
    public String toString() {
        return "Assignment{" + "taskId=" + taskId + ", " + "epoch=" + epoch + ", " + "attempt=" + attempt + ", " + "gpuIds=" + gpuIds + ", " + "cpuSlots=" + cpuSlots + ", " + "memoryBytes=" + memoryBytes + ", " + "specJson=" + specJson + '}';
    }
}
