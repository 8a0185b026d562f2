package io.rlscheduler.worker.internal;

import com.google.protobuf.ByteString;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.WorkerKey;
import io.rlscheduler.protocol.WorkerKeyProof;
import io.rlscheduler.worker.WorkerOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this worker proves itself with in a hello, and what it expects of the master in return:
 * its own worker key when it has one (given, or read from its key file at every connection, so
 * that a key rotated and written to the file is used from the next connection on, without a
 * restart), else the shared secret. A key file that others than its owner may read is warned
 * about, once for each state of its permissions. Thread-safe.
 */
public final class HelloCredential {

    private static final Logger log = LoggerFactory.getLogger(HelloCredential.class);
    private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    private final String workerId;
    private final byte[] secret;
    private final WorkerKey key;
    private final Path keyFile;
    /** The last loose permissions warned about, so that each state is logged once. */
    private volatile String warnedPermissions;

    private HelloCredential(String workerId, byte[] secret, WorkerKey key, Path keyFile) {
        this.workerId = workerId;
        this.secret = secret;
        this.key = key;
        this.keyFile = keyFile;
    }

    /** Returns the credential the options name: the worker key (or key file) if set, else the shared secret. */
    public static HelloCredential of(WorkerOptions options) {
        return new HelloCredential(options.getWorkerId(), options.getSecret(), options.getWorkerKey().orElse(null),
                options.getWorkerKeyFile().orElse(null));
    }

    /** A hello's proof, made for one connection, and the master's proof it expects in return. */
    public interface Proven {
        /** Returns whether the master's acceptance proves it knows this credential. */
        boolean provesMaster(HelloAccepted accepted);
    }

    /**
     * Reads the key now, as every connection will: throws when it cannot, so that a worker whose
     * key file is missing, unreadable, not a key or another worker's fails at start with a clear
     * message instead of retrying for ever.
     *
     * @throws IllegalStateException if the key file cannot be used
     */
    public void check() {
        currentKey();
    }

    /**
     * Sets the proof on {@code hello} (the key's id and signature, or the shared secret's HMAC)
     * for the connection whose challenge carried {@code serverNonce}.
     *
     * @throws IllegalStateException if the key file cannot be read or holds no key of this worker
     */
    public Proven prove(Hello.Builder hello, ByteString serverNonce, ByteString clientNonce) {
        String sessionId = hello.getSessionId();
        WorkerKey current = currentKey();
        if (current == null) {
            hello.setProof(HandshakeProof.helloProof(secret, serverNonce, clientNonce, workerId, sessionId));
            return accepted -> HandshakeProof.matches(
                    HandshakeProof.acceptProof(secret, clientNonce, serverNonce, accepted.getMasterId()), accepted.getProof());
        }
        hello.setKeyId(current.getKeyId()).setSignature(current.sign(serverNonce, clientNonce, sessionId));
        byte[] acceptKey = current.acceptKey();
        return accepted -> HandshakeProof.matches(WorkerKeyProof.acceptProof(acceptKey, clientNonce, serverNonce,
                accepted.getMasterId(), workerId, current.getKeyId()), accepted.getProof());
    }

    /** Returns a description for logs: which credential, never its secret. */
    public String describe() {
        if (keyFile != null) {
            return "the worker key in " + keyFile;
        }
        return key != null ? "worker key " + key.getKeyId() : "the shared secret";
    }

    /** The key to say hello with now, or null for the shared secret. */
    private WorkerKey currentKey() {
        if (keyFile == null) {
            return key;
        }
        warnIfLoose();
        WorkerKey read;
        try {
            read = WorkerKey.parse(Files.readString(keyFile, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the worker key file " + keyFile + ": " + e, e);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the worker key file " + keyFile + " holds no worker key: " + e.getMessage(), e);
        }
        if (!read.getWorkerId().equals(workerId)) {
            throw new IllegalStateException("the worker key file " + keyFile + " holds worker " + read.getWorkerId()
                    + "'s key " + read.getKeyId() + ", not worker " + workerId + "'s");
        }
        return read;
    }

    private void warnIfLoose() {
        Set<PosixFilePermission> permissions;
        try {
            permissions = Files.getPosixFilePermissions(keyFile);
        } catch (UnsupportedOperationException | IOException e) {
            return; // no POSIX permissions here, or no file: reading it says so
        }
        String shown = PosixFilePermissions.toString(permissions);
        if (!OWNER_ONLY.containsAll(permissions)) {
            if (!Objects.equals(shown, warnedPermissions)) {
                warnedPermissions = shown;
                log.warn("the worker key file {} may be read by others than its owner ({}): whoever reads it can say hello"
                        + " as worker {}; make it readable by the worker's user alone (chmod 600)", keyFile, shown, workerId);
            }
        } else {
            warnedPermissions = null;
        }
    }
}
