package io.rlscheduler.core;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The states of an attempt's outputs record, with its one table of legal moves. The same table
 * is enforced by {@code lua/outputs.lua}, so Java and Redis cannot disagree.
 *
 * <pre>
 *   attempt's end recorded
 *            |
 *            v     files, then manifest stored
 *         PENDING ------------------------------> COMPLETE | INCOMPLETE
 *          |   ^
 *          +---+  the store is down: why it waits
 * </pre>
 *
 * An attempt whose end its worker did not record (fenced, or its worker stopping) has no PENDING
 * record: its record is written once, at the end of its upload, if it still holds its task.
 */
public enum OutputsState {
    /** The attempt ended; its outputs are on their way to the store, or wait for the store to be back. */
    PENDING,
    /** Every regular file of the run directory is in the store, and the manifest after them. */
    COMPLETE,
    /**
     * The manifest and the files that could be stored are in the store; some files are not (a name
     * that cannot be stored, a file that could not be read, a limit): the record says which and why.
     */
    INCOMPLETE;

    private Set<OutputsState> next;

    static {
        PENDING.next = EnumSet.of(PENDING, COMPLETE, INCOMPLETE);
        COMPLETE.next = EnumSet.noneOf(OutputsState.class);
        INCOMPLETE.next = EnumSet.noneOf(OutputsState.class);
    }

    /** Returns whether no move leaves this state: the upload is over. */
    public boolean isFinal() {
        return next.isEmpty();
    }

    /** Returns whether a record may move from this state to {@code target}. */
    public boolean canMoveTo(OutputsState target) {
        return next.contains(target);
    }

    /** Returns the states a record may move to from this one; unmodifiable. */
    public Set<OutputsState> getNextStates() {
        return Collections.unmodifiableSet(next);
    }
}
