package io.rlscheduler.master;

import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import java.time.Duration;
import java.util.List;

/**
 * How the lab's GPUs are shared between owners ({@link SchedulerMaster#sharing()};
 * docs/operations.md, "Sharing the GPUs"): each owner's limits and weight, the lab's defaults, the
 * half-life of usage, and every owner's share and usage now. Claims serve, within one priority,
 * the owner with the least decayed usage per share first; an owner at a limit waits without
 * costing a claim anything. Everything lives in Redis: a change takes effect at the next claim or
 * submission, on every master, without a restart, and lowering a limit never stops running work.
 *
 * <p>Thread-safe. Each method blocks while Redis answers, up to the master's {@code apiTimeout}
 * ({@link io.rlscheduler.core.SchedulerTimeoutException} after it); do not call them from an
 * event loop.
 */
public interface Sharing {

    /**
     * Sets an owner's own limits and weight, replacing what it had ({@link OwnerLimits#none()}
     * clears them: the defaults apply again).
     *
     * @throws IllegalArgumentException if {@code owner} is not 1 to 64 of [A-Za-z0-9._@-]
     */
    void setLimits(String owner, OwnerLimits limits);

    /** Returns an owner's own limits (without the defaults), nothing set when it has none. */
    OwnerLimits getLimits(String owner);

    /** Sets the lab's defaults: each limit, and the weight, of every owner that does not set its own. */
    void setDefaults(OwnerLimits defaults);

    /** Returns the lab's defaults. */
    OwnerLimits getDefaults();

    /**
     * Sets how fast usage is forgotten: usage charged one half-life ago counts half (default 7
     * days, 1 s to 3650 days). Usage already charged keeps what it has decayed to.
     */
    void setHalfLife(Duration halfLife);

    /**
     * Sets the usage an attempt is charged when it starts (its GPUs, or CPU slots, times this;
     * default 60 s, 0 to 24 h): so that the next pick, even in the same claim, sees that the owner
     * just got something. An attempt is charged its real time held once it runs longer.
     */
    void setMinimumCharge(Duration charge);

    /** Returns the half-life of usage now in force. */
    Duration getHalfLife();

    /**
     * Sets how long a task that needs 2 or more GPUs may wait before a worker is reserved for it
     * (default 30 min; {@link Duration#ZERO}: never, and the reservations there are end; at most
     * 365 days). The reserved worker takes no new work that would use what the task needs, so the
     * task starts there once the work running on it has freed that; running work is never stopped.
     * An owner holds at most one reservation at a time.
     */
    void setReserveAfter(Duration reserveAfter);

    /** Returns how long a big task waits before a worker is reserved for it; zero: never. */
    Duration getReserveAfter();

    /** Returns the reservations now, oldest first. */
    List<io.rlscheduler.core.Reservation> reservations();

    /**
     * Runs the repair pass now (the leader runs it every {@code sharingRepairInterval} too): the
     * owners' held GPUs, running and queued counts, owner queues and reservations are rebuilt from
     * the task records where they disagree. They are kept by the same scripts that move tasks, so
     * a correction means something outside them went wrong (a hand edit of Redis, data of an older
     * version); each is logged and counted in {@code health().getSharingRepairs()}. The queue's
     * side is checked only while the queue holds at most 50,000 tasks (one script run reads them).
     *
     * @return what it corrected; empty when everything agreed
     */
    List<io.rlscheduler.core.SharingCorrection> repair();

    /** Returns every owner that ever submitted, by name: its limits as they apply, usage, held GPUs, running and queued tasks. */
    List<OwnerShare> shares();
}
