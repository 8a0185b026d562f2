package io.rlscheduler.bench.harness;

import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.StopReason;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskExecutor;
import io.rlscheduler.worker.TaskOutput;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link TaskExecutor} whose attempts do nothing: each ends at once with exit code 0, so a
 * benchmark measures the scheduler (submit, claim, dispatch, acknowledge, finish) and not process
 * start-up. Built on the worker's public API only.
 *
 * <p>It records when each task was started ({@link System#nanoTime()} at the call of
 * {@link #start}), keyed by task id, so that a benchmark running in the same JVM can compute the
 * submit-to-start latency; and it counts starts, so that a benchmark can check that every task ran
 * exactly once. One instance may serve several workers. Thread-safe.
 */
public final class NoopExecutor implements TaskExecutor {

    private static final ExecutionResult SUCCESS = new ExecutionResult(0, StopReason.NONE, "");

    private final ConcurrentHashMap<String, Long> firstStart = new ConcurrentHashMap<>();
    /** How long each attempt holds its slot before it ends; zero: it ends at once. */
    private final Duration hold;

    /** Attempts that end at once. */
    public NoopExecutor() {
        this(Duration.ZERO);
    }

    /** Attempts that hold their slot for {@code hold} (on no thread: a timer ends them), then end with exit code 0. */
    public NoopExecutor(Duration hold) {
        this.hold = hold;
    }
    private final LongAdder starts = new LongAdder();
    private final LongAdder repeated = new LongAdder();

    @Override
    public TaskExecution start(TaskContext context, TaskOutput output) {
        long now = System.nanoTime();
        if (firstStart.putIfAbsent(context.getTaskId(), now) != null) {
            repeated.increment();
        }
        starts.increment();
        if (hold.isZero()) {
            return new Done();
        }
        CompletableFuture<ExecutionResult> end = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(hold.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)
                .execute(() -> end.complete(SUCCESS));
        return new TaskExecution() {
            @Override
            public CompletableFuture<ExecutionResult> completion() {
                return end;
            }

            @Override
            public void stop(StopReason reason, Duration grace) {
                end.complete(new ExecutionResult(143, reason, "stopped: " + reason));
            }
        };
    }

    /**
     * Returns false: a no-op attempt uses no run directory, checkpoint directory or parameter
     * file, so the worker does not create them (as for any in-JVM executor that says so).
     */
    @Override
    public boolean usesRunDirectories() {
        return false;
    }

    /** Returns the {@link System#nanoTime()} of the task's first start, or -1 if it never started. */
    public long startNanos(String taskId) {
        Long t = firstStart.get(taskId);
        return t == null ? -1 : t;
    }

    /** Returns how many attempts were started, repeats included. */
    public long starts() {
        return starts.sum();
    }

    /** Returns how many distinct tasks were started. */
    public long distinctTasks() {
        return firstStart.size();
    }

    /** Returns how many starts were of a task that had started before (0 when each ran exactly once). */
    public long repeatedStarts() {
        return repeated.sum();
    }

    /** An attempt that has already ended successfully. */
    private static final class Done implements TaskExecution {
        private final CompletableFuture<ExecutionResult> completion = CompletableFuture.completedFuture(SUCCESS);

        @Override
        public CompletableFuture<ExecutionResult> completion() {
            return completion;
        }

        @Override
        public void stop(StopReason reason, Duration grace) {
            // Nothing runs: nothing to stop.
        }
    }
}
