package io.rlscheduler.master;

import java.util.Objects;

/**
 * One stored artifact of a run, as {@link TaskHandle#artifacts()} lists it: a file of a committed
 * checkpoint, a file an attempt left in its run directory (an output), or the run's ended log.
 * Immutable.
 */
public final class Artifact {

    /** What an artifact is. */
    public enum Kind {
        /** A file of a committed checkpoint; {@link #getPath()} is relative to the checkpoint directory. */
        CHECKPOINT,
        /** A file an attempt wrote in its run directory; {@link #getPath()} is relative to it. */
        OUTPUT,
        /** The run's log, once it ended, in the master's log file format ({@link LogFiles}). */
        LOG
    }

    private final Kind kind;
    private final int attempt;
    private final String checkpointId;
    private final String path;
    private final String key;
    private final long size;
    private final String sha256;

    Artifact(Kind kind, int attempt, String checkpointId, String path, String key, long size, String sha256) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.attempt = attempt;
        this.checkpointId = checkpointId;
        this.path = Objects.requireNonNull(path, "path");
        this.key = Objects.requireNonNull(key, "key");
        this.size = size;
        this.sha256 = sha256;
    }

    public Kind getKind() { return kind; }
    /** Returns the attempt that made it, 0 for the log (all attempts). */
    public int getAttempt() { return attempt; }
    /** Returns the checkpoint's id ({@code e<epoch>-<n>}) for a checkpoint file, else null. */
    public String getCheckpointId() { return checkpointId; }
    /** Returns its path: within the checkpoint or run directory, or the log's file name. */
    public String getPath() { return path; }
    /** Returns its key in the artifact store. */
    public String getKey() { return key; }
    /** Returns its size in bytes. */
    public long getSize() { return size; }
    /** Returns the SHA-256 of its bytes (lower-case hex) as its manifest records it; null for the log, which has no manifest. */
    public String getSha256() { return sha256; }

    @Override
    public String toString() {
        return kind + " " + (checkpointId != null ? checkpointId + " " : attempt > 0 ? "attempt " + attempt + " " : "")
                + path + " (" + size + " bytes)";
    }
}
