package io.rlscheduler.core;

/**
 * One correction the repair pass of the sharing between owners made: a counter, an owner queue's
 * entry or a reservation that disagreed with the task records, as it was and as it is now. The
 * counters are kept by the same scripts that move tasks, so a correction means something went
 * wrong outside them (a hand edit of Redis, a bug, data written by an older version). Immutable.
 *
 * @param owner the owner ("" for a reservation whose task is gone)
 * @param what  what was corrected: {@code gpus}, {@code running}, {@code queued},
 *              {@code q:<g|c>:<priority>} (claimable tasks needing GPUs or none, per priority),
 *              {@code queue:<g|c>} (an entry of the owner's queue), or {@code reservation}
 * @param was   the value or entry before
 * @param now   the value or entry after
 */
public record SharingCorrection(String owner, String what, String was, String now) {

    @Override
    public String toString() {
        return (owner.isEmpty() ? "" : owner + " ") + what + ": " + was + " -> " + now;
    }
}
