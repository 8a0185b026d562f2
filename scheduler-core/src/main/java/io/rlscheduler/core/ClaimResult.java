package io.rlscheduler.core;

import java.util.List;

/**
 * The answer to a claim: the assignments made, or why none could be. Immutable.
 */
public final class ClaimResult {

    private final ClaimStatus status;
    private final List<Assignment> assignments;

    ClaimResult(ClaimStatus status, List<Assignment> assignments) {
        this.status = status;
        this.assignments = java.util.List.copyOf(assignments);
    }

    /** Returns whether the worker could claim at all. */
    public ClaimStatus getStatus() {
        return status;
    }

    /** Returns the tasks assigned, in queue order; empty when none fit or status is not OK. */
    public List<Assignment> getAssignments() {
        return assignments;
    }

    @Override
    public String toString() {
        return "ClaimResult{" + "status=" + status + ", " + "assignments=" + assignments + '}';
    }
}
