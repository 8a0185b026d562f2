package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogStream;

/**
 * Lines of one chunk just written to a task's log file, as the bytes written (escapes included),
 * handed to its live followers: one object shared by all of them, turned into records on each
 * follower's delivery thread rather than on the I/O thread.
 *
 * @param attempt       the attempt number, 0 when not known
 * @param epoch         the attempt's lease epoch
 * @param stream        the lines' stream
 * @param firstSequence the sequence number of the first line
 * @param lines         the number of lines, at least 1
 * @param bytes         the file bytes of the lines, each ended by LF; never written
 * @param fileStart     the file offset of the first byte
 */
record LiveBlock(int attempt, long epoch, LogRecord.Stream stream, long firstSequence, int lines, byte[] bytes,
                 long fileStart) {

    /** Returns the records' stream of a chunk's stream: {@link LogRecord.Stream#UNKNOWN} unless stdout or stderr. */
    static LogRecord.Stream streamOf(LogStream wire) {
        return switch (wire) {
            case LOG_STREAM_STDOUT -> LogRecord.Stream.STDOUT;
            case LOG_STREAM_STDERR -> LogRecord.Stream.STDERR;
            default -> LogRecord.Stream.UNKNOWN;
        };
    }
}
