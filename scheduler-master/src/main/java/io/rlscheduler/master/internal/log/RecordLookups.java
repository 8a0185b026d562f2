package io.rlscheduler.master.internal.log;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One I/O thread's questions to the task records ({@link TaskLogManager.RecordLookup}) about
 * tasks it holds neither a file nor an attempt for, and the operations that wait for the answer.
 * While a task's record is looked up, the batches, completions, starts and abandons that come
 * for it are parked and run once the answer is in, in call order. A lookup that fails, or takes
 * longer than the timeout (5 s), counts as telling nothing. Once closing, nothing is asked any
 * more and the parked operations run without an answer. Confined to the I/O thread, except the
 * lookup's completion, which hands the answer back to it.
 */
final class RecordLookups {

    private static final Logger log = LoggerFactory.getLogger(RecordLookups.class);

    /** What to do with the answer, on the I/O thread. */
    @FunctionalInterface
    interface Answer {
        /** Takes the record's answer: null when there is no record, or the lookup failed. */
        void accept(TaskLogManager.Recorded recorded) throws IOException;
    }

    private final TaskLogManager.RecordLookup lookup;
    private final LongSupplier timeoutMillis;
    private final Executor ioThread;
    private final Runnable afterAnswer;
    /** Tasks whose record is being looked up: the operations waiting for it. */
    private final HashMap<String, ArrayDeque<Runnable>> parked = new HashMap<>();
    private boolean closing;

    /**
     * @param afterAnswer runs on the I/O thread after each answer that comes later than asked
     */
    RecordLookups(TaskLogManager.RecordLookup lookup, LongSupplier timeoutMillis, Executor ioThread,
                  Runnable afterAnswer) {
        this.lookup = Objects.requireNonNull(lookup, "recordLookup");
        this.timeoutMillis = timeoutMillis;
        this.ioThread = ioThread;
        this.afterAnswer = afterAnswer;
    }

    /**
     * Asks about a task and hands the answer to {@code then} on the I/O thread: at once if it has
     * answered already (no lookup configured), else once it answers. A manager closed meanwhile
     * drops the answer: its close ends the followers and runs the parked operations.
     *
     * @param what the operation, for the log
     */
    void ask(String taskId, String what, Answer then) throws IOException {
        CompletableFuture<TaskLogManager.Recorded> answer;
        try {
            // On a copy: the lookup's own future may be shared with others, who must not see the timeout.
            answer = Objects.requireNonNull(lookup.lookUp(taskId), "the record lookup returned null").copy()
                    .orTimeout(timeoutMillis.getAsLong(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        if (answer.isDone() && !answer.isCompletedExceptionally()) {
            then.accept(answer.join());
            return;
        }
        answer.whenComplete((recorded, failure) -> {
            if (failure != null) {
                log.warn("task {}: cannot read its record ({}); {} as if it told nothing", taskId,
                        failure.toString(), what);
            }
            TaskLogManager.Recorded told = failure == null ? recorded : null;
            try {
                ioThread.execute(() -> {
                    try {
                        then.accept(told);
                    } catch (IOException | RuntimeException e) {
                        log.error("task {}: {} of its log failed", taskId, what, e);
                    }
                    afterAnswer.run();
                });
            } catch (RejectedExecutionException closed) {
                // The manager's close ends the followers and ran the parked operations.
            }
        });
    }

    /** Starts parking the operations on a task, {@code first} among them, until {@link #runParked}. */
    void park(String taskId, Runnable first) {
        ArrayDeque<Runnable> waiting = new ArrayDeque<>();
        waiting.add(first);
        parked.put(taskId, waiting);
    }

    /** Parks {@code op} if its task's record is being looked up. Returns whether it was parked. */
    boolean parkIfLookingUp(String taskId, Runnable op) {
        ArrayDeque<Runnable> waiting = parked.get(taskId);
        if (waiting == null) {
            return false;
        }
        waiting.add(op);
        return true;
    }

    /** Runs the operations parked for a task, in call order. */
    void runParked(String taskId) {
        ArrayDeque<Runnable> waiting = parked.remove(taskId);
        if (waiting != null) {
            // An operation that asks again parks the rest behind it, still in order.
            for (Runnable op : waiting) {
                op.run();
            }
        }
    }

    /** Returns whether the manager is closing: no more lookups. */
    boolean isClosing() {
        return closing;
    }

    /** Asks nothing more, and runs every parked operation without an answer. */
    void close() {
        closing = true;
        for (String taskId : parked.keySet().toArray(new String[0])) {
            runParked(taskId);
        }
    }
}
