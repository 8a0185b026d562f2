package io.rlscheduler.core.internal;

/** What a cancel did. */
public enum CancelStatus {
    /** The task is cancelled (now or already). */
    CANCELLED,
    /** The task is held by a worker; it becomes CANCELLED once the worker has stopped it. */
    CANCEL_REQUESTED,
    /** The task already ended otherwise. */
    WRONG_STATE,
    /** No such task. */
    UNKNOWN_TASK;
}
