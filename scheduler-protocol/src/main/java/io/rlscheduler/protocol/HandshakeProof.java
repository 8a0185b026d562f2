package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Computes and checks the proofs of the shared secret exchanged in the handshake.
 *
 * <p>The secret itself never crosses the wire. The master sends a fresh random nonce in its
 * {@link Challenge}; the worker answers with its own nonce and
 * {@code HMAC-SHA256(secret, "rls-hello-v1" | server_nonce | client_nonce | worker_id | session_id)};
 * the master accepts with {@code HMAC-SHA256(secret, "rls-accept-v1" | client_nonce | server_nonce |
 * master_id)}, so each side proves it knows the secret. Every field is length-prefixed, so no two
 * different inputs hash alike; the server nonce is single-use, so a recorded Hello cannot be
 * replayed on another connection. Comparisons take constant time.
 *
 * <p>All methods are thread-safe.
 */
public final class HandshakeProof {

    /** Bytes of every nonce. */
    public static final int NONCE_LENGTH = 32;

    /** Shortest accepted shared secret, in bytes. */
    public static final int MIN_SECRET_LENGTH = 16;

    private static final String ALGORITHM = "HmacSHA256";
    private static final SecureRandom RANDOM = new SecureRandom();

    private HandshakeProof() {
    }

    /** Returns a new random nonce of {@link #NONCE_LENGTH} bytes. */
    public static ByteString newNonce() {
        byte[] nonce = new byte[NONCE_LENGTH];
        RANDOM.nextBytes(nonce);
        return ByteString.copyFrom(nonce);
    }

    /**
     * Returns the worker's proof for its {@link Hello}.
     *
     * @param secret      the shared secret, at least {@link #MIN_SECRET_LENGTH} bytes
     * @param serverNonce the nonce of the master's challenge
     * @param clientNonce the worker's own nonce
     * @param workerId    the worker id sent in the hello
     * @param sessionId   the session id sent in the hello
     * @return the 32-byte proof
     */
    public static ByteString helloProof(byte[] secret, ByteString serverNonce, ByteString clientNonce,
                                        String workerId, String sessionId) {
        return mac(secret, "rls-hello-v1", serverNonce.toByteArray(), clientNonce.toByteArray(),
                utf8(workerId), utf8(sessionId));
    }

    /**
     * Returns the master's proof for its {@link HelloAccepted}.
     *
     * @param secret      the shared secret, at least {@link #MIN_SECRET_LENGTH} bytes
     * @param clientNonce the nonce of the worker's hello
     * @param serverNonce the master's challenge nonce
     * @param masterId    the master id sent in the acceptance
     * @return the 32-byte proof
     */
    public static ByteString acceptProof(byte[] secret, ByteString clientNonce, ByteString serverNonce,
                                         String masterId) {
        return mac(secret, "rls-accept-v1", clientNonce.toByteArray(), serverNonce.toByteArray(), utf8(masterId));
    }

    /**
     * Returns whether a received proof equals the expected one, in time independent of where they
     * differ.
     *
     * @param expected the proof computed locally
     * @param received the proof from the peer
     * @return true if they are equal
     */
    public static boolean matches(ByteString expected, ByteString received) {
        return MessageDigest.isEqual(expected.toByteArray(), received.toByteArray());
    }

    /**
     * Checks that a secret is long enough to be used.
     *
     * @param secret the secret
     * @return the secret
     * @throws IllegalArgumentException if it is null or shorter than {@link #MIN_SECRET_LENGTH}
     */
    public static byte[] requireValidSecret(byte[] secret) {
        if (secret == null || secret.length < MIN_SECRET_LENGTH) {
            throw new IllegalArgumentException("secret must be at least " + MIN_SECRET_LENGTH + " bytes, was "
                    + (secret == null ? "null" : secret.length + " bytes"));
        }
        return secret;
    }

    static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /** HMAC-SHA256 under {@code secret} of the label and the fields, each prefixed with its 4-byte length. */
    static ByteString mac(byte[] secret, String label, byte[]... fields) {
        requireValidSecret(secret);
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret, ALGORITHM));
            update(mac, utf8(label));
            for (byte[] field : fields) {
                update(mac, field);
            }
            return ByteString.copyFrom(mac.doFinal());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required of every Java runtime", e);
        }
    }

    private static void update(Mac mac, byte[] field) {
        int n = field.length;
        mac.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
        mac.update(field);
    }
}
