package io.rlscheduler.worker.internal;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.StopReason;
import java.time.Duration;
import java.util.Locale;

/**
 * How an attempt ended, as the worker records it: the final task state (null when the end is not
 * this worker's to record), the exit code (null when the attempt never ran) and the error text.
 * The factories are pure functions of what the worker knows at the end. Immutable.
 *
 * @param state    the final state to record in Redis, or null for an attempt that was fenced or
 *                 stopped by a shutdown: its lease lapses and the task runs again elsewhere
 * @param exitCode the process's exit code, or null
 * @param error    what went wrong, or the empty string
 */
public record AttemptOutcome(TaskState state, Integer exitCode, String error) {

    /**
     * Classifies the end of an attempt that ran.
     *
     * @param result         what the executor says of the end
     * @param launcherFenced whether the launcher said it stopped the attempt because keepalives stopped
     * @param leaseOverdue   whether the attempt's lease went unrenewed past the self-fencing limit
     * @param timeout        the attempt's timeout, for the error text of one that ran past it
     */
    public static AttemptOutcome classify(ExecutionResult result, boolean launcherFenced, boolean leaseOverdue,
                                          Duration timeout) {
        StopReason reason = result.getStopReason();
        if (reason == StopReason.NONE && (launcherFenced || leaseOverdue)) {
            // The launcher stopped the task on its own because the lease went unrenewed too long
            // (this JVM frozen or starved, Redis unreachable): fencing, not the script failing.
            reason = StopReason.FENCED;
        }
        int exit = result.getExitCode();
        String error = result.getError();
        return switch (reason) {
            case FENCED, SHUTDOWN -> new AttemptOutcome(null, exit,
                    reason.toString().toLowerCase(Locale.ROOT));
            case CANCELLED -> new AttemptOutcome(TaskState.CANCELLED, exit,
                    error.isEmpty() ? "cancelled" : error);
            case TIMED_OUT -> new AttemptOutcome(TaskState.TIMED_OUT, exit,
                    "ran past its timeout of " + timeout);
            case NONE -> exit == 0 && error.isEmpty()
                    ? new AttemptOutcome(TaskState.SUCCEEDED, exit, error)
                    : new AttemptOutcome(TaskState.FAILED, exit,
                            error.isEmpty() ? exitError(exit) : error);
        };
    }

    private static String exitError(int exitCode) {
        return exitCode > 128 ? "killed by signal " + (exitCode - 128) : "exited with code " + exitCode;
    }

    /** An attempt that could not be started: FAILED, with no exit code. */
    public static AttemptOutcome launchFailed(String message) {
        return new AttemptOutcome(TaskState.FAILED, null,
                "launch failed: " + message);
    }

    /** An attempt whose executor failed instead of reporting its end: FAILED, with no exit code. */
    public static AttemptOutcome executorFailed(Throwable cause) {
        return new AttemptOutcome(TaskState.FAILED, null,
                "the executor failed: " + cause);
    }

    /** Returns whether this end is this worker's to record in Redis. */
    public boolean isRecorded() {
        return state != null;
    }

    /** Returns this outcome as not recorded: Redis did not take it, so the lease lapses instead. */
    public AttemptOutcome notTaken() {
        return new AttemptOutcome(null, exitCode, error);
    }

    /** Returns the end as logs name it: the final state, or FENCED when it is not recorded. */
    public String label() {
        return state == null ? "FENCED" : state.name();
    }
}
