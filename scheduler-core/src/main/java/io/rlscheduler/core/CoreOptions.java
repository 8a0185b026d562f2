package io.rlscheduler.core;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Immutable settings of the lease core. Thread-safe; share one instance.
 *
 * <pre>
 *  setting               default   unit / range
 *  --------------------  --------  ----------------------------------------------------------
 *  namespace             rls       key prefix and Redis Cluster hash tag: {rls}:...
 *  heartbeatInterval     10 s      how often workers heartbeat; must be below livenessLease
 *  livenessLease         30 s      a worker missing heartbeats this long is no longer live
 *  taskLease             120 s     a running task not renewed this long is taken back;
 *                                  at least livenessLease
 *  ackTimeout            30 s      a claimed task not acknowledged this long goes back to the queue
 *  maxAttempts           3         assignments of a task before a further loss fails it
 *  maxLeaseLosses        2         lease losses tolerated; one more fails the task
 *  claimScanLimit        100       queued tasks one claim looks at, in queue order
 *  reapBatchSize         500       expired tasks one reaper call handles
 *  eventStreamMaxLength  100000    stream entries kept (approximate trimming); an entry holds one
 *                                  task transition, or up to 64 of one script run
 *  requestTtl            10 min    how long a claim's answer is kept for replays
 * </pre>
 */
public final class CoreOptions {

    public static final String DEFAULT_NAMESPACE = "rls";
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(10);
    public static final Duration DEFAULT_LIVENESS_LEASE = Duration.ofSeconds(30);
    public static final Duration DEFAULT_TASK_LEASE = Duration.ofSeconds(120);
    public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_ATTEMPTS = 3;
    public static final int DEFAULT_MAX_LEASE_LOSSES = 2;
    public static final int DEFAULT_CLAIM_SCAN_LIMIT = 100;
    public static final int DEFAULT_REAP_BATCH_SIZE = 500;
    public static final int DEFAULT_EVENT_STREAM_MAX_LENGTH = 100_000;
    public static final Duration DEFAULT_REQUEST_TTL = Duration.ofMinutes(10);

    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final String namespace;
    private final Duration heartbeatInterval;
    private final Duration livenessLease;
    private final Duration taskLease;
    private final Duration ackTimeout;
    private final int maxAttempts;
    private final int maxLeaseLosses;
    private final int claimScanLimit;
    private final int reapBatchSize;
    private final int eventStreamMaxLength;
    private final Duration requestTtl;

    private CoreOptions(Builder b) {
        this.namespace = b.namespace;
        this.heartbeatInterval = b.heartbeatInterval;
        this.livenessLease = b.livenessLease;
        this.taskLease = b.taskLease;
        this.ackTimeout = b.ackTimeout;
        this.maxAttempts = b.maxAttempts;
        this.maxLeaseLosses = b.maxLeaseLosses;
        this.claimScanLimit = b.claimScanLimit;
        this.reapBatchSize = b.reapBatchSize;
        this.eventStreamMaxLength = b.eventStreamMaxLength;
        this.requestTtl = b.requestTtl;
    }

    /** Returns a builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns options with every setting at its default. */
    public static CoreOptions defaults() {
        return builder().build();
    }

    /** Returns a builder holding these settings. */
    public Builder mutate() {
        Builder b = new Builder();
        b.namespace = namespace;
        b.heartbeatInterval = heartbeatInterval;
        b.livenessLease = livenessLease;
        b.taskLease = taskLease;
        b.ackTimeout = ackTimeout;
        b.maxAttempts = maxAttempts;
        b.maxLeaseLosses = maxLeaseLosses;
        b.claimScanLimit = claimScanLimit;
        b.reapBatchSize = reapBatchSize;
        b.eventStreamMaxLength = eventStreamMaxLength;
        b.requestTtl = requestTtl;
        return b;
    }

    public String getNamespace() { return namespace; }
    public Duration getHeartbeatInterval() { return heartbeatInterval; }
    public Duration getLivenessLease() { return livenessLease; }
    public Duration getTaskLease() { return taskLease; }
    public Duration getAckTimeout() { return ackTimeout; }
    public int getMaxAttempts() { return maxAttempts; }
    public int getMaxLeaseLosses() { return maxLeaseLosses; }
    public int getClaimScanLimit() { return claimScanLimit; }
    public int getReapBatchSize() { return reapBatchSize; }
    public int getEventStreamMaxLength() { return eventStreamMaxLength; }
    public Duration getRequestTtl() { return requestTtl; }

