package io.rlscheduler.master.internal.log;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The phase of a task's current attempt log, with the one table of legal moves.
 * {@link TaskLogState} holds it and changes it only through {@link #moveTo}.
 *
 * <pre>
 *   NONE --start--> RUNNING --end recorded, lines missing--> ENDING --last line written--> ENDED
 *    |                 |                                        |                           ^
 *    |                 +------- abandon, lines not come in time ---+---------------------------+
 *    +-------------------------- abandon, no attempt known ----------------------------------+
 *
 *   RUNNING, ENDING, ENDED --a newer attempt starts--> RUNNING
 *   every phase --the state is read again from the file (recovery)--> NONE
 * </pre>
 *
 * A move to the phase it is in is legal only where it means something: NONE to NONE (the
 * file is read again), RUNNING to RUNNING (a newer attempt replaces one whose end was never
 * heard of), ENDING to ENDING (the end is heard of again, from its event and from the record). An attempt ends once.
 */
enum LogPhase {
    /** No attempt is known: none started here, and the file (if any) holds no attempt marker. */
    NONE,
    /** An attempt is started; its end is not known. Its lines are written as they come. */
    RUNNING,
    /** The attempt's end is known with its last sequence number; lines up to it are still missing. */
    ENDING,
    /** The attempt ended: completed with every line, or abandoned. Its followers get their end. */
    ENDED;

    private Set<LogPhase> next;

    static {
        NONE.next = EnumSet.of(NONE, RUNNING, ENDED);
        RUNNING.next = EnumSet.of(NONE, RUNNING, ENDING, ENDED);
        ENDING.next = EnumSet.of(NONE, RUNNING, ENDING, ENDED);
        ENDED.next = EnumSet.of(NONE, RUNNING);
    }

    /** Returns whether a log may move from this phase to {@code target}. */
    boolean canMoveTo(LogPhase target) {
        return next.contains(target);
    }

    /** Returns the phases a log may move to from this one; unmodifiable. */
    Set<LogPhase> nextPhases() {
        return Collections.unmodifiableSet(next);
    }

    /**
     * Checks a move: the only way a log's phase changes.
     *
     * @param target the phase to move to
     * @return {@code target}
     * @throws IllegalStateException if the table does not allow the move
     */
    LogPhase moveTo(LogPhase target) {
        if (!canMoveTo(target)) {
            throw new IllegalStateException("an attempt log cannot move from " + this + " to " + target);
        }
        return target;
    }
}
