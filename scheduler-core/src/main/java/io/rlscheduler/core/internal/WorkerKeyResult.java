package io.rlscheduler.core.internal;

import java.util.Optional;

/** The answer of issuing or rotating a worker key ({@link WorkerKeyRecords}). Immutable. */
public final class WorkerKeyResult {

    /** What the script did. */
    public enum Status {
        /** The key was stored. */
        OK,
        /** Issue refused: the worker id has a key that is not revoked (rotate it instead). */
        EXISTS,
        /** Rotate refused: no key was issued for the worker id. */
        NO_KEY,
        /** Rotate refused: the worker id is revoked (issue it a new key). */
        REVOKED
    }

    private final Status status;
    private final WorkerKeyRecord key;

    WorkerKeyResult(Status status, WorkerKeyRecord key) {
        this.status = status;
        this.key = key;
    }

    /** Returns what was done. */
    public Status getStatus() { return status; }
    /** Returns the key record after the call (the one that stands in the way, when refused); empty for NO_KEY. */
    public Optional<WorkerKeyRecord> getKey() { return Optional.ofNullable(key); }

    @Override
    public String toString() {
        return "WorkerKeyResult{status=" + status + ", key=" + key + '}';
    }
}
