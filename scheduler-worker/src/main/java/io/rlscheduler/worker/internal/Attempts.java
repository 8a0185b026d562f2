package io.rlscheduler.worker.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import io.rlscheduler.worker.TaskExecution;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The attempts this worker holds, one per task: from the moment one is taken in until it has
 * ended and its lines have reached a master. Thread-safe.
 */
public final class Attempts {

    private final ConcurrentHashMap<String, Attempt> byTask = new ConcurrentHashMap<>();

    /** Returns the attempt held for {@code taskId}, or null. */
    public Attempt get(String taskId) {
        return byTask.get(taskId);
    }

    /** Returns the attempt held for {@code taskId} if it is the one of {@code epoch}, else null. */
    public Attempt find(String taskId, long epoch) {
        Attempt a = byTask.get(taskId);
        return a != null && a.getLease().getEpoch() == epoch ? a : null;
    }

    /**
     * Holds {@code attempt} as its task's; returns the attempt it replaces if that one has not
     * ended (the caller stops it), else null.
     */
    public Attempt put(Attempt attempt) {
        Attempt previous = byTask.put(attempt.getLease().getTaskId(), attempt);
        return previous != null && !previous.isEnded() ? previous : null;
    }

    /** Stops holding {@code attempt}, unless a newer attempt of its task replaced it. */
    public void remove(Attempt attempt) {
        byTask.remove(attempt.getLease().getTaskId(), attempt);
    }

    /** Forgets the attempt if it has ended and a master acknowledged all its lines; returns whether it did. */
    public boolean forgetIfDelivered(Attempt attempt) {
        if (attempt.isEnded() && attempt.getLogs().isFullyAcked()) {
            remove(attempt);
            return true;
        }
        return false;
    }

    /** Returns every attempt held, ended or not; a live view. */
    public Collection<Attempt> all() {
        return byTask.values();
    }

    /**
     * Waits until the execution of every attempt held has completed, or until {@code timeoutNanos}
     * have passed ({@code Long.MAX_VALUE}: no bound). A wait that is interrupted or times out ends
     * the waiting, keeping the interrupt status.
     */
    public void awaitExecutions(long timeoutNanos) {
        long start = System.nanoTime();
        for (Attempt a : byTask.values()) {
            TaskExecution e = a.getExecution();
            if (e == null) {
                continue;
            }
            try {
                if (timeoutNanos == Long.MAX_VALUE) {
                    e.completion().join();
                } else {
                    e.completion().get(Math.max(1, timeoutNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException | CancellationException ignored) {
                // bounded wait: the caller goes on
            }
        }
    }

    /** Returns the attempts that have not ended, at the time of the call. */
    public List<Attempt> running() {
        List<Attempt> running = new ArrayList<>();
        for (Attempt a : byTask.values()) {
            if (!a.isEnded()) {
                running.add(a);
            }
        }
        return running;
    }
}
