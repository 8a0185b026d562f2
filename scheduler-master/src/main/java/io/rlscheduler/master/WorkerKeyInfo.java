package io.rlscheduler.master;

/**
 * A worker id's key as {@link WorkerKeys#list()} shows it: the key id, when it was issued, last
 * rotated and revoked; never the key's secret part or its verifier. Times are ms since the epoch
 * by the Redis clock, 0 for never. Immutable.
 */
public final class WorkerKeyInfo {

    private final String workerId;
    private final String keyId;
    private final long createdAtMillis;
    private final long rotatedAtMillis;
    private final long revokedAtMillis;

    WorkerKeyInfo(String workerId, String keyId, long createdAtMillis, long rotatedAtMillis, long revokedAtMillis) {
        this.workerId = workerId;
        this.keyId = keyId;
        this.createdAtMillis = createdAtMillis;
        this.rotatedAtMillis = rotatedAtMillis;
        this.revokedAtMillis = revokedAtMillis;
    }

    /** Returns the worker id the key is bound to. */
    public String getWorkerId() { return workerId; }
    /** Returns the current key's id, or "" for a worker id revoked without ever having a key. */
    public String getKeyId() { return keyId; }
    /** Returns when the key was issued (ms), 0 for a worker id revoked without a key. */
    public long getCreatedAtMillis() { return createdAtMillis; }
    /** Returns when the key was last rotated (ms), 0 if never. */
    public long getRotatedAtMillis() { return rotatedAtMillis; }
    /** Returns when the worker id was revoked (ms), 0 if it is not. */
    public long getRevokedAtMillis() { return revokedAtMillis; }
    /** Returns whether the worker id is revoked. */
    public boolean isRevoked() { return revokedAtMillis > 0; }

    @Override
    public String toString() {
        return "WorkerKeyInfo{worker=" + workerId + ", keyId=" + keyId + ", createdAt=" + createdAtMillis
                + ", rotatedAt=" + rotatedAtMillis + ", revokedAt=" + revokedAtMillis + '}';
    }
}
