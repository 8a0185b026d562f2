package io.rlscheduler.store;

import io.rlscheduler.core.SchedulerException;

/**
 * The artifact store could not be reached, or refused a call (a disk full or read-only, a bucket
 * that does not exist, credentials refused, a network failure). Retryable: the scheduler retries
 * its own writes with backoff; nothing is marked stored that was not.
 */
public final class StoreUnavailableException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what could not be done, naming the store and the key
     * @param cause   the underlying failure
     */
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, true, cause);
    }
}