    @Override
    public String toString() {
        return "CoreOptions{namespace=" + namespace + ", heartbeatInterval=" + heartbeatInterval
                + ", livenessLease=" + livenessLease + ", taskLease=" + taskLease + ", ackTimeout=" + ackTimeout
                + ", maxAttempts=" + maxAttempts + ", maxLeaseLosses=" + maxLeaseLosses
                + ", claimScanLimit=" + claimScanLimit + ", reapBatchSize=" + reapBatchSize
                + ", eventStreamMaxLength=" + eventStreamMaxLength + ", requestTtl=" + requestTtl + '}';
    }

    /** Builds {@link CoreOptions}; each setter validates at once, {@link #build()} across fields. Not thread-safe. */
    public static final class Builder {
        private String namespace = DEFAULT_NAMESPACE;
        private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
        private Duration livenessLease = DEFAULT_LIVENESS_LEASE;
        private Duration taskLease = DEFAULT_TASK_LEASE;
        private Duration ackTimeout = DEFAULT_ACK_TIMEOUT;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private int maxLeaseLosses = DEFAULT_MAX_LEASE_LOSSES;
        private int claimScanLimit = DEFAULT_CLAIM_SCAN_LIMIT;
        private int reapBatchSize = DEFAULT_REAP_BATCH_SIZE;
        private int eventStreamMaxLength = DEFAULT_EVENT_STREAM_MAX_LENGTH;
        private Duration requestTtl = DEFAULT_REQUEST_TTL;

        private Builder() {
        }

        /** Sets the namespace: 1 to 64 characters of letters, digits, '.', '_' and '-'. */
        public Builder namespace(String namespace) {
            Objects.requireNonNull(namespace, "namespace");
            if (!NAMESPACE.matcher(namespace).matches()) {
                throw new IllegalArgumentException("namespace must be 1 to 64 of [A-Za-z0-9._-], was '" + namespace + "'");
            }
            this.namespace = namespace;
            return this;
        }

        /** Sets how often workers heartbeat; positive. */
        public Builder heartbeatInterval(Duration interval) {
            this.heartbeatInterval = positive(interval, "heartbeatInterval");
            return this;
        }

        /** Sets the liveness lease; positive. */
        public Builder livenessLease(Duration lease) {
            this.livenessLease = positive(lease, "livenessLease");
            return this;
        }

        /** Sets the task lease; positive. */
        public Builder taskLease(Duration lease) {
            this.taskLease = positive(lease, "taskLease");
            return this;
        }

        /** Sets how long a claimed task may wait for its acknowledgement; positive. */
        public Builder ackTimeout(Duration timeout) {
            this.ackTimeout = positive(timeout, "ackTimeout");
            return this;
        }

        /** Sets the default number of assignments per task, 1 to 1000. */
        public Builder maxAttempts(int attempts) {
            this.maxAttempts = range(attempts, 1, 1000, "maxAttempts");
            return this;
        }

        /** Sets the default number of tolerated lease losses per task, 0 to 1000. */
        public Builder maxLeaseLosses(int losses) {
            this.maxLeaseLosses = range(losses, 0, 1000, "maxLeaseLosses");
            return this;
        }

        /** Sets how many queued tasks one claim examines, 1 to 10,000. */
        public Builder claimScanLimit(int limit) {
            this.claimScanLimit = range(limit, 1, 10_000, "claimScanLimit");
            return this;
        }

        /** Sets how many expired tasks one reaper call handles, 1 to 100,000. */
        public Builder reapBatchSize(int size) {
            this.reapBatchSize = range(size, 1, 100_000, "reapBatchSize");
            return this;
        }

        /** Sets how many entries the event stream keeps, 100 to 100,000,000 (an entry holds one to 64 events). */
        public Builder eventStreamMaxLength(int length) {
            this.eventStreamMaxLength = range(length, 100, 100_000_000, "eventStreamMaxLength");
            return this;
        }

        /** Sets how long a claim's answer is kept for replays; positive. */
        public Builder requestTtl(Duration ttl) {
            this.requestTtl = positive(ttl, "requestTtl");
            return this;
        }

        /**
         * Returns the options.
         *
         * @throws IllegalArgumentException unless heartbeatInterval &lt; livenessLease &lt;= taskLease
         */
        public CoreOptions build() {
            if (heartbeatInterval.compareTo(livenessLease) >= 0) {
                throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval
                        + ") must be shorter than livenessLease (" + livenessLease + ")");
            }
            if (livenessLease.compareTo(taskLease) > 0) {
                throw new IllegalArgumentException("livenessLease (" + livenessLease
                        + ") must not be longer than taskLease (" + taskLease + ")");
            }
            return new CoreOptions(this);
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero() || d.toMillis() < 1) {
                throw new IllegalArgumentException(name + " must be at least 1 ms, was " + d);
            }
            return d;
        }

        private static int range(int value, int min, int max, String name) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
            }
            return value;
        }
    }
}
