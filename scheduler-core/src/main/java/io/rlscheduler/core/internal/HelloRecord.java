package io.rlscheduler.core.internal;

import java.util.Optional;

/**
 * What Redis holds of a worker id when it says hello ({@link WorkerKeyRecords#helloRecord}): the
 * registered session and whether its liveness lease runs (by the Redis clock), and the id's key
 * record. Immutable.
 */
public final class HelloRecord {

    private final String session;
    private final boolean live;
    private final WorkerKeyRecord key;

    HelloRecord(String session, boolean live, WorkerKeyRecord key) {
        this.session = session;
        this.live = live;
        this.key = key;
    }

    /** Returns whether the worker id is registered. */
    public boolean isRegistered() { return !session.isEmpty(); }
    /** Returns the registered session, or "" when the worker id is not registered. */
    public String getSession() { return session; }
    /** Returns whether the registered session's liveness lease runs. */
    public boolean isLive() { return live; }
    /** Returns the worker id's key record, if it has one (a key, or a revocation). */
    public Optional<WorkerKeyRecord> getKey() { return Optional.ofNullable(key); }

    @Override
    public String toString() {
        return "HelloRecord{session=" + session + ", live=" + live + ", key=" + key + '}';
    }
}
