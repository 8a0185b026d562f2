package io.rlscheduler.worker;

import io.rlscheduler.core.internal.Checks;
import io.rlscheduler.store.ArtifactStores;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Immutable settings of a worker's artifact transfers: which store, how checkpoints are committed,
 * kept and limited, and how outputs are limited. Thread-safe.
 *
 * <pre>
 *  setting                 default                  unit / range
 *  ----------------------  -----------------------  ------------------------------------------------
 *  store                   the masters' published   a store URI (file:/srv/runs, s3://bucket/prefix);
 *                          store                      unset: the URI the masters publish in Redis
 *  storeSettings           none                     this machine's settings of the store
 *                                                     (credentials, endpoint); never published
 *  checkpointsKept         2                        committed checkpoints kept per task; 1 to 1000
 *  checkpointQuietPeriod   30 s                     a checkpoint directory unchanged this long is
 *                                                     committed for scripts that print no
 *                                                     RLS_CHECKPOINT line; 0 (off) to 1 h
 *  maxCheckpointFiles      10,000                   files in one checkpoint; 1 to 1,000,000
 *  maxCheckpointBytes      256 GiB                  bytes a task's kept checkpoints hold together
 *                                                     (a task's spec may set its own); 1 to 2^50
 *  maxOutputFiles          10,000                   files uploaded of an attempt's run directory;
 *                                                     1 to 1,000,000
 *  maxOutputBytes          16 GiB                   bytes uploaded of an attempt's run directory;
 *                                                     1 to 2^50
 *  transferThreads         4                        files sent or fetched at once; 1 to 64
 *  retryBackoff            1 s, 1 min               first and longest wait between retries of a
 *                                                     transfer the store refused (doubling)
 *  checkpointEndWait       10 s                     how long an attempt's end waits for its
 *                                                     checkpoints in flight to be committed or
 *                                                     refused, so that its log and record say
 *                                                     which; 0 (no wait) to 10 min
 * </pre>
 */
public final class ArtifactOptions {

    /** Default of committed checkpoints kept per task. */
    public static final int DEFAULT_CHECKPOINTS_KEPT = 2;
    /** Default quiet period after which an unmarked checkpoint directory is committed. */
    public static final Duration DEFAULT_CHECKPOINT_QUIET_PERIOD = Duration.ofSeconds(30);
    /** Default of files in one checkpoint. */
    public static final int DEFAULT_MAX_CHECKPOINT_FILES = 10_000;
    /** Default of bytes a task's kept checkpoints hold together: 256 GiB. */
    public static final long DEFAULT_MAX_CHECKPOINT_BYTES = 256L << 30;
    /** Default of files of an attempt's outputs. */
    public static final int DEFAULT_MAX_OUTPUT_FILES = 10_000;
    /** Default of bytes of an attempt's outputs: 16 GiB. */
    public static final long DEFAULT_MAX_OUTPUT_BYTES = 16L << 30;
    /** Default of files transferred at once. */
    public static final int DEFAULT_TRANSFER_THREADS = 4;
    /** Default first wait before a refused transfer is retried. */
    public static final Duration DEFAULT_RETRY_MIN = Duration.ofSeconds(1);
    /** Default longest wait between retries. */
    public static final Duration DEFAULT_RETRY_MAX = Duration.ofMinutes(1);

    /** Default of how long an attempt's end waits for its checkpoints in flight. */
    public static final Duration DEFAULT_CHECKPOINT_END_WAIT = Duration.ofSeconds(10);

    private static final long MAX_BYTES = 1L << 50;

    private final String store;
    private final Map<String, String> storeSettings;
    private final int checkpointsKept;
    private final Duration checkpointQuietPeriod;
    private final int maxCheckpointFiles;
    private final long maxCheckpointBytes;
    private final int maxOutputFiles;
    private final long maxOutputBytes;
    private final int transferThreads;
    private final Duration retryMin;
    private final Duration retryMax;
    private final Duration checkpointEndWait;

    private ArtifactOptions(Builder b) {
        this.store = b.store;
        this.storeSettings = b.storeSettings;
        this.checkpointsKept = b.checkpointsKept;
        this.checkpointQuietPeriod = b.checkpointQuietPeriod;
        this.maxCheckpointFiles = b.maxCheckpointFiles;
        this.maxCheckpointBytes = b.maxCheckpointBytes;
        this.maxOutputFiles = b.maxOutputFiles;
        this.maxOutputBytes = b.maxOutputBytes;
        this.transferThreads = b.transferThreads;
        this.retryMin = b.retryMin;
        this.retryMax = b.retryMax;
        this.checkpointEndWait = b.checkpointEndWait;
    }

    /** Returns the defaults. */
    public static ArtifactOptions defaults() {
        return builder().build();
    }

    /** Returns a builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns a builder holding these settings. */
    public Builder mutate() {
        Builder b = new Builder();
        b.store = store;
        b.storeSettings = storeSettings;
        b.checkpointsKept = checkpointsKept;
        b.checkpointQuietPeriod = checkpointQuietPeriod;
        b.maxCheckpointFiles = maxCheckpointFiles;
        b.maxCheckpointBytes = maxCheckpointBytes;
        b.maxOutputFiles = maxOutputFiles;
        b.maxOutputBytes = maxOutputBytes;
        b.transferThreads = transferThreads;
        b.retryMin = retryMin;
        b.retryMax = retryMax;
        b.checkpointEndWait = checkpointEndWait;
        return b;
    }

    /** Returns the store's URI as set, or null for the one the masters publish. */
    public String getStore() { return store; }
    /** Returns this machine's settings of the store; unmodifiable. */
    public Map<String, String> getStoreSettings() { return storeSettings; }
    public int getCheckpointsKept() { return checkpointsKept; }
    /** Returns the quiet period, {@link Duration#ZERO} when unmarked directories are committed only at the end. */
    public Duration getCheckpointQuietPeriod() { return checkpointQuietPeriod; }
    public int getMaxCheckpointFiles() { return maxCheckpointFiles; }
    public long getMaxCheckpointBytes() { return maxCheckpointBytes; }
    public int getMaxOutputFiles() { return maxOutputFiles; }
    public long getMaxOutputBytes() { return maxOutputBytes; }
    public int getTransferThreads() { return transferThreads; }
    public Duration getRetryMin() { return retryMin; }
    public Duration getRetryMax() { return retryMax; }
    /** Returns how long an attempt's end waits for its checkpoints in flight; {@link Duration#ZERO} for not at all. */
    public Duration getCheckpointEndWait() { return checkpointEndWait; }

    /** Returns the settings, the store's settings' values left out. */
    @Override
    public String toString() {
        return "ArtifactOptions{store=" + (store == null ? "published" : store) + ", storeSettings=" + storeSettings.keySet()
                + ", checkpointsKept=" + checkpointsKept + ", checkpointQuietPeriod=" + checkpointQuietPeriod
                + ", maxCheckpointFiles=" + maxCheckpointFiles + ", maxCheckpointBytes=" + maxCheckpointBytes
                + ", maxOutputFiles=" + maxOutputFiles + ", maxOutputBytes=" + maxOutputBytes
                + ", transferThreads=" + transferThreads + ", retryBackoff=" + retryMin + ".." + retryMax + ", checkpointEndWait=" + checkpointEndWait + '}';
    }

    /** Builds {@link ArtifactOptions}; each setter validates at once. Not thread-safe. */
    public static final class Builder {
        private String store;
        private Map<String, String> storeSettings = Map.of();
        private int checkpointsKept = DEFAULT_CHECKPOINTS_KEPT;
        private Duration checkpointQuietPeriod = DEFAULT_CHECKPOINT_QUIET_PERIOD;
        private int maxCheckpointFiles = DEFAULT_MAX_CHECKPOINT_FILES;
        private long maxCheckpointBytes = DEFAULT_MAX_CHECKPOINT_BYTES;
        private int maxOutputFiles = DEFAULT_MAX_OUTPUT_FILES;
        private long maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES;
        private int transferThreads = DEFAULT_TRANSFER_THREADS;
        private Duration retryMin = DEFAULT_RETRY_MIN;
        private Duration retryMax = DEFAULT_RETRY_MAX;
        private Duration checkpointEndWait = DEFAULT_CHECKPOINT_END_WAIT;

        private Builder() {
        }

        /**
         * Sets the store's URI ({@code file:/srv/runs}, a plain path, {@code s3://bucket/prefix});
         * default: the one the masters publish.
         *
         * @throws IllegalArgumentException if it is not a store URI
         */
        public Builder store(String uri) {
            ArtifactStores.parse(uri);
            this.store = uri;
            return this;
        }

        /** Sets this machine's settings of the store (credentials, endpoint; see the store's docs). */
        public Builder storeSettings(Map<String, String> settings) {
            this.storeSettings = Map.copyOf(settings);
            return this;
        }

        /** Sets how many committed checkpoints are kept per task; default 2, 1 to 1000. */
        public Builder checkpointsKept(int kept) {
            this.checkpointsKept = Checks.range(kept, 1, 1000, "checkpointsKept");
            return this;
        }

        /** Sets the quiet period for unmarked checkpoint directories; default 30 s, 0 (off) to 1 h. */
        public Builder checkpointQuietPeriod(Duration period) {
            this.checkpointQuietPeriod = period.isZero() ? Duration.ZERO
                    : Checks.range(period, Duration.ofMillis(10), Duration.ofHours(1), "checkpointQuietPeriod");
            return this;
        }

        /** Sets the most files in one checkpoint; default 10,000, 1 to 1,000,000. */
        public Builder maxCheckpointFiles(int files) {
            this.maxCheckpointFiles = Checks.range(files, 1, 1_000_000, "maxCheckpointFiles");
            return this;
        }

        /**
         * Sets the most bytes a task's kept checkpoints may hold together (a task's spec may set its
         * own); a checkpoint that would exceed it is not committed, and the task record says why.
         * Default 256 GiB, 1 to 2^50.
         */
        public Builder maxCheckpointBytes(long bytes) {
            this.maxCheckpointBytes = bytes(bytes, "maxCheckpointBytes");
            return this;
        }

        /** Sets the most files uploaded of an attempt's outputs; default 10,000, 1 to 1,000,000. */
        public Builder maxOutputFiles(int files) {
            this.maxOutputFiles = Checks.range(files, 1, 1_000_000, "maxOutputFiles");
            return this;
        }

        /** Sets the most bytes uploaded of an attempt's outputs; default 16 GiB, 1 to 2^50. */
        public Builder maxOutputBytes(long bytes) {
            this.maxOutputBytes = bytes(bytes, "maxOutputBytes");
            return this;
        }

        /** Sets how many files are transferred at once; default 4, 1 to 64. */
        public Builder transferThreads(int threads) {
            this.transferThreads = Checks.range(threads, 1, 64, "transferThreads");
            return this;
        }

        /** Sets the first and longest wait between retries of a refused transfer; default 1 s and 1 min, each 1 ms to 1 h. */
        public Builder retryBackoff(Duration min, Duration max) {
            Checks.range(min, Duration.ofMillis(1), Duration.ofHours(1), "retryBackoff min");
            Checks.range(max, Duration.ofMillis(1), Duration.ofHours(1), "retryBackoff max");
            if (min.compareTo(max) > 0) {
                throw new IllegalArgumentException("retryBackoff min must not exceed max, were " + min + ", " + max);
            }
            this.retryMin = min;
            this.retryMax = max;
            return this;
        }

        /**
         * Sets how long an attempt's end waits for the checkpoints it took and that are still being
         * sent: until each is committed or refused, the task's end is not recorded, so its result
         * names its last checkpoint and its log says what became of each one. A store that stays
         * down longer does not hold the end up beyond this. Default 10 s, 0 (no wait) to 10 min.
         */
        public Builder checkpointEndWait(Duration wait) {
            this.checkpointEndWait = wait.isZero() ? Duration.ZERO
                    : Checks.range(wait, Duration.ofMillis(1), Duration.ofMinutes(10), "checkpointEndWait");
            return this;
        }

        private static long bytes(long bytes, String name) {
            if (bytes < 1 || bytes > MAX_BYTES) {
                throw new IllegalArgumentException(name + " must be between 1 and 2^50, was " + bytes);
            }
            return bytes;
        }

        /** Returns the options. */
        public ArtifactOptions build() {
            Objects.requireNonNull(storeSettings);
            return new ArtifactOptions(this);
        }
    }
}
