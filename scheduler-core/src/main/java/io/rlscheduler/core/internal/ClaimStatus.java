package io.rlscheduler.core.internal;

/** Whether a worker could claim. */
public enum ClaimStatus {
    /** The worker is live; assignments were made if any task fit. */
    OK,
    /** The worker never registered. */
    UNKNOWN_WORKER,
    /** The worker id is registered by another session (process start). */
    WRONG_SESSION,
    /** The worker's liveness lease has expired; it must heartbeat first. */
    NOT_LIVE,
    /** The claiming master does not hold the leadership lease at the epoch it gave; nothing was assigned. */
    NOT_LEADER;
}
