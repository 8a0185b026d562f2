package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;

/**
 * Where a reader of a log file is, line by line from the start: the attempt and epoch of the last
 * attempt marker, and the sequence number of the last output line. The one rule that numbers a
 * file's lines (a marker starts its attempt after its {@code after}, each text line after a marker
 * is the next number, text before any marker is not task output), shared by recovery, followers
 * replaying the file, and {@link LogFileRecords}. Not thread-safe.
 */
final class LogCursor {

    private int attempt;
    private long epoch = -1;
    private long sequence;

    /**
     * Moves past a file line.
     *
     * @return whether it is an output line of an attempt, numbered {@link #sequence()}
     */
    boolean advance(LogFileFormat.Line line) {
        switch (line.kind()) {
            case ATTEMPT -> {
                attempt = line.attempt();
                epoch = line.epoch();
                sequence = line.last(); // 0, or the lines another master acknowledged
                return false;
            }
            case TEXT -> {
                if (epoch < 0) {
                    return false; // not written by a manager: not task output
                }
                sequence++;
                return true;
            }
            default -> {
                return false; // the header, an end or cut marker
            }
        }
    }

    /** Moves to a line known otherwise (a live line, handed over with its numbers). */
    void moveTo(int newAttempt, long newEpoch, long newSequence) {
        attempt = newAttempt;
        epoch = newEpoch;
        sequence = newSequence;
    }

    /** Returns the END_OF_STREAM record of an end marker read at this point. */
    LogRecord endRecord(String taskId, LogFileFormat.Line end) {
        return LogRecord.endOfStream(taskId, attempt, epoch, end.finalState(), end.complete(), end.reason(), end.cutAt());
    }

    /** Returns the attempt number of the last marker; 0 before any. */
    int attempt() {
        return attempt;
    }

    /** Returns the epoch of the last marker; -1 before any. */
    long epoch() {
        return epoch;
    }

    /** Returns the sequence number of the last output line (the marker's {@code after} right after it). */
    long sequence() {
        return sequence;
    }
}
