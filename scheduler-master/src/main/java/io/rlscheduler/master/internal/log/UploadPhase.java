package io.rlscheduler.master.internal.log;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The phase of one ended log's upload into the artifact store, with the one table of legal moves.
 * {@link LogUploads} holds it per task and changes it only through {@link #moveTo}.
 *
 * <pre>
 *   QUEUED --an upload thread takes it--> SENDING --stored--> STORED
 *                                          |   |
 *          the log ended again meanwhile --+   +--the store refused--> BACKING_OFF --its time is up--> QUEUED
 *                                          v                              ^
 *                                    SENDING_STALE --stored--> QUEUED     |
 *                                          +---------the store refused----+
 * </pre>
 *
 * The file is read when it is sent, so a log that ends again while its upload is queued or backs
 * off needs no move: the send that comes takes the newer file. STORED is final: a later end of
 * the same log starts a new upload.
 */
enum UploadPhase {
    /** Waiting for an upload thread. */
    QUEUED,
    /** Its file is being sent. */
    SENDING,
    /** Its file is being sent, and the log ended again meanwhile: it is sent once more afterwards. */
    SENDING_STALE,
    /** The store refused the last send: it waits out its backoff, then is queued again. */
    BACKING_OFF,
    /** The store holds the file as it was when it was last sent; nothing more to do. */
    STORED;

    private Set<UploadPhase> next;

    static {
        QUEUED.next = EnumSet.of(SENDING);
        SENDING.next = EnumSet.of(STORED, SENDING_STALE, BACKING_OFF);
        SENDING_STALE.next = EnumSet.of(QUEUED, BACKING_OFF);
        BACKING_OFF.next = EnumSet.of(QUEUED);
        STORED.next = EnumSet.noneOf(UploadPhase.class);
    }

    /** Returns whether an upload may move from this phase to {@code target}. */
    boolean canMoveTo(UploadPhase target) {
        return next.contains(target);
    }

    /** Returns the phases an upload may move to from this one; unmodifiable. */
    Set<UploadPhase> nextPhases() {
        return Collections.unmodifiableSet(next);
    }

    /**
     * Returns the phase an upload in this phase moves to when its log ends again: SENDING_STALE
     * from SENDING (the file being sent is already old), else this one (the coming send reads the
     * newer file). Not for STORED, whose upload is over.
     */
    UploadPhase endedAgain() {
        if (this == STORED) {
            throw new IllegalStateException("a stored upload is over; a new end starts a new upload");
        }
        return this == SENDING ? SENDING_STALE : this;
    }

    /**
     * Checks a move: the only way an upload's phase changes.
     *
     * @param target the phase to move to
     * @return {@code target}
     * @throws IllegalStateException if the table does not allow the move
     */
    UploadPhase moveTo(UploadPhase target) {
        if (!canMoveTo(target)) {
            throw new IllegalStateException("a log upload cannot move from " + this + " to " + target);
        }
        return target;
    }
}
