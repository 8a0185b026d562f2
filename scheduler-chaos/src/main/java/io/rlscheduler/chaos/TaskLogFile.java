package io.rlscheduler.chaos;

import io.rlscheduler.master.LogFiles;
import io.rlscheduler.master.LogRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A master's task log file as the chaos checks look at it: its attempts in file order, each with
 * its output lines up to its first end, that end, and whatever the file holds for the attempt
 * after it. Read with the master's own reader ({@link LogFiles}). The parsed values are not
 * thread-safe.
 */
final class TaskLogFile {

    private TaskLogFile() {
    }

    /** The prefix of the lines a worker itself writes into an attempt's log (what it restored, a commit retried): {@value}. */
    static final String WORKER_PREFIX = "rl-scheduler: ";

    /** Returns whether a log line is the worker's own, not the script's. */
    static boolean isWorkerLine(String line) {
        return line.startsWith(WORKER_PREFIX);
    }

    /** One attempt in a log file: its epoch, its lines up to its first end, that end (null if none), and what came after. */
    static final class AttemptBlock {
        final long epoch;
        final List<String> lines = new ArrayList<>();
        LogRecord end;
        final List<String> afterEnd = new ArrayList<>();

        AttemptBlock(long epoch) {
            this.epoch = epoch;
        }
    }

    /** The attempts of one log file, in file order. */
    record TaskLog(List<AttemptBlock> attempts) {
    }

    /** Reads a log file. */
    static TaskLog read(Path file) throws IOException {
        return of(LogFiles.read(file));
    }

    /** Groups a file's records by attempt, in file order. */
    static TaskLog of(List<LogRecord> records) {
        List<AttemptBlock> attempts = new ArrayList<>();
        AttemptBlock current = null;
        for (LogRecord r : records) {
            if (current == null || current.epoch != r.getEpoch()) {
                current = new AttemptBlock(r.getEpoch());
                attempts.add(current);
            }
            if (current.end != null) {
                current.afterEnd.add(r.isLine() ? r.getText() : describe(r));
            } else if (r.isEndOfStream()) {
                current.end = r;
            } else {
                current.lines.add(r.getText());
            }
        }
        return new TaskLog(attempts);
    }

    /** An end as the file states it: "end state=SUCCEEDED complete=true", and the note of an incomplete one. */
    static String describe(LogRecord end) {
        return "end state=" + end.getFinalState() + " complete=" + end.isComplete()
                + (end.getNote() == null ? "" : " (" + end.getNote() + ")");
    }
}
