package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A worker's own key: the Ed25519 private key it signs its hellos with ({@link WorkerKeyProof}),
 * bound to its worker id and named by a key id. Its text form, the <em>material</em> a master
 * hands out once when it issues or rotates the key, is one line:
 *
 * <pre>
 *  rlswk1:&lt;worker id&gt;:&lt;key id&gt;:&lt;private key: 32 bytes, base64url without padding&gt;
 * </pre>
 *
 * <p>Immutable and thread-safe. {@link #toString()} names the worker and the key id only, never
 * the private key; neither does any exception message of this class.
 */
public final class WorkerKey {

    /** The first field of the material: the format's name and version. */
    public static final String PREFIX = "rlswk1";

    /** Worker ids as the scheduler allows them (TaskIds); key ids the same, at most 64 characters. */
    private static final Pattern WORKER_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    private final String workerId;
    private final String keyId;
    private final byte[] privateKey;

    private WorkerKey(String workerId, String keyId, byte[] privateKey) {
        this.workerId = workerId;
        this.keyId = keyId;
        this.privateKey = privateKey;
    }

    /**
     * Returns the key of a worker.
     *
     * @param privateKey the {@value WorkerKeyProof#PRIVATE_KEY_LENGTH}-byte Ed25519 private key; copied
     * @throws IllegalArgumentException if an id is not valid or the key has the wrong length
     */
    public static WorkerKey of(String workerId, String keyId, byte[] privateKey) {
        if (workerId == null || !WORKER_ID.matcher(workerId).matches()) {
            throw new IllegalArgumentException("a worker key's worker id must be 1 to 128 of [A-Za-z0-9._-], was '" + workerId + "'");
        }
        if (!isValidKeyId(keyId)) {
            throw new IllegalArgumentException("a worker key's key id must be 1 to 64 of [A-Za-z0-9._-], was '" + keyId + "'");
        }
        if (Objects.requireNonNull(privateKey, "privateKey").length != WorkerKeyProof.PRIVATE_KEY_LENGTH) {
            throw new IllegalArgumentException("a worker key's private key must be " + WorkerKeyProof.PRIVATE_KEY_LENGTH
                    + " bytes, was " + privateKey.length);
        }
        return new WorkerKey(workerId, keyId, privateKey.clone());
    }

    /**
     * Reads a key's material (surrounding white space ignored).
     *
     * @throws IllegalArgumentException if it is not the material of a worker key; the message
     *                                  says what is wrong without repeating the material
     */
    public static WorkerKey parse(String material) {
        String[] parts = Objects.requireNonNull(material, "material").strip().split(":", -1);
        if (parts.length != 4 || !PREFIX.equals(parts[0])) {
            throw new IllegalArgumentException("not a worker key: expected " + PREFIX
                    + ":<worker id>:<key id>:<private key>, as a master's workerKeys().issue() gives it");
        }
        byte[] key;
        try {
            key = Base64.getUrlDecoder().decode(parts[3]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the private key of worker key " + parts[2] + " is not base64url");
        }
        return of(parts[1], parts[2], key);
    }

    /** Returns whether {@code keyId} is a valid key id: 1 to 64 of [A-Za-z0-9._-], starting with a letter or digit. */
    public static boolean isValidKeyId(String keyId) {
        return keyId != null && KEY_ID.matcher(keyId).matches();
    }

    /** Returns the worker id the key is bound to. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns the key's id. */
    public String getKeyId() {
        return keyId;
    }

    /** Returns the key's material: the one line a worker is configured with. Keep it secret. */
    public String toMaterial() {
        return PREFIX + ':' + workerId + ':' + keyId + ':' + Base64.getUrlEncoder().withoutPadding().encodeToString(privateKey);
    }

    /** Returns the signature of a hello of this worker in session {@code sessionId} ({@link WorkerKeyProof#sign}). */
    public ByteString sign(ByteString serverNonce, ByteString clientNonce, String sessionId) {
        return WorkerKeyProof.sign(privateKey, serverNonce, clientNonce, workerId, sessionId, keyId);
    }

    /** Returns the accept key the master proves itself with ({@link WorkerKeyProof#acceptKey}). */
    public byte[] acceptKey() {
        return WorkerKeyProof.acceptKey(privateKey);
    }

    /** Keys are equal when their worker id, key id and private key are. */
    @Override
    public boolean equals(Object o) {
        return o instanceof WorkerKey k && workerId.equals(k.workerId) && keyId.equals(k.keyId)
                && MessageDigest.isEqual(privateKey, k.privateKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(workerId, keyId);
    }

    /** Returns the worker id and the key id; never the private key. */
    @Override
    public String toString() {
        return "WorkerKey{worker=" + workerId + ", keyId=" + keyId + '}';
    }
}
