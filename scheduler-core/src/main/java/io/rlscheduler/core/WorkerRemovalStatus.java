package io.rlscheduler.core;

/** What a worker removal ({@code LeaseCore#removeWorker}) did. */
public enum WorkerRemovalStatus {
    /** The worker is forgotten: its record, liveness entry, reservations and its shape's count are gone. */
    REMOVED,
    /** No worker of that id is registered (never was, or already removed). */
    UNKNOWN_WORKER,
    /** Its liveness lease is still valid: the worker is alive, and nothing was changed. */
    LIVE,
    /** It still holds tasks at their current epoch; nothing was changed. They are taken back when their leases run out. */
    HOLDS_TASKS;
}
