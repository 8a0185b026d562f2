package io.rlscheduler.store;

import java.time.Instant;
import java.util.Objects;

/** An object in an {@link ArtifactStore}: its key, size, and where known its SHA-256 and time. Immutable. */
public final class StoredObject {

    private final String key;
    private final long size;
    private final String sha256;
    private final Instant modifiedAt;

    /**
     * @param key        the key
     * @param size       bytes, 0 or more
     * @param sha256     the SHA-256 of its bytes as 64 lower-case hex digits, or null when not known
     * @param modifiedAt when it was stored, or null when not known
     */
    public StoredObject(String key, long size, String sha256, Instant modifiedAt) {
        this.key = Objects.requireNonNull(key, "key");
        if (size < 0) {
            throw new IllegalArgumentException("size must be 0 or more, was " + size);
        }
        this.size = size;
        this.sha256 = sha256;
        this.modifiedAt = modifiedAt;
    }

    /** Returns the key. */
    public String getKey() { return key; }
    /** Returns its size in bytes. */
    public long getSize() { return size; }
    /** Returns the SHA-256 of its bytes as lower-case hex, or null when the call that returned it does not know it. */
    public String getSha256() { return sha256; }
    /** Returns when it was stored, or null when not known. */
    public Instant getModifiedAt() { return modifiedAt; }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredObject && key.equals(((StoredObject) o).key) && size == ((StoredObject) o).size
                && Objects.equals(sha256, ((StoredObject) o).sha256);
    }

    @Override
    public int hashCode() {
        return key.hashCode() * 31 + Long.hashCode(size);
    }

    @Override
    public String toString() {
        return key + " (" + size + " bytes" + (sha256 == null ? "" : ", sha256 " + sha256) + ")";
    }
}
