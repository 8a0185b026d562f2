package io.rlscheduler.bench.harness;

import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.SchedulerMaster;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Counts the tasks of one batch (task ids with a common prefix) that reached SUCCEEDED, from the
 * master's task events, and notes when the last one did. Cheaper than a result future per task
 * ({@code TaskHandle.result()} reads the task from Redis when it is created and again when the
 * task ends); the count is checked against Redis at the end of every batch.
 */
final class Completions implements Consumer<TaskEvent>, AutoCloseable {

    private final SchedulerMaster master;
    private final String prefix;
    private final int expected;
    private final Set<String> succeeded = ConcurrentHashMap.newKeySet();
    private final AtomicLong repeated = new AtomicLong();
    private volatile long lastNanos;

    /** Starts counting the SUCCEEDED events of tasks whose id starts with {@code prefix}. */
    Completions(SchedulerMaster master, String prefix, int expected) {
        this.master = master;
        this.prefix = prefix;
        this.expected = expected;
        master.addTaskListener(this);
    }

    @Override
    public void accept(TaskEvent event) {
        if (event.getTo() == TaskState.SUCCEEDED && event.getKind() == TaskEvent.Kind.TASK) {
            String id = event.getTaskId();
            if (id != null && id.startsWith(prefix)) {
                long now = System.nanoTime();
                if (succeeded.add(id)) {
                    if (succeeded.size() == expected) {
                        lastNanos = now;
                    }
                } else {
                    repeated.incrementAndGet();
                }
            }
        }
    }

    /** Returns how many distinct tasks of the batch have succeeded. */
    int count() {
        return succeeded.size();
    }

    /** Returns how many SUCCEEDED events were repeats for a task already counted (0 expected). */
    long repeatedEvents() {
        return repeated.get();
    }

    /**
     * Waits until every task of the batch succeeded and returns the {@link System#nanoTime()} of
     * the event of the last one. Prints progress every 5 s.
     *
     * @param stall how long without any progress before giving up
     * @throws IllegalStateException if the batch stalls
     */
    long await(long startedNanos, long stall, TimeUnit unit) throws InterruptedException {
        long lastProgress = System.nanoTime();
        long lastPrint = lastProgress;
        int seen = -1;
        while (lastNanos == 0) {
            Thread.sleep(2); // completion polling of the harness thread
            long now = System.nanoTime();
            int n = count();
            if (n != seen) {
                seen = n;
                lastProgress = now;
            } else if (now - lastProgress > unit.toNanos(stall)) {
                throw new IllegalStateException("no progress for " + stall + " " + unit.toString().toLowerCase(Locale.ROOT)
                        + ": " + n + " of " + expected + " tasks succeeded; queue depth " + master.queueDepth()
                        + ", health " + master.health());
            }
            if (now - lastPrint > TimeUnit.SECONDS.toNanos(5)) {
                lastPrint = now;
                System.out.printf(Locale.ROOT, "#   %,d of %,d succeeded after %.1f s%n", n, expected,
                        (now - startedNanos) / 1e9);
            }
        }
        return lastNanos;
    }

    @Override
    public void close() {
        master.removeTaskListener(this);
    }
}
