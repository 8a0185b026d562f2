package io.rlscheduler.cli;

/** The server answered an error: its status, and the {@code code} and {@code message} of its body. */
final class ApiException extends RlsException {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String code;

    ApiException(int status, String code, String message) {
        super(ExitCodes.ERROR, message);
        this.status = status;
        this.code = code;
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }
}
