package io.rlscheduler.core.internal;

import java.util.List;

/**
 * The answer to a claim: the assignments made, or why none could be. Immutable.
 */
public final class ClaimResult {

    private final ClaimStatus status;
    private final List<Assignment> assignments;
    private final long queued;

    ClaimResult(ClaimStatus status, List<Assignment> assignments, long queued) {
        this.status = status;
        this.assignments = java.util.List.copyOf(assignments);
        this.queued = queued;
    }

    /** Returns whether the worker could claim at all. */
    public ClaimStatus getStatus() {
        return status;
    }

    /** Returns the tasks assigned, in queue order; empty when none fit or status is not OK. */
    public List<Assignment> getAssignments() {
        return assignments;
    }

    /**
     * Returns how many tasks were left in the queue right after this claim (by the Redis clock of
     * the same script run), or -1 when the claim did not run (status not OK).
     */
    public long getQueued() {
        return queued;
    }

    @Override
    public String toString() {
        return "ClaimResult{" + "status=" + status + ", " + "assignments=" + assignments + ", queued=" + queued + '}';
    }
}
