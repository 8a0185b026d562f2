package io.rlscheduler.master.internal.log;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskState;
import java.nio.file.Path;

/**
 * The format of a task log file, {@code <dir>/<taskId>.log}: UTF-8 text, one record per line, each
 * line ended by LF.
 *
 * <pre>
 * TRACE_ID:&lt;traceId&gt;                        first line, written when the file is created
 * ##RLS_ATTEMPT attempt=&lt;n&gt; epoch=&lt;e&gt;          an attempt (lease epoch) starts; n is 0 when not known
 * &lt;text&gt;                                   the attempt's output lines, sequence 1, 2, 3, ... in order
 * ##RLS_END state=&lt;S&gt; complete=&lt;b&gt; last=&lt;n&gt; [cut=&lt;k&gt;] [reason=&lt;text&gt;]
 *                                          the attempt ended (optional; at most one per attempt)
 * ##RLS_ATTEMPT attempt=&lt;n+1&gt; epoch=&lt;e2&gt;       the next attempt, and so on
 * ##RLS_CUT at=&lt;k&gt; limit=&lt;m&gt;                 the log is cut: no output line follows (at most one per file)
 * </pre>
 *
 * <p>An end marker's state is the name of the {@link TaskState} the attempt ended in, or
 * {@code UNKNOWN}. An attempt marker may end with {@code after=<k>}: its lines are numbered from
 * k + 1, because lines up to k are not in this file and the worker no longer has them (another
 * master, with a log directory of its own, acknowledged them, or a crash lost what the operating
 * system had not yet written). It is written where such a gap begins: as the attempt's first
 * marker, or as a second marker of the same attempt after the lines this file does have.
 *
 * <p>A cut marker says that the file reached the task's size limit of m bytes: it held k bytes
 * (k &le; m) when the next output line would have taken it past m, so that line and every later
 * output line of the task, of any attempt, is not stored. Attempt and end markers still follow it;
 * every end marker after it carries {@code cut=<k>}.
 *
 * <p>Output text is stored as it was printed, except that CR and LF inside it become spaces (one
 * output line is one file line) and a line that begins with {@code ##RLS_} is stored behind the
 * escape prefix {@code "##RLS_TEXT "}, so a task cannot forge a marker by printing one. A line's
 * sequence number is not stored: it is its position after its attempt's marker (plus the
 * marker's {@code after}).
 *
 * <p>File names come only from ids that pass {@link TaskIds#isValid} (no '/', never '.' or
 * '..'), checked before anything touches the disk ({@link #fileOf}).
 */
final class LogFileFormat {

    /** The trace id of a file whose attempt was not started by an open (a log batch or an end came first). */
    static final String UNKNOWN_TRACE_ID = "unknown";

    static final String HEADER_PREFIX = "TRACE_ID:";
    static final String ATTEMPT_PREFIX = "##RLS_ATTEMPT ";
    static final String END_PREFIX = "##RLS_END ";
    static final String CUT_PREFIX = "##RLS_CUT ";
    static final String ESCAPE_PREFIX = "##RLS_TEXT ";
    static final String RESERVED_PREFIX = "##RLS_";
    private static final String REASON_KEY = "reason=";
    private static final String CUT_KEY = "cut=";
    /** The state token of an end whose state is not known. */
    private static final String UNKNOWN_STATE = "UNKNOWN";

    /** What a file line is. */
    enum Kind { HEADER, ATTEMPT, END, CUT, TEXT }

    /**
     * One parsed file line. Fields not belonging to its kind are 0, false or null; for an
     * attempt marker, {@code last} is its {@code after} (0 without one): the sequence number
     * before its next line. An end marker's {@code finalState} is null when its token names no
     * {@link TaskState}. {@code cutAt} is a cut marker's {@code at}, or an end marker's
     * {@code cut}; -1 for every other line.
     */
    record Line(Kind kind, String text, int attempt, long epoch, TaskState finalState, boolean complete, long last,
            String reason, long cutAt) {

        static Line text(String text) {
            return new Line(Kind.TEXT, text, 0, 0, null, false, 0, null, -1);
        }
    }

    private LogFileFormat() {
    }

    /**
     * Returns the log file of a task, {@code <directory>/<taskId>.log}. Touches no file.
     *
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     */
    static Path fileOf(Path directory, String taskId) {
        TaskIds.require(taskId, "task id");
        Path path = directory.resolve(taskId + ".log");
        if (!directory.equals(path.getParent())) {
            // Cannot happen for a valid id; checked anyway because the name comes from a peer.
            throw new IllegalArgumentException("task id '" + taskId + "' does not name a file in " + directory);
        }
        return path;
    }

    /** Returns {@code text} with each CR and LF replaced by a space. */
    static String oneLine(String text) {
        if (text.indexOf('\n') < 0 && text.indexOf('\r') < 0) {
            return text;
        }
        return text.replace('\n', ' ').replace('\r', ' ');
    }

    /** Returns the header line for a trace id. */
    static String header(String traceId) {
        return HEADER_PREFIX + oneLine(traceId);
    }

    /** Returns the marker line that starts an attempt. */
    static String attemptMarker(int attempt, long epoch) {
        return attemptMarker(attempt, epoch, 0);
    }

