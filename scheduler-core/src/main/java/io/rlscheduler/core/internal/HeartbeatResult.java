package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskLease;
import java.util.List;

/**
 * The answer to a heartbeat. Immutable.
 */
public final class HeartbeatResult {

    private final HeartbeatStatus status;
    private final int renewedTasks;
    private final List<TaskLease> revokedTasks;
    private final List<TaskLease> cancelRequested;
    private final long livenessDeadlineMillis;

    HeartbeatResult(HeartbeatStatus status, int renewedTasks, List<TaskLease> revokedTasks, List<TaskLease> cancelRequested, long livenessDeadlineMillis) {
        this.status = status;
        this.renewedTasks = renewedTasks;
        this.revokedTasks = java.util.List.copyOf(revokedTasks);
        this.cancelRequested = java.util.List.copyOf(cancelRequested);
        this.livenessDeadlineMillis = livenessDeadlineMillis;
    }

    /** Returns whether the heartbeat was accepted. */
    public HeartbeatStatus getStatus() {
        return status;
    }

    /** Returns how many reported tasks are still held: RUNNING leases renewed, ASSIGNED tasks keeping their ack deadline. */
    public int getRenewedTasks() {
        return renewedTasks;
    }

    /** Returns reported tasks this worker no longer holds at that epoch: it must stop them. */
    public List<TaskLease> getRevokedTasks() {
        return revokedTasks;
    }

    /** Returns held tasks whose cancel was requested: the worker must stop them. */
    public List<TaskLease> getCancelRequested() {
        return cancelRequested;
    }

    /** Returns the new liveness deadline, ms by the Redis clock; 0 when not accepted. */
    public long getLivenessDeadlineMillis() {
        return livenessDeadlineMillis;
    }

    @Override
    public String toString() {
        return "HeartbeatResult{" + "status=" + status + ", " + "renewedTasks=" + renewedTasks + ", " + "revokedTasks=" + revokedTasks + ", " + "cancelRequested=" + cancelRequested + ", " + "livenessDeadlineMillis=" + livenessDeadlineMillis + '}';
    }
}
