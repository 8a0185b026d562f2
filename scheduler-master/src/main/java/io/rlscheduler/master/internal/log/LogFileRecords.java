package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a whole task log, from a file or a stream (the artifact store's copy), into records,
 * numbering its lines as the manager's followers and recovery do. Public only for
 * {@link io.rlscheduler.master.LogFiles}, the API that documents it.
 */
public final class LogFileRecords {

    /** The next LF-ended line without its LF, or null at the end (a last line without LF is not returned). */
    @FunctionalInterface
    private interface Lines {
        String next() throws IOException;
    }

    private LogFileRecords() {
    }

    /** See {@link io.rlscheduler.master.LogFiles#fileOf}. */
    public static Path fileOf(Path directory, String taskId) {
        return LogFileFormat.fileOf(directory.toAbsolutePath().normalize(), taskId);
    }

    /** See {@link io.rlscheduler.master.LogFiles#read(Path)}. */
    public static List<LogRecord> read(Path file, String taskId) throws IOException {
        List<LogRecord> records = new ArrayList<>();
        scan(file, taskId, records::add);
        return records;
    }

    /** Reads a log in the file format from a stream, which the caller closes. */
    public static List<LogRecord> read(InputStream in, String taskId) throws IOException {
        List<LogRecord> records = new ArrayList<>();
        scan(in, taskId, records::add);
        return records;
    }

    /** Hands each record of the file to {@code visitor}, in file order, until it returns false. */
    public static void scan(Path file, String taskId, java.util.function.Predicate<LogRecord> visitor) throws IOException {
        try (LogLineReader reader = LogLineReader.open(file, 0)) {
            scan(() -> reader.next(Long.MAX_VALUE), taskId, visitor);
        }
    }

    /** Hands each record of a log in the file format, read from a stream the caller closes, to {@code visitor}. */
    public static void scan(InputStream in, String taskId, java.util.function.Predicate<LogRecord> visitor) throws IOException {
        BufferedInputStream buffered = new BufferedInputStream(in, 64 * 1024);
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        scan(() -> {
            line.reset();
            for (int b = buffered.read(); b >= 0; b = buffered.read()) {
                if (b == '\n') {
                    return line.toString(StandardCharsets.UTF_8);
                }
                line.write(b);
            }
            return null;
        }, taskId, visitor);
    }

    private static void scan(Lines lines, String taskId, java.util.function.Predicate<LogRecord> visitor) throws IOException {
        LogCursor cursor = new LogCursor();
        boolean first = true;
        for (String line = lines.next(); line != null; line = lines.next()) {
            LogFileFormat.Line parsed = LogFileFormat.parse(line, first);
            first = false;
            LogRecord record = null;
            if (cursor.advance(parsed)) {
                record = LogRecord.line(taskId, cursor.attempt(), cursor.epoch(), cursor.sequence(),
                        LogRecord.Stream.UNKNOWN, parsed.text());
            } else if (parsed.kind() == LogFileFormat.Kind.END) {
                record = cursor.endRecord(taskId, parsed);
            }
            if (record != null && !visitor.test(record)) {
                return;
            }
        }
    }
}