    /** Returns the marker line that starts an attempt's lines after sequence {@code after} (0: from its first). */
    static String attemptMarker(int attempt, long epoch, long after) {
        String marker = ATTEMPT_PREFIX + "attempt=" + attempt + " epoch=" + epoch;
        return after > 0 ? marker + " after=" + after : marker;
    }

    /**
     * Returns the marker line that ends an attempt: the state as its name, {@code UNKNOWN} when
     * null.
     */
    static String endMarker(TaskState finalState, boolean complete, long last, String reason) {
        return endMarker(finalState, complete, last, -1, reason);
    }

    /** As {@link #endMarker(TaskState, boolean, long, String)}, for a log cut at {@code cutAt} bytes (-1: not cut). */
    static String endMarker(TaskState finalState, boolean complete, long last, long cutAt, String reason) {
        String state = finalState == null ? UNKNOWN_STATE : finalState.name();
        String line = END_PREFIX + "state=" + state + " complete=" + complete + " last=" + last
                + (cutAt >= 0 ? " " + CUT_KEY + cutAt : "");
        return reason == null ? line : line + " " + REASON_KEY + oneLine(reason);
    }

    /** Returns the marker line that cuts a log of {@code at} bytes at its limit of {@code limit} bytes. */
    static String cutMarker(long at, long limit) {
        return CUT_PREFIX + "at=" + at + " limit=" + limit;
    }

    /** Returns the state an end marker's token names, or null ({@code UNKNOWN}, or not a state's name). */
    private static TaskState stateOf(String token) {
        for (TaskState state : TaskState.values()) {
            if (state.name().equals(token)) {
                return state;
            }
        }
        return null;
    }

    /** Returns the file line that stores an output line already made one line by {@link #oneLine}. */
    static String textLine(String oneLineText) {
        return oneLineText.startsWith(RESERVED_PREFIX) ? ESCAPE_PREFIX + oneLineText : oneLineText;
    }

    /**
     * Parses a file line.
     *
     * @param line      the line without its LF
     * @param firstLine whether it is the first line of the file (the only place a header may be)
     */
    static Line parse(String line, boolean firstLine) {
        if (firstLine && line.startsWith(HEADER_PREFIX)) {
            return new Line(Kind.HEADER, line.substring(HEADER_PREFIX.length()), 0, 0, null, false, 0, null, -1);
        }
        if (!line.startsWith(RESERVED_PREFIX)) {
            return Line.text(line);
        }
        if (line.startsWith(ESCAPE_PREFIX)) {
            return Line.text(line.substring(ESCAPE_PREFIX.length()));
        }
        try {
            if (line.startsWith(ATTEMPT_PREFIX)) {
                return parseAttempt(line.substring(ATTEMPT_PREFIX.length()));
            }
            if (line.startsWith(END_PREFIX)) {
                return parseEnd(line.substring(END_PREFIX.length()));
            }
            if (line.startsWith(CUT_PREFIX)) {
                return parseCut(line.substring(CUT_PREFIX.length()));
            }
        } catch (IllegalArgumentException malformed) {
            // Not written by us (we escape every output line starting with ##RLS_): keep it as text.
        }
        return Line.text(line);
    }

    private static Line parseAttempt(String fields) {
        Integer attempt = null;
        Long epoch = null;
        long after = 0;
        for (String field : fields.split(" ")) {
            if (field.startsWith("attempt=")) {
                attempt = Integer.parseInt(field.substring("attempt=".length()));
            } else if (field.startsWith("epoch=")) {
                epoch = Long.parseLong(field.substring("epoch=".length()));
            } else if (field.startsWith("after=")) {
                after = Long.parseLong(field.substring("after=".length()));
            }
        }
        if (attempt == null || epoch == null || after < 0) {
            throw new IllegalArgumentException("incomplete attempt marker");
        }
        return new Line(Kind.ATTEMPT, null, attempt, epoch, null, false, after, null, -1);
    }

    private static Line parseCut(String fields) {
        long at = -1;
        for (String field : fields.split(" ")) {
            if (field.startsWith("at=")) {
                at = Long.parseLong(field.substring("at=".length()));
            }
        }
        if (at < 0) {
            throw new IllegalArgumentException("incomplete cut marker");
        }
        return new Line(Kind.CUT, null, 0, 0, null, false, 0, null, at);
    }

    private static Line parseEnd(String fields) {
        String reason = null;
        int reasonAt = fields.indexOf(" " + REASON_KEY);
        if (reasonAt >= 0) {
            reason = fields.substring(reasonAt + 1 + REASON_KEY.length());
            fields = fields.substring(0, reasonAt);
        }
        String state = null;
        Boolean complete = null;
        long last = 0;
        long cutAt = -1;
        for (String field : fields.split(" ")) {
            if (field.startsWith(CUT_KEY)) {
                cutAt = Long.parseLong(field.substring(CUT_KEY.length()));
            } else if (field.startsWith("state=")) {
                state = field.substring("state=".length());
            } else if (field.startsWith("complete=")) {
                complete = Boolean.parseBoolean(field.substring("complete=".length()));
            } else if (field.startsWith("last=")) {
                last = Long.parseLong(field.substring("last=".length()));
            }
        }
        if (state == null || complete == null) {
            throw new IllegalArgumentException("incomplete end marker");
        }
        return new Line(Kind.END, null, 0, 0, stateOf(state), complete, last, reason, cutAt);
    }
}
