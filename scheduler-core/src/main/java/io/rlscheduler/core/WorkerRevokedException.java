package io.rlscheduler.core;

/**
 * A worker id that was revoked (its machine lost or stolen; {@code SchedulerMaster.workerKeys().revoke})
 * tried to register: nothing was changed. A worker of that id cannot run until an operator issues
 * its id a new key. Not retryable.
 */
public final class WorkerRevokedException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String workerId;
    private final long revokedAtMillis;

    /**
     * @param workerId        the worker id
     * @param revokedAtMillis when it was revoked (ms, Redis clock)
     */
    public WorkerRevokedException(String workerId, long revokedAtMillis) {
        super("worker id " + workerId + " was revoked (at " + java.time.Instant.ofEpochMilli(revokedAtMillis)
                + "): it cannot register until a new key is issued for it", false, null);
        this.workerId = workerId;
        this.revokedAtMillis = revokedAtMillis;
    }

    /** Returns the worker id. */
    public String getWorkerId() { return workerId; }
    /** Returns when the worker id was revoked (ms, Redis clock). */
    public long getRevokedAtMillis() { return revokedAtMillis; }
}
