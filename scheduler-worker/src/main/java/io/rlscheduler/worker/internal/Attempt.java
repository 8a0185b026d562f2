package io.rlscheduler.worker.internal;

import io.rlscheduler.core.TaskLease;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.worker.StopReason;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.internal.artifacts.CheckpointCommitter;
import java.nio.file.Path;
import java.util.concurrent.ScheduledFuture;

/**
 * The worker's state of one attempt it runs: the assignment, its output buffer and metrics, the
 * running execution, when its lease was last renewed (for self-fencing), and whether it has
 * ended. Fields are guarded by the attempt's monitor or volatile.
 */
public final class Attempt {

    private final ExecuteTask task;
    private final TaskLease lease;
    private final LogBuffer logs;
    private final MetricsCollector metrics;
    private final Path runDir;
    private volatile TaskExecution execution;
    private volatile long lastRenewNanos;
    private volatile StopReason requestedStop = StopReason.NONE;
    private volatile ScheduledFuture<?> timeout;
    private volatile boolean ended;
    private volatile boolean launcherFenced;
    private volatile CheckpointCommitter.Slot checkpoints;

    public Attempt(ExecuteTask task, LogBuffer logs, MetricsCollector metrics, Path runDir) {
        this.task = task;
        this.lease = new TaskLease(task.getTaskId(), task.getEpoch());
        this.logs = logs;
        this.metrics = metrics;
        this.runDir = runDir;
        this.lastRenewNanos = System.nanoTime();
    }

    public ExecuteTask getTask() { return task; }
    public TaskLease getLease() { return lease; }
    public LogBuffer getLogs() { return logs; }
    public MetricsCollector getMetrics() { return metrics; }
    public Path getRunDir() { return runDir; }
    public TaskExecution getExecution() { return execution; }
    public void setExecution(TaskExecution execution) { this.execution = execution; }
    public void renewed(long nanos) { this.lastRenewNanos = nanos; }
    /** Returns the nanoseconds since the attempt's lease was last renewed (or the attempt was taken in). */
    public long unrenewedNanos() { return System.nanoTime() - lastRenewNanos; }
    public StopReason getRequestedStop() { return requestedStop; }
    public ScheduledFuture<?> getTimeout() { return timeout; }
    public void setTimeout(ScheduledFuture<?> timeout) { this.timeout = timeout; }
    public boolean isEnded() { return ended; }
    /** Whether the launcher said it stopped the attempt because keepalives (lease renewals) stopped. */
    public boolean isLauncherFenced() { return launcherFenced; }
    public void setLauncherFenced() { this.launcherFenced = true; }
    public void setEnded() { this.ended = true; }
    /** Returns the attempt's checkpoints, or null where the worker has no artifact store (or before the launch). */
    public CheckpointCommitter.Slot getCheckpoints() { return checkpoints; }
    public void setCheckpoints(CheckpointCommitter.Slot checkpoints) { this.checkpoints = checkpoints; }

    /** Records the first stop reason; returns whether this call set it. */
    public synchronized boolean requestStop(StopReason reason) {
        if (requestedStop != StopReason.NONE || ended) {
            return false;
        }
        requestedStop = reason;
        return true;
    }
}
