package io.rlscheduler.master;

import java.util.List;
import java.util.Objects;

/**
 * What a worker connected to this master last said of its machine in a heartbeat: processors,
 * load, memory, and each GPU's memory and utilisation (as nvidia-smi reads them), with the tasks
 * it runs. Part of {@link HealthSnapshot#getWorkerUsage()}; the scheduling state of every
 * registered worker (free slots, reservations, liveness) is {@link SchedulerMaster#listWorkers()}.
 * Immutable.
 */
public final class WorkerUsage {

    /** One GPU of the machine. Immutable. */
    public static final class Gpu {
        private final int index;
        private final String uuid;
        private final String name;
        private final long memoryTotalBytes;
        private final long memoryUsedBytes;
        private final int utilizationPercent;

        Gpu(int index, String uuid, String name, long memoryTotalBytes, long memoryUsedBytes, int utilizationPercent) {
            this.index = index;
            this.uuid = uuid;
            this.name = name;
            this.memoryTotalBytes = memoryTotalBytes;
            this.memoryUsedBytes = memoryUsedBytes;
            this.utilizationPercent = utilizationPercent;
        }

        /** Returns the GPU's index, as {@code CUDA_VISIBLE_DEVICES} names it. */
        public int getIndex() { return index; }
        /** Returns the GPU's UUID. */
        public String getUuid() { return uuid; }
        /** Returns the GPU's model name. */
        public String getName() { return name; }
        /** Returns the GPU's memory, in bytes. */
        public long getMemoryTotalBytes() { return memoryTotalBytes; }
        /** Returns the GPU memory in use (by any process), in bytes. */
        public long getMemoryUsedBytes() { return memoryUsedBytes; }
        /** Returns the GPU's utilisation, 0 to 100 percent. */
        public int getUtilizationPercent() { return utilizationPercent; }

        @Override
        public String toString() {
            return "GPU " + index + " " + name + " " + memoryUsedBytes / (1 << 20) + "/" + memoryTotalBytes / (1 << 20)
                    + " MiB " + utilizationPercent + "%";
        }
    }

    private final String workerId;
    private final String sessionId;
    private final long receivedAtMillis;
    private final int cpuCount;
    private final int cpuSlots;
    private final double cpuLoad;
    private final long memoryTotalBytes;
    private final long memoryUsedBytes;
    private final List<Gpu> gpus;
    private final List<String> runningTaskIds;

    WorkerUsage(String workerId, String sessionId, long receivedAtMillis, int cpuCount, int cpuSlots, double cpuLoad,
                long memoryTotalBytes, long memoryUsedBytes, List<Gpu> gpus, List<String> runningTaskIds) {
        this.workerId = Objects.requireNonNull(workerId, "workerId");
        this.sessionId = sessionId;
        this.receivedAtMillis = receivedAtMillis;
        this.cpuCount = cpuCount;
        this.cpuSlots = cpuSlots;
        this.cpuLoad = cpuLoad;
        this.memoryTotalBytes = memoryTotalBytes;
        this.memoryUsedBytes = memoryUsedBytes;
        this.gpus = List.copyOf(gpus);
        this.runningTaskIds = List.copyOf(runningTaskIds);
    }

    /** Returns the worker id. */
    public String getWorkerId() { return workerId; }
    /** Returns the session of the worker's process. */
    public String getSessionId() { return sessionId; }
    /** Returns when this master received the heartbeat (its own clock, ms since the epoch). */
    public long getReceivedAtMillis() { return receivedAtMillis; }
    /** Returns the machine's logical processors. */
    public int getCpuCount() { return cpuCount; }
    /** Returns the CPU slots the worker offers to tasks. */
    public int getCpuSlots() { return cpuSlots; }
    /** Returns the machine's one-minute load average. */
    public double getCpuLoad() { return cpuLoad; }
    /** Returns the machine's memory, in bytes. */
    public long getMemoryTotalBytes() { return memoryTotalBytes; }
    /** Returns the machine's memory in use, in bytes. */
    public long getMemoryUsedBytes() { return memoryUsedBytes; }
    /** Returns the machine's GPUs, by index; unmodifiable, empty without nvidia-smi. */
    public List<Gpu> getGpus() { return gpus; }
    /** Returns the tasks the worker said it runs; unmodifiable. */
    public List<String> getRunningTaskIds() { return runningTaskIds; }

    @Override
    public String toString() {
        return "WorkerUsage{" + workerId + ", load " + cpuLoad + " of " + cpuCount + " CPUs, memory "
                + memoryUsedBytes / (1 << 20) + "/" + memoryTotalBytes / (1 << 20) + " MiB, " + gpus + ", running "
                + runningTaskIds + '}';
    }
}
