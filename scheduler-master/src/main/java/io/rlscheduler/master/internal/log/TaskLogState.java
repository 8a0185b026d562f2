package io.rlscheduler.master.internal.log;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * What the log manager knows of one task's log: the current attempt, its {@link LogPhase} and
 * the data of that phase, and where the file stands. The phase changes only in
 * {@link #moveTo}, called by the four methods that start, expect the end of, end and forget an
 * attempt; each sets the data that belongs to the phase it moves to.
 *
 * <p>Confined to the task's I/O thread ({@link LogStripe}): nothing here is synchronized.
 * Everything except {@link #followers}, a pending completion, a pending marker and a silent end
 * can be rebuilt from the file ({@link LogRecovery}); a pending marker is written before the state
 * is dropped from the cache, and a silent end (an attempt that ended complete without a line, on
 * a task without a file) is what the task record tells afterwards ({@link RecordLookups}).
 */
final class TaskLogState {

    /**
     * An attempt marker that is due in the file but not written yet: it goes in with the next
     * line or the end.
     *
     * @param traceId the trace id for the file's first line, if the file is still empty
     * @param after   the lines up to this sequence are not in this file (another master
     *                acknowledged them); 0 for a marker that starts the attempt's lines at 1
     */
    record PendingMarker(String traceId, long after) {
    }

    final String taskId;
    final Path path;

    /**
     * The state must be read from the file again before use (first touch, an I/O error, a write
     * by another master). Not a phase: a state in any phase can be out of date.
     */
    boolean needsRecovery = true;
    /** The highest sequence number of the current attempt written, all below it written too. */
    long lastSequence;
    /** The file's length in bytes: every byte up to here is a complete line. */
    long length;
    /**
     * Bytes after {@link #length} that the last read found to be a line without its end (a crash
     * cut it short, or another master sharing the directory is writing it): left in the file until
     * this master appends ({@link LogFileWriter#open} cuts them off then), so a master that only
     * reads never cuts what another is writing.
     */
    long incompleteTail;
    /** The current attempt's marker not yet in the file, or null (see {@link PendingMarker}). */
    PendingMarker marker;
    /**
     * The task's record was looked up for this state ({@link RecordLookups}): not asked again
     * while the state is cached, even if the record told nothing.
     */
    boolean recordLookedUp;
    /**
     * Where the file was cut at the task's size limit: the bytes before its cut marker; -1 while
     * not cut. A property of the file, not of an attempt (the limit is per task): once cut, no
     * output line of any attempt is written again ({@link LogSizeLimit}).
     */
    long cutAt = -1;
    /** The open append channel, or null while closed ({@link LogFileWriter}). */
    FileChannel writer;
    /** Followers receiving this task's lines live, in subscription order. */
    final Set<LogFollower> followers = new LinkedHashSet<>();

    private LogPhase phase = LogPhase.NONE;
    private long epoch = -1;
    private int attempt;
    private long pendingEndSequence = -1;
    private TaskState pendingFinalState;
    private LogRecord endRecord;
    private long sequenceLimit = Long.MAX_VALUE;

    TaskLogState(String taskId, Path path) {
        this.taskId = taskId;
        this.path = path;
    }

    /** Returns the current attempt's phase. */
    LogPhase phase() {
        return phase;
    }

    /** Returns the current (highest known) epoch; -1 when no attempt has started. */
    long epoch() {
        return epoch;
    }

    /** Returns the current attempt's number; 0 when not known. */
    int attempt() {
        return attempt;
    }

    /** Returns, while {@link LogPhase#ENDING}, the attempt's last sequence number as its worker recorded it. */
    long pendingEndSequence() {
        return pendingEndSequence;
    }

    /** Returns, while {@link LogPhase#ENDING}, the state the attempt ended in. */
    TaskState pendingFinalState() {
        return pendingFinalState;
    }

    /** Returns, once {@link LogPhase#ENDED}, the END_OF_STREAM record of the attempt; null before. */
    LogRecord endRecord() {
        return endRecord;
    }

    /** Returns the highest sequence number written: the attempt's last once it ended complete. */
    long sequenceLimit() {
        return sequenceLimit;
    }

    /** No file (or an empty one) and no attempt started, ended or pending here. */
    boolean knowsNothing() {
        return length == 0 && phase == LogPhase.NONE;
    }

    /** Returns whether the file was cut at the task's size limit. */
    boolean isCut() {
        return cutAt >= 0;
    }

    /** Returns whether dropping this state loses nothing the file cannot give back. */
    boolean isEvictable() {
        return followers.isEmpty() && phase != LogPhase.ENDING;
    }

    /** Starts a new attempt in memory, its marker already in the file (the caller sets {@link #marker} if not). */
    void startAttempt(long newEpoch, int newAttempt) {
        moveTo(LogPhase.RUNNING);
        marker = null;
        epoch = newEpoch;
        attempt = newAttempt;
        lastSequence = 0;
        clearEnd();
    }

    /** The attempt's worker recorded its end at {@code endSequence}: it ends once the lines up to it are written. */
    void expectEnd(long endSequence, TaskState finalState) {
        moveTo(LogPhase.ENDING);
        pendingEndSequence = endSequence;
        pendingFinalState = finalState;
    }

    /**
     * The attempt ended.
     *
     * @param record the END_OF_STREAM record for its followers
     * @param limit  the highest sequence number written from now on
     */
    void end(LogRecord record, long limit) {
        moveTo(LogPhase.ENDED);
        pendingEndSequence = -1;
        pendingFinalState = null;
        endRecord = record;
        sequenceLimit = limit;
    }

    /** Forgets the attempt, before the state is read again from the file. */
    void forget() {
        moveTo(LogPhase.NONE);
        marker = null;
        epoch = -1;
        attempt = 0;
        lastSequence = 0;
        clearEnd();
    }

    private void clearEnd() {
        pendingEndSequence = -1;
        pendingFinalState = null;
        endRecord = null;
        sequenceLimit = Long.MAX_VALUE;
    }

    /** The one writer of {@link #phase}. */
    private void moveTo(LogPhase target) {
        phase = phase.moveTo(target);
    }
}
