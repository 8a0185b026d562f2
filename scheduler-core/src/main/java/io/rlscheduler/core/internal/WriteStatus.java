package io.rlscheduler.core.internal;

/** What a fenced worker-side write did. */
public enum WriteStatus {
    /** The write changed the task. */
    APPLIED,
    /** The same write was already applied; nothing changed (a replay). */
    DUPLICATE,
    /** The epoch is not the task's current assignment; nothing changed and the caller must stop its attempt. */
    STALE,
    /** The task is held by another session of the worker; nothing changed. */
    WRONG_SESSION,
    /** The task's state does not allow the write; nothing changed. */
    WRONG_STATE,
    /** No such task; nothing changed. */
    UNKNOWN_TASK;
}
