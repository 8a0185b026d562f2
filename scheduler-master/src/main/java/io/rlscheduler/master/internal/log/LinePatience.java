package io.rlscheduler.master.internal.log;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The completions of one stripe that wait for their attempt's last lines, each with the time it
 * gives up on them: an end recorded in Redis names the line the log ends at, and the lines may
 * still be on their way from the worker, or never come (the worker died after recording the
 * end). Every wait is as long, so the oldest is due first and the map stays in due order; a
 * completion that finishes leaves it at once, so it holds only the logs still waiting. Confined
 * to the stripe's I/O thread.
 */
final class LinePatience {

    private final long patienceNanos;
    private final LinkedHashMap<String, Long> due = new LinkedHashMap<>();

    LinePatience(long patienceNanos) {
        this.patienceNanos = patienceNanos;
    }

    /** Returns how long a completion waits for its lines, in nanoseconds. */
    long patienceNanos() {
        return patienceNanos;
    }

    /** A completion of the task now waits for lines; it gives up after the patience from now. */
    void waiting(String taskId) {
        due.remove(taskId);
        due.put(taskId, System.nanoTime() + patienceNanos);
    }

    /** The task's attempt ended: nothing waits any more. */
    void ended(String taskId) {
        due.remove(taskId);
    }

    /** Removes and returns the tasks whose wait is over at {@code now} (nanoTime), oldest first. */
    List<String> overdue(long now) {
        List<String> over = new ArrayList<>();
        for (Iterator<Map.Entry<String, Long>> it = due.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, Long> e = it.next();
            if (now - e.getValue() < 0) {
                break;
            }
            over.add(e.getKey());
            it.remove();
        }
        return over;
    }

    /** Returns how many completions wait. */
    int size() {
        return due.size();
    }
}
