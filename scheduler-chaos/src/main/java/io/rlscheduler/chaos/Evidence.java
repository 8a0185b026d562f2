package io.rlscheduler.chaos;

import io.rlscheduler.core.TaskRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What a chaos run knows of one task afterwards: its record (through the run's master), its log
 * file, its attempts' marks, and what its final attempt printed. Reads afresh on every call.
 */
final class Evidence {

    private final ChaosCluster cluster;
    private final Workdir workdir;

    Evidence(ChaosCluster cluster, Workdir workdir) {
        this.cluster = cluster;
        this.workdir = workdir;
    }

    Workdir workdir() {
        return workdir;
    }

    /** Returns the task's record, or empty if there is none or it cannot be read. */
    Optional<TaskRecord> record(String taskId) {
        return cluster.readRecord(taskId);
    }

    /** Returns the task's log file, parsed, or empty if there is none or it cannot be read. */
    Optional<TaskLogFile.TaskLog> log(String taskId) {
        Path file = workdir.taskLog(taskId);
        try {
            return Files.exists(file) ? Optional.of(TaskLogFile.read(file)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Returns the marks of the task's attempts (none when the file is missing). */
    AttemptMarks marks(String taskId) {
        Path file = workdir.marks(taskId);
        try {
            return AttemptMarks.parse(Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of());
        } catch (IOException e) {
            return AttemptMarks.unreadable(e);
        }
    }

    /** Returns the file with what the record's attempt printed ({@code printed.txt} in its run directory). */
    Path printedFile(TaskRecord r) {
        Path runDir = r.getRunDir().isEmpty() ? workdir.attemptDir(r.getTaskId(), r.getAttempt()) : Path.of(r.getRunDir());
        return runDir.resolve("printed.txt");
    }

    /** Returns whether the task's log file holds an end line for the attempt of {@code epoch}. */
    boolean attemptEnded(String taskId, long epoch) {
        return log(taskId).map(l -> l.attempts().stream().anyMatch(a -> a.epoch == epoch && a.end != null)).orElse(false);
    }
}
