package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a whole task log file into records, numbering its lines as the manager's followers and
 * recovery do. Public only for {@link io.rlscheduler.master.LogFiles}, the API that documents it.
 */
public final class LogFileRecords {

    private LogFileRecords() {
    }

    /** See {@link io.rlscheduler.master.LogFiles#fileOf}. */
    public static Path fileOf(Path directory, String taskId) {
        return LogFileFormat.fileOf(directory.toAbsolutePath().normalize(), taskId);
    }

    /** See {@link io.rlscheduler.master.LogFiles#read}. */
    public static List<LogRecord> read(Path file, String taskId) throws IOException {
        List<LogRecord> records = new ArrayList<>();
        LogCursor cursor = new LogCursor();
        try (LogLineReader reader = LogLineReader.open(file, 0)) {
            boolean first = true;
            for (String line = reader.next(Long.MAX_VALUE); line != null; line = reader.next(Long.MAX_VALUE)) {
                LogFileFormat.Line parsed = LogFileFormat.parse(line, first);
                first = false;
                if (cursor.advance(parsed)) {
                    records.add(LogRecord.line(taskId, cursor.attempt(), cursor.epoch(), cursor.sequence(),
                            LogRecord.Stream.UNKNOWN, parsed.text()));
                } else if (parsed.kind() == LogFileFormat.Kind.END) {
                    records.add(cursor.endRecord(taskId, parsed));
                }
            }
        }
        return records;
    }
}
