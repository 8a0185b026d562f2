package io.rlscheduler.master;

import java.util.List;
import java.util.Objects;

/**
 * What a worker connected to this master last said of its machine in a heartbeat: processors,
 * load, memory, and each GPU's memory and utilisation (as nvidia-smi reads them), with the
 * attempts it runs and how many lines each has printed so far. Part of {@link HealthSnapshot#getWorkerUsage()}; the scheduling state of every
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

    /** One attempt the worker runs. Immutable. */
    public static final class Running {
        private final String taskId;
        private final long epoch;
        private final int attempt;
        private final long linesPrinted;

        Running(String taskId, long epoch, int attempt, long linesPrinted) {
            this.taskId = taskId;
            this.epoch = epoch;
            this.attempt = attempt;
            this.linesPrinted = linesPrinted;
        }

        /** Returns the task id. */
        public String getTaskId() { return taskId; }
        /** Returns the attempt's lease epoch. */
        public long getEpoch() { return epoch; }
        /** Returns the attempt's number, from 1. */
        public int getAttempt() { return attempt; }
        /** Returns the output lines the attempt has printed so far (the sequence number of its last line). */
        public long getLinesPrinted() { return linesPrinted; }

        @Override
        public String toString() {
            return taskId + " attempt " + attempt + " (" + linesPrinted + " lines)";
        }
    }

    private final String workerId;
    private final String sessionId;
    private final long receivedAtMillis;
    private final long sentAtMillis;
    private final int cpuCount;
    private final int cpuSlots;
    private final double cpuLoad;
    private final long memoryTotalBytes;
    private final long memoryUsedBytes;
    private final List<Gpu> gpus;
    private final List<Running> running;

    WorkerUsage(String workerId, String sessionId, long receivedAtMillis, long sentAtMillis, int cpuCount, int cpuSlots,
                double cpuLoad, long memoryTotalBytes, long memoryUsedBytes, List<Gpu> gpus, List<Running> running) {
        this.workerId = Objects.requireNonNull(workerId, "workerId");
        this.sessionId = sessionId;
        this.receivedAtMillis = receivedAtMillis;
        this.sentAtMillis = sentAtMillis;
        this.cpuCount = cpuCount;
        this.cpuSlots = cpuSlots;
        this.cpuLoad = cpuLoad;
        this.memoryTotalBytes = memoryTotalBytes;
        this.memoryUsedBytes = memoryUsedBytes;
        this.gpus = List.copyOf(gpus);
        this.running = List.copyOf(running);
    }

    /** Returns the worker id. */
    public String getWorkerId() { return workerId; }
    /** Returns the session of the worker's process. */
    public String getSessionId() { return sessionId; }
    /** Returns when this master received the heartbeat (its own clock, ms since the epoch). */
    public long getReceivedAtMillis() { return receivedAtMillis; }
    /**
     * Returns when the worker sent the heartbeat, by the worker's own clock (ms since the epoch):
     * against {@link #getReceivedAtMillis()} it shows the worker's clock skew plus the delay.
     * Leases never use it; they run on Redis's clock.
     */
    public long getSentAtMillis() { return sentAtMillis; }
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
    /** Returns the attempts the worker said it runs, with the lines each has printed; unmodifiable. */
    public List<Running> getRunning() { return running; }

    @Override
    public String toString() {
        return "WorkerUsage{" + workerId + ", load " + cpuLoad + " of " + cpuCount + " CPUs, memory "
                + memoryUsedBytes / (1 << 20) + "/" + memoryTotalBytes / (1 << 20) + " MiB, " + gpus + ", running "
                + running + '}';
    }
}
