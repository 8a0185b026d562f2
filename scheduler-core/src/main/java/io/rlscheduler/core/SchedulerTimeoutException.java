package io.rlscheduler.core;

import java.time.Duration;

/**
 * A call's wait ran out before Redis answered: the command's timeout (the Redis client's) for a
 * {@code LeaseCore} call, or a runtime's own limit on an API call. Retryable: the call may have
 * run in Redis or not, and every mutating call of the core is safe to repeat.
 */
public final class SchedulerTimeoutException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final Duration timeout;

    /**
     * Creates the exception.
     *
     * @param message what was waited for
     * @param timeout how long it was waited for, or null when not known
     * @param cause   the underlying timeout, or null
     */
    public SchedulerTimeoutException(String message, Duration timeout, Throwable cause) {
        super(message, true, cause);
        this.timeout = timeout;
    }

    /** Returns how long the call waited, or null when not known. */
    public Duration getTimeout() {
        return timeout;
    }
}
