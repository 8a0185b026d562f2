package io.rlscheduler.core.internal;

/**
 * A worker id's key record as Redis keeps it (worker_key.lua): the key's id and its verifier (the
 * Ed25519 public key and the accept key, base64; never the private key), when it was issued,
 * last rotated and revoked. A revoked id without a key has the key id "". Immutable.
 */
public final class WorkerKeyRecord {

    private final String workerId;
    private final String keyId;
    private final String publicKey;
    private final String acceptKey;
    private final long createdAtMillis;
    private final long rotatedAtMillis;
    private final long revokedAtMillis;

    WorkerKeyRecord(String workerId, String keyId, String publicKey, String acceptKey, long createdAtMillis,
                    long rotatedAtMillis, long revokedAtMillis) {
        this.workerId = workerId;
        this.keyId = keyId;
        this.publicKey = publicKey;
        this.acceptKey = acceptKey;
        this.createdAtMillis = createdAtMillis;
        this.rotatedAtMillis = rotatedAtMillis;
        this.revokedAtMillis = revokedAtMillis;
    }

    /** Returns the worker id. */
    public String getWorkerId() { return workerId; }
    /** Returns the current key's id, or "" for a worker id revoked without ever having a key. */
    public String getKeyId() { return keyId; }
    /** Returns the key's Ed25519 public key, X.509 encoded, in base64 ("" without a key). */
    public String getPublicKey() { return publicKey; }
    /** Returns the key's accept key in base64 ("" without a key). */
    public String getAcceptKey() { return acceptKey; }
    /** Returns when the key was issued (ms, Redis clock), 0 for a worker id revoked without a key. */
    public long getCreatedAtMillis() { return createdAtMillis; }
    /** Returns when the key was last rotated (ms, Redis clock), 0 if never. */
    public long getRotatedAtMillis() { return rotatedAtMillis; }
    /** Returns when the worker id was revoked (ms, Redis clock), 0 if it is not. */
    public long getRevokedAtMillis() { return revokedAtMillis; }
    /** Returns whether the worker id is revoked. */
    public boolean isRevoked() { return revokedAtMillis > 0; }
    /** Returns whether the worker id has a key that is not revoked: its hellos must be made with it. */
    public boolean hasLiveKey() { return !keyId.isEmpty() && !isRevoked(); }

    /** Returns the record without its verifier. */
    @Override
    public String toString() {
        return "WorkerKeyRecord{worker=" + workerId + ", keyId=" + keyId + ", createdAt=" + createdAtMillis
                + ", rotatedAt=" + rotatedAtMillis + ", revokedAt=" + revokedAtMillis + '}';
    }
}
