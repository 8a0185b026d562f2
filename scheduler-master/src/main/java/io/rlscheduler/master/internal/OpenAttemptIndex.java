package io.rlscheduler.master.internal;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Which worker connection has each attempt open ({@link OpenAttempts}), so that the end of an
 * attempt's log closes it there: the log manager tells of ends on its I/O threads, which know no
 * connection. The connection that opened an attempt last holds it. Thread-safe and lock-free.
 */
public final class OpenAttemptIndex {

    private final ConcurrentHashMap<OpenAttempts.Key, OpenAttempts> holders = new ConcurrentHashMap<>();
    private final WorkerLimits limits;

    public OpenAttemptIndex(WorkerLimits limits) {
        this.limits = limits;
    }

    /** Returns the open attempts of a new connection. */
    OpenAttempts forConnection() {
        return new OpenAttempts(limits, this);
    }

    void opened(OpenAttempts.Key key, OpenAttempts connection) {
        holders.put(key, connection);
    }

    void closed(OpenAttempts.Key key, OpenAttempts connection) {
        holders.remove(key, connection);
    }

    /** The attempt's log ended: it is closed on the connection that holds it. Any thread; returns at once. */
    public void attemptEnded(String taskId, long epoch) {
        OpenAttempts.Key key = new OpenAttempts.Key(taskId, epoch);
        OpenAttempts holder = holders.remove(key);
        if (holder != null) {
            holder.ended(key);
        }
    }

    /** Returns how many attempts are open over all connections. */
    int size() {
        return holders.size();
    }
}
