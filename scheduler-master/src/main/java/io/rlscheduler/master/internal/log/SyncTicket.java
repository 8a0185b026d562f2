package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * An ended attempt whose file is queued for forcing to disk, and the followers that wait for that
 * to get their END_OF_STREAM: those of the attempt when it ended, and those that subscribe
 * before the force is done. Thread-safe: the I/O thread adds followers, the sync thread ends them.
 */
final class SyncTicket {

    final long epoch;
    final LogRecord endRecord;
    // Guarded by this.
    private List<LogFollower> ending;
    private List<LogFollower> lateFollowers;
    private List<Long> lateLengths;
    private boolean done;

    SyncTicket(long epoch, LogRecord endRecord, List<LogFollower> ending) {
        this.epoch = epoch;
        this.endRecord = endRecord;
        this.ending = ending;
    }

    /**
     * Has a follower that subscribed after the end wait for the force: it is attached at
     * {@code fileLength} with the end once the file is forced.
     *
     * @return false if the file is forced already: attach it now
     */
    synchronized boolean defer(LogFollower follower, long fileLength) {
        if (done) {
            return false;
        }
        if (lateFollowers == null) {
            lateFollowers = new ArrayList<>(2);
            lateLengths = new ArrayList<>(2);
        }
        lateFollowers.add(follower);
        lateLengths.add(fileLength);
        return true;
    }

    /** The file is forced (or could not be): ends the followers. */
    void finish() {
        List<LogFollower> end;
        List<LogFollower> late;
        List<Long> lengths;
        synchronized (this) {
            done = true;
            end = ending;
            late = lateFollowers;
            lengths = lateLengths;
            ending = null;
            lateFollowers = null;
            lateLengths = null;
        }
        for (LogFollower follower : end) {
            follower.end(endRecord);
        }
        if (late != null) {
            for (int i = 0; i < late.size(); i++) {
                late.get(i).attach(lengths.get(i), endRecord); // ended: never live, nothing to add
            }
        }
    }
}
