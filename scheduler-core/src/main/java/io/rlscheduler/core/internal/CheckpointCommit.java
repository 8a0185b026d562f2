package io.rlscheduler.core.internal;

import java.util.List;

/**
 * The answer to a checkpoint commit (checkpoint.lua).
 *
 * @param status  what happened
 * @param id      the committed checkpoint's id (COMMITTED, DUPLICATE), or the newer one already
 *                committed (BEHIND), else ""
 * @param evicted the checkpoints the commit dropped beyond the number kept, newest first: their
 *                objects are the caller's to delete from the store
 * @param currentEpoch the task's current epoch (for the refusals)
 */
public record CheckpointCommit(Status status, String id, List<CheckpointEntry> evicted, long currentEpoch) {

    /** What a commit did. */
    public enum Status {
        /** The pointer moved to this checkpoint. */
        COMMITTED,
        /**
         * This checkpoint is committed already, in the list of kept ones (a replay, whoever holds the
         * task now); nothing changed.
         */
        DUPLICATE,
        /** A newer checkpoint is committed, and this one is not; nothing changed. */
        BEHIND,
        /** The kept checkpoints would exceed the task's byte limit; said in the task record, nothing else changed. */
        TOO_LARGE,
        /** The attempt does not hold the task (another epoch, another worker); nothing changed. */
        STALE,
        /** Another session of the worker holds the task; nothing changed. */
        WRONG_SESSION,
        /** No such task; nothing changed. */
        UNKNOWN_TASK
    }

    /** Returns whether the checkpoint is the task's latest now (committed by this call or before). */
    public boolean isCommitted() {
        return status == Status.COMMITTED || status == Status.DUPLICATE;
    }
}
