package io.rlscheduler.worker;

/** Why an attempt was stopped by the worker rather than ending by itself. */
public enum StopReason {
    /** Not stopped: it ended by itself. */
    NONE,
    /** A caller cancelled the task. */
    CANCELLED,
    /** It ran past its timeout. */
    TIMED_OUT,
    /** The worker could no longer renew its task lease, or the lease was revoked (self-fencing). */
    FENCED,
    /** The worker is shutting down. */
    SHUTDOWN
}
