package io.rlscheduler.cli;

/**
 * An error rls reports as one line, {@code rls: <message>} on stderr, and ends with {@code exitCode}
 * (see {@link ExitCodes}); never a stack trace.
 */
class RlsException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    RlsException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    RlsException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }

    /** A mistake in the command line itself: exit code 2. */
    static RlsException usage(String message) {
        return new RlsException(ExitCodes.USAGE, message);
    }
}
