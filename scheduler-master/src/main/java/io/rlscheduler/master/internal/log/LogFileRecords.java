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
        try (LogLineReader reader = LogLineReader.open(file, 0)) {
            return records(() -> reader.next(Long.MAX_VALUE), taskId);
        }
    }

    /** Reads a log in the file format from a stream, which the caller closes. */
    public static List<LogRecord> read(InputStream in, String taskId) throws IOException {
        BufferedInputStream buffered = new BufferedInputStream(in, 64 * 1024);
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        return records(() -> {
            line.reset();
            for (int b = buffered.read(); b >= 0; b = buffered.read()) {
                if (b == '\n') {
                    return line.toString(StandardCharsets.UTF_8);
                }
                line.write(b);
            }
            return null;
        }, taskId);
    }

    private static List<LogRecord> records(Lines lines, String taskId) throws IOException {
        List<LogRecord> records = new ArrayList<>();
        LogCursor cursor = new LogCursor();
        boolean first = true;
        for (String line = lines.next(); line != null; line = lines.next()) {
            LogFileFormat.Line parsed = LogFileFormat.parse(line, first);
            first = false;
            if (cursor.advance(parsed)) {
                records.add(LogRecord.line(taskId, cursor.attempt(), cursor.epoch(), cursor.sequence(),
                        LogRecord.Stream.UNKNOWN, parsed.text()));
            } else if (parsed.kind() == LogFileFormat.Kind.END) {
                records.add(cursor.endRecord(taskId, parsed));
            }
        }
        return records;
    }
}
