package io.rlscheduler.core;

/**
 * Root of the exceptions rl-scheduler throws. Unchecked. {@link #isRetryable()} says whether the
 * same call may succeed if made again later (a Redis outage) or never will (bad input).
 */
public class SchedulerException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final boolean retryable;

    /**
     * Creates an exception.
     *
     * @param message   what went wrong
     * @param retryable whether retrying the same call may succeed
     * @param cause     the underlying failure, or null
     */
    public SchedulerException(String message, boolean retryable, Throwable cause) {
        super(message, cause);
        this.retryable = retryable;
    }

    /** Creates a non-retryable exception. */
    public SchedulerException(String message) {
        this(message, false, null);
    }

    /** Returns whether retrying the same call later may succeed. */
    public boolean isRetryable() {
        return retryable;
    }
}
