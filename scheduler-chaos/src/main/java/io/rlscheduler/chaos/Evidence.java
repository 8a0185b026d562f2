package io.rlscheduler.chaos;

import io.rlscheduler.core.TaskRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What a chaos run knows of one task afterwards, and where each piece comes from: its record,
 * from Redis (through the run's own master); its log file, from the masters' log directory; its
 * attempts' marks and what each printed, from the run directory of each attempt on the worker
 * that ran it (each worker's own run root, read in turn as one would fetch it from each machine).
 * Reads afresh on every call.
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

    /**
     * Returns the marks of all the task's attempts: each attempt writes its own in its run
     * directory, so they are gathered from every worker's run root, by attempt number.
     */
    AttemptMarks marks(String taskId) {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> workers = Files.list(workdir.workers())) {
            for (Path w : workers.toList()) {
                Path taskDir = workdir.workerRuns(w.getFileName().toString()).resolve(taskId);
                if (!Files.isDirectory(taskDir)) {
                    continue;
                }
                try (Stream<Path> attempts = Files.list(taskDir)) {
                    attempts.filter(a -> a.getFileName().toString().startsWith("attempt-"))
                            .map(a -> a.resolve("marks.log")).filter(Files::isRegularFile).forEach(files::add);
                }
            }
            files.sort(Comparator.comparingInt(Evidence::attemptNumber));
            List<String> lines = new ArrayList<>();
            for (Path f : files) {
                lines.addAll(Files.readAllLines(f, StandardCharsets.UTF_8));
            }
            return AttemptMarks.parse(lines);
        } catch (IOException | RuntimeException e) {
            return AttemptMarks.unreadable(e);
        }
    }

    private static int attemptNumber(Path marks) {
        String dir = marks.getParent().getFileName().toString();
        try {
            return Integer.parseInt(dir.substring("attempt-".length()));
        } catch (NumberFormatException e) {
            return Integer.MAX_VALUE;
        }
    }

    /** Returns the file with what the record's attempt printed ({@code printed.txt} in its run directory on its worker). */
    Path printedFile(TaskRecord r) {
        return workdir.attemptDir(r.getWorkerId(), r.getTaskId(), r.getAttempt()).resolve("printed.txt");
    }

    /** Returns whether the task's log file holds an end line for the attempt of {@code epoch}. */
    boolean attemptEnded(String taskId, long epoch) {
        return log(taskId).map(l -> l.attempts().stream().anyMatch(a -> a.epoch == epoch && a.end != null)).orElse(false);
    }
}
