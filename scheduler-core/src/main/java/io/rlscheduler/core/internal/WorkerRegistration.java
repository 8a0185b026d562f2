package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskIds;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A worker process announcing itself: its id, the session of this process start, its labels and
 * the resources it offers. Immutable and thread-safe.
 */
public final class WorkerRegistration {

    private final String workerId;
    private final String sessionId;
    private final Map<String, String> labels;
    private final int cpuSlots;
    private final long memoryBytes;
    private final List<Integer> gpuIds;

    /**
     * Creates a registration.
     *
     * @param workerId    the worker's stable id (see {@link TaskIds})
     * @param sessionId   an id new for every start of the worker process (see {@link TaskIds})
     * @param labels      labels matched against task selectors; must not be null
     * @param cpuSlots    CPU slots offered, at least 1
     * @param memoryBytes memory offered in bytes, 0 to {@link TaskDefinition#MAX_MEMORY_BYTES}
     * @param gpuIds      GPU ids offered, each 0 to 1023, no duplicates; must not be null
     */
    public WorkerRegistration(String workerId, String sessionId, Map<String, String> labels,
                              int cpuSlots, long memoryBytes, List<Integer> gpuIds) {
        this.workerId = TaskIds.require(workerId, "worker id");
        this.sessionId = TaskIds.require(sessionId, "session id");
        this.labels = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(labels, "labels")));
        if (cpuSlots < 1) {
            throw new IllegalArgumentException("cpuSlots must be at least 1, was " + cpuSlots);
        }
        if (memoryBytes < 0 || memoryBytes > TaskDefinition.MAX_MEMORY_BYTES) {
            throw new IllegalArgumentException("memoryBytes must be between 0 and " + TaskDefinition.MAX_MEMORY_BYTES
                    + ", was " + memoryBytes);
        }
        requireValidGpuIds(gpuIds);
        this.cpuSlots = cpuSlots;
        this.memoryBytes = memoryBytes;
        this.gpuIds = List.copyOf(new TreeSet<>(gpuIds));
    }

    /**
     * Checks GPU ids a worker offers: distinct, each 0 to 1023.
     *
     * @return the ids
     * @throws IllegalArgumentException if one is null, out of range or repeated
     */
    public static List<Integer> requireValidGpuIds(List<Integer> gpuIds) {
        Objects.requireNonNull(gpuIds, "gpuIds");
        if (gpuIds.stream().anyMatch(g -> g == null || g < 0 || g > 1023) || new TreeSet<>(gpuIds).size() != gpuIds.size()) {
            throw new IllegalArgumentException("gpuIds must be distinct numbers from 0 to 1023, was " + gpuIds);
        }
        return gpuIds;
    }

    /** Returns the worker id. */
    public String getWorkerId() { return workerId; }
    /** Returns the session id of this process start. */
    public String getSessionId() { return sessionId; }
    /** Returns the labels; unmodifiable. */
    public Map<String, String> getLabels() { return labels; }
    /** Returns the CPU slots offered. */
    public int getCpuSlots() { return cpuSlots; }
    /** Returns the memory offered, in bytes. */
    public long getMemoryBytes() { return memoryBytes; }
    /** Returns the GPU ids offered, ascending; unmodifiable. */
    public List<Integer> getGpuIds() { return gpuIds; }
}
