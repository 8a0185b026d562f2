package io.rlscheduler.worker;

import java.util.Objects;

/** How an attempt ended. Immutable. */
public final class ExecutionResult {

    private final int exitCode;
    private final StopReason stopReason;
    private final String error;

    /**
     * Creates a result.
     *
     * @param exitCode   the process's exit code; 128 + n when it died from signal n
     * @param stopReason why the worker stopped it, or {@link StopReason#NONE}
     * @param error      a description of a failure outside the task's own exit code, or the empty string
     */
    public ExecutionResult(int exitCode, StopReason stopReason, String error) {
        this.exitCode = exitCode;
        this.stopReason = Objects.requireNonNull(stopReason, "stopReason");
        this.error = error == null ? "" : error;
    }

    /** Returns the exit code; 128 + n when the process died from signal n. */
    public int getExitCode() {
        return exitCode;
    }

    /** Returns why the worker stopped the attempt, or {@link StopReason#NONE} if it ended by itself. */
    public StopReason getStopReason() {
        return stopReason;
    }

    /** Returns a description of a failure outside the task's exit code, or the empty string. */
    public String getError() {
        return error;
    }

    @Override
    public String toString() {
        return "ExecutionResult{exitCode=" + exitCode + ", stopReason=" + stopReason + ", error=" + error + '}';
    }
}
