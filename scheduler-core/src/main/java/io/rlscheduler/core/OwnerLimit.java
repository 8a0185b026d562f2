package io.rlscheduler.core;

/**
 * One of an owner's limits ({@link OwnerLimits}), as a refused submission
 * ({@link OwnerLimitExceededException}) or a waiting task's reason names it.
 */
public enum OwnerLimit {
    /** GPUs the owner's tasks hold at once; a task asking for more than this can never run. */
    MAX_GPUS("max_gpus"),
    /** Tasks of the owner held by workers at once (ASSIGNED or RUNNING). */
    MAX_RUNNING("max_running"),
    /** Tasks of the owner waiting in the queue (QUEUED, parked ones included). */
    MAX_QUEUED("max_queued"),
    /** GPUs one task of the owner may ask for. */
    MAX_GPUS_PER_TASK("max_gpus_per_task"),
    /** Submissions per second, with a burst (a token bucket). */
    RATE("rate");

    private final String key;

    OwnerLimit(String key) {
        this.key = key;
    }

    /** Returns the limit's name as stored in Redis and shown in reasons, e.g. {@code max_gpus}. */
    public String key() {
        return key;
    }

    /** Returns the limit named {@code key} as {@link #key()} gives it. */
    public static OwnerLimit ofKey(String key) {
        for (OwnerLimit l : values()) {
            if (l.key.equals(key)) {
                return l;
            }
        }
        throw new IllegalArgumentException("no owner limit '" + key + "'");
    }
}
