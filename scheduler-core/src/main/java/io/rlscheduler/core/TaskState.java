package io.rlscheduler.core;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The states of a task, with the one table of legal transitions. The same table is enforced by
 * the Lua scripts ({@code lua/lib.lua}), so Java and Redis cannot disagree.
 *
 * <pre>
 *            submit
 *              |
 *              v        claim            ack
 *   +-----> QUEUED ------------> ASSIGNED ------> RUNNING
 *   |         |  \                 | |  \            |  \
 *   |  cancel |   `-- (limit) -->  | |   `-----------+---`--> SUCCEEDED | FAILED | CANCELLED | TIMED_OUT
 *   |         v                    | |   finish          finish
 *   |     CANCELLED                | |
 *   +------ ack timeout -----------+ +-- lease lost (RUNNING too) --> QUEUED, or FAILED at a limit
 * </pre>
 */
public enum TaskState {
    /** Waiting in the queue for a worker with room for it. */
    QUEUED,
    /** Claimed for a worker, which has not yet confirmed it started. */
    ASSIGNED,
    /** Running on a worker, under a task lease. */
    RUNNING,
    /** Ended with exit code 0. */
    SUCCEEDED,
    /** Ended with a failure, or gave up after too many attempts or lease losses. */
    FAILED,
    /** Cancelled by a caller. */
    CANCELLED,
    /** Stopped because it ran past its timeout. */
    TIMED_OUT;

    private Set<TaskState> next;

    static {
        QUEUED.next = EnumSet.of(ASSIGNED, CANCELLED, FAILED);
        ASSIGNED.next = EnumSet.of(RUNNING, QUEUED, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT);
        RUNNING.next = EnumSet.of(QUEUED, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT);
        for (TaskState terminal : EnumSet.of(SUCCEEDED, FAILED, CANCELLED, TIMED_OUT)) {
            terminal.next = EnumSet.noneOf(TaskState.class);
        }
    }

    /** Returns whether no transition leaves this state. */
    public boolean isTerminal() {
        return next.isEmpty();
    }

    /** Returns whether a task may move from this state to {@code target}. */
    public boolean canMoveTo(TaskState target) {
        return next.contains(target);
    }

    /** Returns the states a task may move to from this one; unmodifiable. */
    public Set<TaskState> getNextStates() {
        return Collections.unmodifiableSet(next);
    }

    /**
     * Checks a transition.
     *
     * @param target the state to move to
     * @return {@code target}
     * @throws IllegalTaskStateException if the table does not allow it
     */
    public TaskState requireTransitionTo(TaskState target) {
        if (!canMoveTo(target)) {
            throw new IllegalTaskStateException(null, this, target);
        }
        return target;
    }
}
