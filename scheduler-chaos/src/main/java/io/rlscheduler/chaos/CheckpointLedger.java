package io.rlscheduler.chaos;

import io.rlscheduler.core.internal.CheckpointEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every checkpoint seen committed during a chaos run, per task, with what it holds: the episode
 * and writer of its {@code checkpoint.json}, read from the store when it was first seen. Redis
 * keeps only a task's newest few ({@code checkpointsKept}) and the store deletes the others, so
 * this is the run's only record of the older ones. Thread-safe: {@link CheckpointWatch} adds, the
 * checks read.
 */
final class CheckpointLedger {

    /**
     * One committed checkpoint as seen.
     *
     * @param entry    the task's list entry in Redis (id, epoch, attempt, worker, when committed)
     * @param episode  the episode its {@code checkpoint.json} holds, or -1 when it could not be read
     * @param writer   the attempt its {@code checkpoint.json} says wrote it, or "?"
     * @param readNote why its content could not be read, or null
     */
    record Commit(CheckpointEntry entry, int episode, String writer, String readNote) {

        /** Returns whether the checkpoint's content was read. */
        boolean contentKnown() {
            return episode >= 0;
        }

        /** Returns "e12-3 (attempt 2 on w1, episode 60)". */
        String describe() {
            return entry.id() + " (attempt " + entry.attempt() + " on " + entry.workerId() + ", "
                    + (contentKnown() ? "episode " + episode : "content not read: " + readNote) + ")";
        }
    }

    /** Orders a task's checkpoints as checkpoint.lua does: by epoch, then number within the attempt. */
    static final Comparator<CheckpointEntry> ORDER =
            Comparator.comparingLong(CheckpointEntry::epoch).thenComparingInt(CheckpointEntry::number);

    private final Map<String, Map<String, Commit>> byTask = new ConcurrentHashMap<>();

    /** Returns whether the checkpoint {@code id} of the task was seen. */
    boolean has(String taskId, String id) {
        Map<String, Commit> seen = byTask.get(taskId);
        return seen != null && seen.containsKey(id);
    }

    /** Records a checkpoint seen; the first record of an id stays. */
    void add(String taskId, Commit commit) {
        byTask.computeIfAbsent(taskId, t -> new ConcurrentHashMap<>()).putIfAbsent(commit.entry().id(), commit);
    }

    /** Returns the task's checkpoints seen, oldest first (by epoch, then number). */
    List<Commit> of(String taskId) {
        List<Commit> all = new ArrayList<>(byTask.getOrDefault(taskId, Map.of()).values());
        all.sort(Comparator.comparing(Commit::entry, ORDER));
        return all;
    }

    /** Returns the checkpoint {@code id} of the task, if it was seen. */
    Optional<Commit> get(String taskId, String id) {
        return Optional.ofNullable(byTask.getOrDefault(taskId, Map.of()).get(id));
    }
}
