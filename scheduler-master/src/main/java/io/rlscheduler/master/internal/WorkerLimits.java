package io.rlscheduler.master.internal;

import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * The limits on authenticated worker connections (the master's settings of the same names) and
 * how often each was met since start. The settings are immutable; the counters are thread-safe,
 * counted by every connection's handlers ({@link InboundThrottle}, {@link OpenAttempts},
 * {@link IdleWorkerCloser}).
 */
public final class WorkerLimits {

    /** Limits no worker meets: for a master's parts run without its settings (tests). */
    public static final WorkerLimits NONE = new WorkerLimits(1L << 40, 1L << 40, Integer.MAX_VALUE,
            Duration.ofDays(365), Duration.ofDays(365));

    private final long inboundRate;
    private final long inboundBurst;
    private final int maxOpenAttempts;
    private final long openAttemptTimeoutNanos;
    private final long idleTimeoutMillis;
    private final LongAdder throttledReads = new LongAdder();
    private final LongAdder openAttemptRefusals = new LongAdder();
    private final LongAdder idleCloses = new LongAdder();

    /**
     * @param inboundRate        bytes per second one connection may send, beyond its burst
     * @param inboundBurst       bytes one connection may send at once
     * @param maxOpenAttempts    attempts one connection may have log state open for at once
     * @param openAttemptTimeout how long after its last batch an attempt still counts as open
     * @param idleTimeout        how long an authenticated connection may send nothing
     */
    public WorkerLimits(long inboundRate, long inboundBurst, int maxOpenAttempts, Duration openAttemptTimeout,
                        Duration idleTimeout) {
        if (inboundRate <= 0 || inboundBurst <= 0 || maxOpenAttempts <= 0 || openAttemptTimeout.toNanos() <= 0
                || idleTimeout.toMillis() <= 0) {
            throw new IllegalArgumentException("every worker limit must be positive");
        }
        this.inboundRate = inboundRate;
        this.inboundBurst = inboundBurst;
        this.maxOpenAttempts = maxOpenAttempts;
        this.openAttemptTimeoutNanos = openAttemptTimeout.toNanos();
        this.idleTimeoutMillis = idleTimeout.toMillis();
    }

    long inboundRate() {
        return inboundRate;
    }

    long inboundBurst() {
        return inboundBurst;
    }

    int maxOpenAttempts() {
        return maxOpenAttempts;
    }

    long openAttemptTimeoutNanos() {
        return openAttemptTimeoutNanos;
    }

    long idleTimeoutMillis() {
        return idleTimeoutMillis;
    }

    void throttled() {
        throttledReads.increment();
    }

    void refusedOverOpenAttempts() {
        openAttemptRefusals.increment();
    }

    void closedIdle() {
        idleCloses.increment();
    }

    /** Returns how often a connection's reads were paused because it sent faster than its rate. */
    public long getThrottledReads() {
        return throttledReads.sum();
    }

    /** Returns how many log batches were refused because their connection had its most attempts open. */
    public long getOpenAttemptRefusals() {
        return openAttemptRefusals.sum();
    }

    /** Returns how many authenticated connections were closed for sending nothing for the idle timeout. */
    public long getIdleCloses() {
        return idleCloses.sum();
    }
}
