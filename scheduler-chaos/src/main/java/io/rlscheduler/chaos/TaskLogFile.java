package io.rlscheduler.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a master's task log file (the format of {@code LogFileFormat} in scheduler-master) into
 * its attempts: an optional first line {@code TRACE_ID:<id>}, then per attempt a marker
 * {@code ##RLS_ATTEMPT ... epoch=<n>}, its output lines ({@code ##RLS_TEXT } before a line that
 * would read as a marker), and an end line {@code ##RLS_END state=... complete=...}.
 * Stateless; the parsed values are not thread-safe.
 */
final class TaskLogFile {

    private static final Pattern EPOCH = Pattern.compile("epoch=(\\d+)");
    private static final String ATTEMPT = "##RLS_ATTEMPT ";
    private static final String END = "##RLS_END ";
    private static final String TEXT = "##RLS_TEXT ";

    private TaskLogFile() {
    }

    /**
     * One attempt in a log file: its marker's epoch (-1 if the marker has none), its output lines
     * (unescaped) up to its first end line, that end line (null if none), and whatever the file
     * holds after it before the next marker.
     */
    static final class AttemptBlock {
        final long epoch;
        final List<String> lines = new ArrayList<>();
        String end;
        final List<String> afterEnd = new ArrayList<>();

        AttemptBlock(long epoch) {
            this.epoch = epoch;
        }
    }

    /** The attempts of one log file, in file order. */
    record TaskLog(List<AttemptBlock> attempts) {
    }

    /** Parses the lines of a log file. Lines before the first marker (other than the trace id) are ignored. */
    static TaskLog parse(List<String> lines) {
        List<AttemptBlock> attempts = new ArrayList<>();
        AttemptBlock current = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (i == 0 && line.startsWith("TRACE_ID:")) {
                continue;
            }
            if (line.startsWith(ATTEMPT)) {
                Matcher x = EPOCH.matcher(line);
                current = new AttemptBlock(x.find() ? Long.parseLong(x.group(1)) : -1);
                attempts.add(current);
            } else if (current == null) {
                continue;
            } else if (current.end != null) {
                current.afterEnd.add(line);
            } else if (line.startsWith(END)) {
                current.end = line;
            } else {
                current.lines.add(line.startsWith(TEXT) ? line.substring(TEXT.length()) : line);
            }
        }
        return new TaskLog(attempts);
    }
}
