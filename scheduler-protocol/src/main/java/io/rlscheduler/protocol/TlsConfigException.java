package io.rlscheduler.protocol;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A TLS setting names a file that cannot be used: missing, not PEM, a certificate that does not
 * parse, a key in a form this build does not read, or a key that does not belong to its
 * certificate. Thrown by {@link ServerTlsOptions.Builder#build()} and
 * {@link ClientTlsOptions.Builder#build()} (which read every file they are given), and by
 * {@link TlsContext} when the JDK refuses the material at start. The file stays wrong until an
 * operator fixes it, so retrying never helps.
 */
public final class TlsConfigException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** What is wrong with the file. */
    public enum Problem {
        /** The file does not exist, is not a regular file, cannot be read, or is over 1 MiB. */
        UNREADABLE_FILE,
        /** The file holds no PEM block of the kind the setting needs (a DER file, or the wrong kind). */
        NOT_PEM,
        /** A {@code CERTIFICATE} block does not parse as an X.509 certificate. */
        BAD_CERTIFICATE,
        /**
         * The key is PKCS#1 ({@code RSA PRIVATE KEY}), SEC 1 ({@code EC PRIVATE KEY}), encrypted, or
         * of an algorithm other than RSA, EC and EdDSA: convert it to unencrypted PKCS#8.
         */
        UNSUPPORTED_KEY,
        /** The private key does not belong to the first certificate of its chain. */
        KEY_MISMATCH,
        /** The JDK refused to build a TLS context from material that parsed. */
        CONTEXT_REFUSED
    }

    private final Problem problem;
    private final transient Path file;

    /**
     * Creates an exception.
     *
     * @param problem what is wrong; must not be null
     * @param file    the file it is wrong with, or null when it spans several
     * @param message the details, naming the file and what to do
     */
    public TlsConfigException(Problem problem, Path file, String message) {
        super(message);
        this.problem = Objects.requireNonNull(problem, "problem");
        this.file = file;
    }

    /**
     * Creates an exception with its cause.
     *
     * @param problem what is wrong; must not be null
     * @param file    the file it is wrong with, or null when it spans several
     * @param message the details
     * @param cause   the parser's or the JDK's failure
     */
    public TlsConfigException(Problem problem, Path file, String message, Throwable cause) {
        super(message, cause);
        this.problem = Objects.requireNonNull(problem, "problem");
        this.file = file;
    }

    /** Returns what is wrong. */
    public Problem getProblem() {
        return problem;
    }

    /** Returns the file it is wrong with, or null when the problem spans several. */
    public Path getFile() {
        return file;
    }
}
