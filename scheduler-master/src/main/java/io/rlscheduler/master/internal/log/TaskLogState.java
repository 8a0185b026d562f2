package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * What the log manager knows of one task's log. Confined to the task's I/O thread: no field is
 * read or written by any other thread, so nothing here is synchronized. Everything in it except
 * {@link #followers}, a pending completion, a pending marker and a silent end can be rebuilt from
 * the file (see {@link TaskLogManager}, "Recovery"); a pending marker is written before the state
 * is dropped from the cache, and a silent end (an attempt that ended complete without a line, on a
 * task without a file) is what the task record tells afterwards (the manager's record lookup).
 */
final class TaskLogState {

    final String taskId;
    final Path path;

    /** The state must be re-read from the file before use (first touch, or after an I/O error). */
    boolean needsRecovery = true;
    /** The current (highest known) epoch; -1 when no attempt has started. */
    long epoch = -1;
    /** The current attempt's number; 0 when not known. */
    int attempt;
    /** The highest sequence number of the current attempt written, all below it written too. */
    long lastSequence;
    /** The file's length in bytes: every byte up to here is a complete line. */
    long length;

    /** With a completion pending: the attempt's final sequence number; -1 when none is pending. */
    long pendingEndSequence = -1;
    String pendingFinalState;

    /** The END_OF_STREAM record of the current attempt once it ended; null while it runs. */
    LogRecord ended;
    /** Lines above this sequence are not written (the attempt ended complete at it). */
    long sequenceLimit = Long.MAX_VALUE;

    /**
     * The current attempt's marker is not in the file yet: it is written with the attempt's first
     * line, or with its end unless the attempt ends complete without a line and there is no file
     * (see {@link TaskLogManager}, "Files").
     */
    boolean markerPending;
    /**
     * The pending marker's {@code after}: the lines up to it are not in this file (another
     * master acknowledged them); 0 for a marker that starts the attempt's lines at 1.
     */
    long markerAfter;
    /** The trace id for the file's first line, kept while the marker is pending. */
    String traceId;

    /**
     * The task's record was looked up for this state (see {@code TaskLogManager.RecordLookup}):
     * not asked again while the state is cached, even if the record told nothing.
     */
    boolean recordLookedUp;

    /** The open append channel, or null while closed. */
    FileChannel writer;

    /** Followers receiving this task's lines live, in subscription order. */
    final Set<LogFollower> followers = new LinkedHashSet<>();

    TaskLogState(String taskId, Path path) {
        this.taskId = taskId;
        this.path = path;
    }

    /** Returns whether dropping this state loses nothing the file cannot give back. */
    boolean isEvictable() {
        return followers.isEmpty() && pendingEndSequence < 0;
    }

    /** Starts a new attempt in memory, its marker already in the file (the caller marks it pending if not). */
    void startAttempt(long newEpoch, int newAttempt) {
        markerPending = false;
        markerAfter = 0;
        traceId = null;
        epoch = newEpoch;
        attempt = newAttempt;
        lastSequence = 0;
        pendingEndSequence = -1;
        pendingFinalState = null;
        ended = null;
        sequenceLimit = Long.MAX_VALUE;
    }
}
