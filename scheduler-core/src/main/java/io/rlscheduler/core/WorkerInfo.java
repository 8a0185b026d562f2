package io.rlscheduler.core;

import java.util.List;
import java.util.Map;

/**
 * A worker as the core sees it, with its state derived by the Redis clock. Immutable.
 */
public final class WorkerInfo {

    private final String workerId;
    private final String sessionId;
    private final Map<String, String> labels;
    private final WorkerState state;
    private final int cpuSlots;
    private final long memoryBytes;
    private final List<Integer> gpuIds;
    private final int freeCpuSlots;
    private final long freeMemoryBytes;
    private final List<Integer> freeGpuIds;
    private final List<TaskLease> tasks;
    private final long lastHeartbeatMillis;
    private final long livenessDeadlineMillis;

    WorkerInfo(String workerId, String sessionId, Map<String, String> labels, WorkerState state, int cpuSlots, long memoryBytes, List<Integer> gpuIds, int freeCpuSlots, long freeMemoryBytes, List<Integer> freeGpuIds, List<TaskLease> tasks, long lastHeartbeatMillis, long livenessDeadlineMillis) {
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.labels = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(labels));
        this.state = state;
        this.cpuSlots = cpuSlots;
        this.memoryBytes = memoryBytes;
        this.gpuIds = java.util.List.copyOf(gpuIds);
        this.freeCpuSlots = freeCpuSlots;
        this.freeMemoryBytes = freeMemoryBytes;
        this.freeGpuIds = java.util.List.copyOf(freeGpuIds);
        this.tasks = java.util.List.copyOf(tasks);
        this.lastHeartbeatMillis = lastHeartbeatMillis;
        this.livenessDeadlineMillis = livenessDeadlineMillis;
    }

    /** Returns the worker id. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns the session of its current process. */
    public String getSessionId() {
        return sessionId;
    }

    /** Returns its labels; unmodifiable. */
    public Map<String, String> getLabels() {
        return labels;
    }

    /** Returns its derived state. */
    public WorkerState getState() {
        return state;
    }

    /** Returns CPU slots offered. */
    public int getCpuSlots() {
        return cpuSlots;
    }

    /** Returns memory offered, in bytes. */
    public long getMemoryBytes() {
        return memoryBytes;
    }

    /** Returns GPU ids offered. */
    public List<Integer> getGpuIds() {
        return gpuIds;
    }

    /** Returns CPU slots not reserved. */
    public int getFreeCpuSlots() {
        return freeCpuSlots;
    }

    /** Returns memory not reserved, in bytes. */
    public long getFreeMemoryBytes() {
        return freeMemoryBytes;
    }

    /** Returns GPU ids not reserved. */
    public List<Integer> getFreeGpuIds() {
        return freeGpuIds;
    }

    /** Returns tasks it holds, with their epochs. */
    public List<TaskLease> getTasks() {
        return tasks;
    }

    /** Returns when it last registered or heartbeat, ms by the Redis clock. */
    public long getLastHeartbeatMillis() {
        return lastHeartbeatMillis;
    }

    /** Returns when its liveness lease ends, ms by the Redis clock. */
    public long getLivenessDeadlineMillis() {
        return livenessDeadlineMillis;
    }

    @Override
    public String toString() {
        return "WorkerInfo{" + "workerId=" + workerId + ", " + "sessionId=" + sessionId + ", " + "labels=" + labels + ", " + "state=" + state + ", " + "cpuSlots=" + cpuSlots + ", " + "memoryBytes=" + memoryBytes + ", " + "gpuIds=" + gpuIds + ", " + "freeCpuSlots=" + freeCpuSlots + ", " + "freeMemoryBytes=" + freeMemoryBytes + ", " + "freeGpuIds=" + freeGpuIds + ", " + "tasks=" + tasks + ", " + "lastHeartbeatMillis=" + lastHeartbeatMillis + ", " + "livenessDeadlineMillis=" + livenessDeadlineMillis + '}';
    }
}
