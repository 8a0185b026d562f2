package io.rlscheduler.store;

import io.rlscheduler.core.SchedulerException;

/** No object (or no artifact of a run) exists under the key asked for. Not retryable. */
public final class ArtifactNotFoundException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String key;

    /** @param key the key that holds nothing */
    public ArtifactNotFoundException(String key) {
        super("no artifact " + key, false, null);
        this.key = key;
    }

    /** Returns the key that holds nothing. */
    public String getKey() {
        return key;
    }
}
