package io.rlscheduler.master;

import io.rlscheduler.master.internal.log.LogFileRecords;
import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.RunLayout;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads the master's task log files, {@code <logDirectory>/<taskId>.log}, as the master itself
 * reads them (for a running log, follow it instead: {@link TaskHandle#followLogs}).
 *
 * <p>A file holds the attempts of one task in the order they ran. {@link #read} returns, in file
 * order, one {@link LogRecord.Kind#LINE} record per output line, with its attempt, epoch and
 * sequence number (from 1 per attempt, or after the lines another master acknowledged that this
 * file lacks) and its text as printed (CR and LF inside it made spaces; the stream is
 * {@link LogRecord.Stream#UNKNOWN}: the file does not store it); and one
 * {@link LogRecord.Kind#END_OF_STREAM} record where an attempt's end was written, with the state
 * it ended in, whether the log is complete, and the note of an incomplete end. Unlike a follow,
 * a file may hold several ends (one per attempt that ended), none (the attempt is still running,
 * or its end was not recorded), and lines after an incomplete end (they still came). An attempt
 * that printed nothing may have no record, and a task whose attempts printed nothing may have no
 * file. A last line not ended by LF (cut short by a crash, never acknowledged) is not returned.
 *
 * <p>A log that ended is also in the artifact store, as a copy of the whole file made by the
 * master that wrote its end ({@code tasks/<taskId>/log}); {@link #read(Path, String, ArtifactStore)}
 * falls back to it where the log directory has no file of the task.
 *
 * <p>Thread-safe; each call reads the file anew. Reading a file the master is writing is safe:
 * the result is the file as it was at some moment, up to its last complete line.
 */
public final class LogFiles {

    private LogFiles() {
    }

    /**
     * Returns the log file of a task in a master's log directory. Touches no file.
     *
     * @param directory the master's log directory
     * @param taskId    the task; must be a valid task id
     * @return the file's absolute path
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     */
    public static Path fileOf(Path directory, String taskId) {
        return LogFileRecords.fileOf(directory, taskId);
    }

    /**
     * Reads a task log file; the task id of the records is the file's name without {@code .log}.
     * Never follows a symbolic link.
     *
     * @param file the file, as {@link #fileOf} names it
     * @return the records, in file order (see the class comment); unmodifiable
     * @throws java.nio.file.NoSuchFileException if there is no such file
     * @throws IOException                       if it cannot be read
     */
    public static List<LogRecord> read(Path file) throws IOException {
        String name = file.getFileName().toString();
        String taskId = name.endsWith(".log") ? name.substring(0, name.length() - ".log".length()) : name;
        return List.copyOf(LogFileRecords.read(file, taskId));
    }

    /**
     * Reads a task's log as {@link #read(Path)} does: from its file in {@code directory}, or,
     * when there is none there, from the artifact store's copy of its ended log, read as a
     * stream (nothing is written to the directory: it may be a master's, or none at all on the
     * machine that reads). Blocks for the store's transfer; do not call it from an event loop.
     *
     * @param directory a master's log directory
     * @param taskId    the task; must be a valid task id
     * @param store     the artifact store the masters copy ended logs into
     * @return the records, in file order; unmodifiable
     * @throws NoSuchFileException if neither the directory nor the store holds the task's log
     * @throws io.rlscheduler.store.StoreUnavailableException if the store cannot be read
     * @throws IOException if the file or the store's copy cannot be read
     */
    public static List<LogRecord> read(Path directory, String taskId, ArtifactStore store) throws IOException {
        Path file = fileOf(directory, taskId);
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return read(file);
        }
        try (InputStream in = store.open(RunLayout.log(taskId))) {
            return List.copyOf(LogFileRecords.read(in, taskId));
        } catch (ArtifactNotFoundException none) {
            throw new NoSuchFileException(file.toString(), null, "no log file, and no copy in the artifact store "
                    + store.getUri());
        }
    }

    /**
     * Reads a task's log as {@link #read(Path, String, ArtifactStore)} does, handing each record to
     * {@code visitor} in file order until it returns false: a page of a long log without holding
     * the whole of it. Blocks; do not call it from an event loop.
     *
     * @throws NoSuchFileException if neither the directory nor the store holds the task's log
     * @throws io.rlscheduler.store.StoreUnavailableException if the store cannot be read
     * @throws IOException if the file or the store's copy cannot be read
     */
    public static void scan(Path directory, String taskId, ArtifactStore store, java.util.function.Predicate<LogRecord> visitor)
            throws IOException {
        Path file = fileOf(directory, taskId);
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            LogFileRecords.scan(file, taskId, visitor);
            return;
        }
        try (InputStream in = store.open(RunLayout.log(taskId))) {
            LogFileRecords.scan(in, taskId, visitor);
        } catch (ArtifactNotFoundException none) {
            throw new NoSuchFileException(file.toString(), null, "no log file, and no copy in the artifact store "
                    + store.getUri());
        }
    }
}
