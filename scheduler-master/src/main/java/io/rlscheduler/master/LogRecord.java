package io.rlscheduler.master;

import io.rlscheduler.core.TaskState;
import java.util.Objects;

/**
 * One record delivered to a task log follower: an output line of the task, or the end of the
 * stream. Immutable and thread-safe.
 *
 * <p>A follower sees the LINE records of each attempt in sequence order (1, 2, 3, ... per
 * attempt, attempts in the order they ran), then exactly one {@link Kind#END_OF_STREAM} record,
 * which is always the last one. An END_OF_STREAM says whether the log is known to be complete
 * ({@link #isComplete()}): true only when the attempt's worker recorded its end and every line up
 * to its final sequence number was written; false when the task was ended without its worker
 * (the log may lack lines), when the follow was closed, or when the log manager shut down. An
 * END_OF_STREAM also says whether the master cut the task's log at its size limit
 * ({@link #isLogCut()}): the lines after the cut were not kept, and the log is then complete only
 * if the attempt printed none after it.
 */
public final class LogRecord {

    /** What a record is. */
    public enum Kind {
        /** One line of the task's output. */
        LINE,
        /** The end of the stream: no record follows. */
        END_OF_STREAM
    }

    /** The stream an output line was written to. */
    public enum Stream {
        /** The task's standard output. */
        STDOUT,
        /** The task's standard error. */
        STDERR,
        /**
         * Not known: a line read back from the log file (which does not store the stream), a line
         * whose worker did not say, and every END_OF_STREAM.
         */
        UNKNOWN
    }

    private final Kind kind;
    private final String taskId;
    private final int attempt;
    private final long epoch;
    private final long sequence;
    private final Stream stream;
    private final String text;
    private final TaskState finalState;
    private final boolean complete;
    private final String note;
    private final long logCutAt;

    private LogRecord(Kind kind, String taskId, int attempt, long epoch, long sequence, Stream stream,
            String text, TaskState finalState, boolean complete, String note, long logCutAt) {
        this.kind = kind;
        this.taskId = Objects.requireNonNull(taskId, "taskId");
        this.attempt = attempt;
        this.epoch = epoch;
        this.sequence = sequence;
        this.stream = stream;
        this.text = text;
        this.finalState = finalState;
        this.complete = complete;
        this.note = note;
        this.logCutAt = logCutAt;
    }

    /**
     * Returns a LINE record.
     *
     * @param taskId   the task; must not be null
     * @param attempt  the attempt number, 0 when not known
     * @param epoch    the lease epoch of the attempt
     * @param sequence the line's sequence number within its attempt, from 1
     * @param stream   the stream it was written to; null is taken as {@link Stream#UNKNOWN}
     * @param text     the line without terminator; must not be null
     */
    public static LogRecord line(String taskId, int attempt, long epoch, long sequence, Stream stream,
            String text) {
        return new LogRecord(Kind.LINE, taskId, attempt, epoch, sequence, stream == null ? Stream.UNKNOWN : stream,
                Objects.requireNonNull(text, "text"), null, false, null, -1);
    }

    /**
     * Returns an END_OF_STREAM record.
     *
     * @param taskId     the task; must not be null
     * @param attempt    the attempt that ended, 0 when not known
     * @param epoch      its lease epoch, -1 when not known
     * @param finalState the state the task ended in (a terminal state), or null when the stream
     *                   ended for another reason (follow closed, manager shut down)
     * @param complete   whether every line of the attempt is known to have been delivered
     * @param note       why the log may be incomplete, or null
     */
    public static LogRecord endOfStream(String taskId, int attempt, long epoch, TaskState finalState,
            boolean complete, String note) {
        return endOfStream(taskId, attempt, epoch, finalState, complete, note, -1);
    }

    /**
     * Returns an END_OF_STREAM record of a log the master cut at its size limit, as
     * {@link #endOfStream(String, int, long, TaskState, boolean, String)} does.
     *
     * @param logCutAt the bytes the log file holds before its cut marker; -1 when it was not cut
     */
    public static LogRecord endOfStream(String taskId, int attempt, long epoch, TaskState finalState,
            boolean complete, String note, long logCutAt) {
        return new LogRecord(Kind.END_OF_STREAM, taskId, attempt, epoch, 0, Stream.UNKNOWN, null,
                finalState, complete, note, Math.max(-1, logCutAt));
    }

    /** Returns what this record is. */
    public Kind getKind() {
        return kind;
    }

    /** Returns whether this is a LINE record. */
    public boolean isLine() {
        return kind == Kind.LINE;
    }

    /** Returns whether this is the END_OF_STREAM record. */
    public boolean isEndOfStream() {
        return kind == Kind.END_OF_STREAM;
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the attempt number (from 1), or 0 when it is not known. */
    public int getAttempt() {
        return attempt;
    }

    /** Returns the lease epoch of the attempt, or -1 when it is not known. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the line's sequence number within its attempt (from 1); 0 for END_OF_STREAM. */
    public long getSequence() {
        return sequence;
    }

    /**
     * Returns the stream the line was written to. Known only for lines delivered live; lines
     * replayed from the log file, and END_OF_STREAM records, carry {@link Stream#UNKNOWN}.
     * Never null.
     */
    public Stream getStream() {
        return stream;
    }

    /**
     * Returns the line's text without its terminator (any CR or LF inside it replaced by a space);
     * null for END_OF_STREAM.
     */
    public String getText() {
        return text;
    }

    /**
     * Returns the state the task ended in ({@link TaskState#SUCCEEDED}, {@link TaskState#FAILED},
     * ...), for an END_OF_STREAM that marks the task's end; null for LINE records, for a stream that
     * ended because the follow was closed or the log manager shut down, and for an end in a log
     * file that names no state.
     */
    public TaskState getFinalState() {
        return finalState;
    }

    /**
     * Returns, for END_OF_STREAM, whether the log is known to be complete: every line up to the
     * attempt's final sequence number was delivered. False for LINE records.
     */
    public boolean isComplete() {
        return complete;
    }

    /** Returns, for END_OF_STREAM, why the log may be incomplete; null otherwise. */
    public String getNote() {
        return note;
    }

    /**
     * Returns, for END_OF_STREAM, whether the master cut the task's log at its size limit
     * ({@code maxLogBytesPerTask}, operations.md): the task's lines after the cut were not kept.
     * False for LINE records.
     */
    public boolean isLogCut() {
        return logCutAt >= 0;
    }

    /** Returns, for END_OF_STREAM of a cut log, the bytes its file holds before the cut marker; -1 otherwise. */
    public long getLogCutAt() {
        return logCutAt;
    }

    @Override
    public String toString() {
        if (kind == Kind.LINE) {
            return "LINE[" + taskId + " attempt=" + attempt + " epoch=" + epoch + " seq=" + sequence + " " + stream
                    + "] " + text;
        }
        return "END_OF_STREAM[" + taskId + " attempt=" + attempt + " epoch=" + epoch + " state=" + finalState
                + " complete=" + complete + (logCutAt >= 0 ? " cutAt=" + logCutAt : "")
                + (note == null ? "" : " note=" + note) + "]";
    }
}
