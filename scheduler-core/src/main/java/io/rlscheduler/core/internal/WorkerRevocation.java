package io.rlscheduler.core.internal;

/** The answer of revoking a worker id ({@link WorkerKeyRecords#revoke}). Immutable. */
public final class WorkerRevocation {

    private final WorkerKeyRecord key;
    private final String fencedSession;
    private final RequeueResult takenBack;

    WorkerRevocation(WorkerKeyRecord key, String fencedSession, RequeueResult takenBack) {
        this.key = key;
        this.fencedSession = fencedSession;
        this.takenBack = takenBack;
    }

    /** Returns the worker id's key record, revoked. */
    public WorkerKeyRecord getKey() { return key; }
    /** Returns the session that was registered and is now fenced, or "" when none was. */
    public String getFencedSession() { return fencedSession; }
    /** Returns the tasks taken back from it (none when repeated). */
    public RequeueResult getTakenBack() { return takenBack; }

    @Override
    public String toString() {
        return "WorkerRevocation{key=" + key + ", fencedSession=" + fencedSession + ", takenBack=" + takenBack + '}';
    }
}
