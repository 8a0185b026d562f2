package io.rlscheduler.core;

import java.time.Duration;
import java.util.Optional;

/**
 * A submission over one of its owner's hard limits ({@link OwnerLimits}): more GPUs than one task
 * or the owner may ever hold, too many tasks queued, or over the submission rate. Nothing of it
 * was stored. Retryable for {@link OwnerLimit#RATE} (after {@link #getRetryAfter()}) and
 * {@link OwnerLimit#MAX_QUEUED} (once some of the owner's tasks have left the queue); never for a
 * task larger than the owner may hold.
 */
public final class OwnerLimitExceededException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String owner;
    private final OwnerLimit limit;
    private final double allowed;
    private final double current;
    private final Duration retryAfter;

    /**
     * Creates the exception.
     *
     * @param owner      the task's owner
     * @param limit      the limit the submission is over
     * @param allowed    the limit's value (per second for the rate)
     * @param current    what the submission would have made it (the task's GPUs, the owner's queued
     *                   tasks, or for the rate the burst)
     * @param retryAfter for the rate, when a submission will be taken again; otherwise null
     */
    public OwnerLimitExceededException(String owner, OwnerLimit limit, double allowed, double current, Duration retryAfter) {
        super(message(owner, limit, allowed, current, retryAfter), limit == OwnerLimit.RATE || limit == OwnerLimit.MAX_QUEUED,
                null);
        this.owner = owner;
        this.limit = limit;
        this.allowed = allowed;
        this.current = current;
        this.retryAfter = retryAfter;
    }

    private static String message(String owner, OwnerLimit limit, double allowed, double current, Duration retryAfter) {
        switch (limit) {
            case MAX_GPUS_PER_TASK:
                return "owner '" + owner + "' may ask for at most " + num(allowed) + " GPUs per task, the task asks for "
                        + num(current) + "; nothing was stored";
            case MAX_GPUS:
                return "owner '" + owner + "' may hold at most " + num(allowed) + " GPUs, the task asks for " + num(current)
                        + " and could never run; nothing was stored";
            case MAX_QUEUED:
                return "owner '" + owner + "' has " + num(current) + " tasks queued, its limit is " + num(allowed)
                        + "; nothing was stored";
            case RATE:
                return "owner '" + owner + "' submits at most " + num(allowed) + " tasks a second (burst " + num(current)
                        + "); retry after " + retryAfter.toMillis() + " ms; nothing was stored";
            default:
                return "owner '" + owner + "' is over its limit " + limit.key() + "; nothing was stored";
        }
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    /** Returns the task's owner. */
    public String getOwner() {
        return owner;
    }

    /** Returns the limit the submission is over. */
    public OwnerLimit getLimit() {
        return limit;
    }

    /** Returns the limit's value (tasks or GPUs; submissions per second for the rate). */
    public double getAllowed() {
        return allowed;
    }

    /** Returns what the submission would have made it: the task's GPUs, the owner's queued tasks, or the rate's burst. */
    public double getCurrent() {
        return current;
    }

    /** Returns, for the rate, how long to wait before submitting again. */
    public Optional<Duration> getRetryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
