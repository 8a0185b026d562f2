package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.EdECPrivateKey;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.security.spec.X509EncodedKeySpec;

/**
 * Computes and checks the proofs of a hello made with a worker key ({@link WorkerKey}) instead
 * of the shared secret.
 *
 * <p>The worker signs, with its Ed25519 private key, the transcript
 * {@code "rls-hello-key-v1" | server_nonce | client_nonce | worker_id | session_id | key_id}
 * (every field prefixed with its 4-byte big-endian length, as in {@link HandshakeProof}); the
 * master verifies it with the public key it keeps in Redis, so whoever reads Redis still cannot
 * say hello as the worker. The master proves itself in return with
 * {@code HMAC-SHA256(accept_key, "rls-accept-key-v1" | client_nonce | server_nonce | master_id |
 * worker_id | key_id)}, where {@code accept_key = HMAC-SHA256(private_key, "rls-accept-key-derive-v1")}:
 * the worker derives it from its key, the master keeps it in Redis beside the public key. A
 * Redis reader can therefore pose as a master to that one worker, never as the worker.
 *
 * <p>Uses the JDK's own {@code Ed25519} (no provider to install). A signature check costs about
 * half a millisecond of CPU: callers on an event loop run it elsewhere. All methods are
 * thread-safe.
 */
public final class WorkerKeyProof {

    /** Bytes of an Ed25519 private key (the RFC 8032 seed), as {@link WorkerKey} holds it. */
    public static final int PRIVATE_KEY_LENGTH = 32;
    /** Bytes of an Ed25519 signature. */
    public static final int SIGNATURE_LENGTH = 64;

    private static final String ALGORITHM = "Ed25519";
    private static final String HELLO_LABEL = "rls-hello-key-v1";
    private static final String ACCEPT_LABEL = "rls-accept-key-v1";
    private static final String ACCEPT_KEY_LABEL = "rls-accept-key-derive-v1";

    private WorkerKeyProof() {
    }

    /** Returns a new random Ed25519 key pair. */
    public static KeyPair newKeyPair() {
        try {
            return KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is part of every Java 17 runtime", e);
        }
    }

    /** Returns the {@value #PRIVATE_KEY_LENGTH} bytes of an Ed25519 private key made by {@link #newKeyPair()}. */
    public static byte[] privateKeyBytes(PrivateKey key) {
        if (!(key instanceof EdECPrivateKey ed)) {
            throw new IllegalArgumentException("not an Ed25519 private key: " + key.getAlgorithm());
        }
        return ed.getBytes().orElseThrow(() -> new IllegalArgumentException("the private key's bytes are not available"));
    }

    /**
     * Returns the worker's signature for its hello.
     *
     * @param privateKey the worker's {@value #PRIVATE_KEY_LENGTH}-byte private key
     * @return the {@value #SIGNATURE_LENGTH}-byte signature
     */
    public static ByteString sign(byte[] privateKey, ByteString serverNonce, ByteString clientNonce, String workerId,
                                  String sessionId, String keyId) {
        try {
            PrivateKey key = KeyFactory.getInstance(ALGORITHM)
                    .generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, privateKey));
            Signature signature = Signature.getInstance(ALGORITHM);
            signature.initSign(key);
            signature.update(transcript(serverNonce, clientNonce, workerId, sessionId, keyId));
            return ByteString.copyFrom(signature.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign with the worker key: " + e.getMessage(), e);
        }
    }

    /**
     * Returns whether {@code signature} is the worker's signature of this hello under the public
     * key; false (never an exception) for a malformed key or signature.
     *
     * @param publicKey the worker's public key, X.509 encoded ({@code PublicKey.getEncoded()})
     */
    public static boolean verify(byte[] publicKey, ByteString signature, ByteString serverNonce, ByteString clientNonce,
                                 String workerId, String sessionId, String keyId) {
        if (signature.size() != SIGNATURE_LENGTH) {
            return false;
        }
        try {
            PublicKey key = KeyFactory.getInstance(ALGORITHM).generatePublic(new X509EncodedKeySpec(publicKey));
            Signature check = Signature.getInstance(ALGORITHM);
            check.initVerify(key);
            check.update(transcript(serverNonce, clientNonce, workerId, sessionId, keyId));
            return check.verify(signature.toByteArray());
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** Returns the accept key both sides derive from the worker's private key (the master stores it). */
    public static byte[] acceptKey(byte[] privateKey) {
        return HandshakeProof.mac(privateKey, ACCEPT_KEY_LABEL).toByteArray();
    }

    /**
     * Returns the master's proof for its {@link HelloAccepted} to a hello made with a key.
     *
     * @param acceptKey the worker key's accept key ({@link #acceptKey})
     * @return the 32-byte proof
     */
    public static ByteString acceptProof(byte[] acceptKey, ByteString clientNonce, ByteString serverNonce, String masterId,
                                         String workerId, String keyId) {
        return HandshakeProof.mac(acceptKey, ACCEPT_LABEL, clientNonce.toByteArray(), serverNonce.toByteArray(),
                HandshakeProof.utf8(masterId), HandshakeProof.utf8(workerId), HandshakeProof.utf8(keyId));
    }

    /** The signed bytes: the label and the fields, each prefixed with its 4-byte length. */
    static byte[] transcript(ByteString serverNonce, ByteString clientNonce, String workerId, String sessionId, String keyId) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(192);
        for (byte[] field : new byte[][] {HandshakeProof.utf8(HELLO_LABEL), serverNonce.toByteArray(), clientNonce.toByteArray(),
                HandshakeProof.utf8(workerId), HandshakeProof.utf8(sessionId), HandshakeProof.utf8(keyId)}) {
            int n = field.length;
            out.write(n >>> 24);
            out.write(n >>> 16);
            out.write(n >>> 8);
            out.write(n);
            out.writeBytes(field);
        }
        return out.toByteArray();
    }
}
