package io.rlscheduler.core;

import java.util.List;

/**
 * What one attempt left in its run directory, as its worker recorded it in Redis after it stored
 * them in the artifact store: where the manifest is, how many files and bytes, and whether that
 * is all of them ({@link #isComplete()}) or why not. The manifest (JSON, format
 * {@code rls-outputs/1}) lists every stored file with its size and SHA-256, and up to 1,000 of the
 * entries left out with why. Read with {@code ArtifactRecords#outputs(String)}. Immutable.
 */
public final class AttemptOutputs {

    /** The most entries left out that the record itself lists ({@link #getSkipped()}): {@value}. */
    public static final int MAX_LISTED = 20;

    private final int attempt;
    private final long epoch;
    private final String workerId;
    private final OutputsState state;
    private final String manifestKey;
    private final int files;
    private final long bytes;
    private final String error;
    private final List<String> skipped;
    private final int skippedCount;
    private final long updatedAtMillis;

    AttemptOutputs(int attempt, long epoch, String workerId, OutputsState state, String manifestKey, int files,
                   long bytes, String error, List<String> skipped, int skippedCount, long updatedAtMillis) {
        this.attempt = attempt;
        this.epoch = epoch;
        this.workerId = workerId;
        this.state = state;
        this.manifestKey = manifestKey;
        this.files = files;
        this.bytes = bytes;
        this.error = error;
        this.skipped = List.copyOf(skipped);
        this.skippedCount = skippedCount;
        this.updatedAtMillis = updatedAtMillis;
    }

    /** Returns the attempt's number, from 1. */
    public int getAttempt() {
        return attempt;
    }

    /** Returns the fencing epoch the attempt ran under. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the worker that ran the attempt and stored its outputs. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns where the upload stands. */
    public OutputsState getState() {
        return state;
    }

    /** Returns whether every regular file of the run directory is in the store ({@link OutputsState#COMPLETE}). */
    public boolean isComplete() {
        return state == OutputsState.COMPLETE;
    }

    /** Returns the manifest's key in the artifact store (stored once the state is final). */
    public String getManifestKey() {
        return manifestKey;
    }

    /** Returns how many files are stored; while {@link OutputsState#PENDING}, how many are to be. */
    public int getFiles() {
        return files;
    }

    /** Returns their total size in bytes; while {@link OutputsState#PENDING}, of those to be stored. */
    public long getBytes() {
        return bytes;
    }

    /**
     * Returns why the outputs are incomplete (each limit exceeded, named with its value; files
     * left out and why) or, while pending, why the upload waits; the empty string when neither.
     */
    public String getError() {
        return error;
    }

    /**
     * Returns up to {@value #MAX_LISTED} of the entries left out, in path order, each
     * {@code "path: why"} (control characters of a path written as {@code \xNN}); unmodifiable.
     * Symbolic links and other non-regular files are listed here without making the outputs
     * incomplete: they hold none of the run's bytes.
     */
    public List<String> getSkipped() {
        return skipped;
    }

    /** Returns how many entries were left out in all. */
    public int getSkippedCount() {
        return skippedCount;
    }

    /** Returns when the record was last written, in ms since the epoch by the Redis clock. */
    public long getUpdatedAtMillis() {
        return updatedAtMillis;
    }

    @Override
    public String toString() {
        return "AttemptOutputs{attempt=" + attempt + ", epoch=" + epoch + ", workerId=" + workerId + ", state=" + state
                + ", manifestKey=" + manifestKey + ", files=" + files + ", bytes=" + bytes + ", error=" + error
                + ", skippedCount=" + skippedCount + ", updatedAtMillis=" + updatedAtMillis + '}';
    }
}
