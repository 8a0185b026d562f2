package io.rlscheduler.chaos;

import io.rlscheduler.core.TaskRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What a chaos run knows of one task afterwards, and where each piece comes from: its record,
 * and its worker's notes of what each attempt resumed from, from Redis (through the run's own
 * master and lease core); its log file, from the masters' log directory; its attempts' marks and
 * what each printed, from the run directory of each attempt on the worker that ran it (each
 * worker's own run root, read in turn as one would fetch it from each machine); the checkpoints
 * committed during the run, from the {@link CheckpointLedger} the watch kept. Reads afresh on
 * every call.
 */
final class Evidence {

    private static final int READ_TRIES = 20;
    private static final long READ_RETRY_MILLIS = 250;

    private final ChaosCluster cluster;
    private final Workdir workdir;
    private final CheckpointLedger ledger;

    Evidence(ChaosCluster cluster, Workdir workdir, CheckpointLedger ledger) {
        this.cluster = cluster;
        this.workdir = workdir;
        this.ledger = ledger;
    }

    Workdir workdir() {
        return workdir;
    }

    CheckpointLedger ledger() {
        return ledger;
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

    /** Returns what the task's attempt printed, from its run directory on {@code workerId}; empty when it printed nothing there. */
    Optional<List<String>> printed(String workerId, String taskId, int attempt) {
        Path file = workdir.attemptDir(workerId, taskId, attempt).resolve("printed.txt");
        try {
            return Files.exists(file) ? Optional.of(Files.readAllLines(file, StandardCharsets.UTF_8)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Returns the worker's notes of what each attempt resumed from (attempt to JSON), retrying for about 5 s; empty if unreadable. */
    Map<Integer, String> restores(String taskId) {
        for (int i = 0; i < READ_TRIES; i++) {
            try {
                return cluster.artifacts().restores(taskId).get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Exception e) {
                try {
                    Thread.sleep(READ_RETRY_MILLIS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return Map.of();
    }

    /** Returns whether the task's log file holds an end line for the attempt of {@code epoch}. */
    boolean attemptEnded(String taskId, long epoch) {
        return log(taskId).map(l -> l.attempts().stream().anyMatch(a -> a.epoch == epoch && a.end != null)).orElse(false);
    }
}
