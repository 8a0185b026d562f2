package io.rlscheduler.cli;

/** rls's exit codes; docs/cli.md lists the same table. */
final class ExitCodes {
    /** The command did what it was asked; for {@code wait}, the run SUCCEEDED. */
    static final int OK = 0;
    /** {@code wait} (and {@code submit --follow}): the run FAILED. */
    static final int FAILED = 1;
    /** The command line is wrong (unknown option, a malformed value). */
    static final int USAGE = 2;
    /** {@code wait}: the run was CANCELLED. */
    static final int CANCELLED = 3;
    /** {@code wait}: the run TIMED_OUT (ran past its own timeout). */
    static final int TIMED_OUT = 4;
    /** {@code wait --timeout}: the wait ended before the run did. */
    static final int WAIT_TIMEOUT = 5;
    /** The server refused or failed (any {@code {"error": ...}}), the token was refused, or it could not be reached. */
    static final int ERROR = 6;

    private ExitCodes() {
    }

    /** The exit code {@code wait} ends with for a run that ended in {@code state}. */
    static int forState(String state) {
        switch (state == null ? "" : state) {
            case "SUCCEEDED":
                return OK;
            case "FAILED":
                return FAILED;
            case "CANCELLED":
                return CANCELLED;
            case "TIMED_OUT":
                return TIMED_OUT;
            default:
                return ERROR;
        }
    }

    static boolean isTerminal(String state) {
        return "SUCCEEDED".equals(state) || "FAILED".equals(state) || "CANCELLED".equals(state)
                || "TIMED_OUT".equals(state);
    }
}
