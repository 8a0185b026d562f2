package io.rlscheduler.master.internal.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 *
 * <p>A record that says the task ended with lines printed means its log ended on some master:
 * before the answer is handed back, the log is brought back from the artifact store into the
 * missing file ({@link LogRestores}), so that nothing is written here that the store's copy
 * would contradict. If the store cannot be read, the answer says so ({@link Told#storeFailure}):
 * followers end with that error, and the parked operations are refused rather than run.
 */
final class RecordLookups {

    private static final Logger log = LoggerFactory.getLogger(RecordLookups.class);

    /**
     * What a lookup came to.
     *
     * @param recorded     what the record tells: null when there is no record, or the lookup failed
     * @param restored     whether the task's log file was brought back from the artifact store
     *                     (or found there, brought by a restore before): read the state again
     * @param storeFailure why the log, ended elsewhere, could not be brought back from the store;
     *                     null when it was, or was not needed
     */
    record Told(TaskLogManager.Recorded recorded, boolean restored, Throwable storeFailure) {

        static final Told NOTHING = new Told(null, false, null);
    }

    /** What to do with the answer, on the I/O thread. */
    @FunctionalInterface
    interface Answer {
        void accept(Told told) throws IOException;
    }

    /** An operation that waits for a lookup: run once the answer is in, or refused. */
    interface Parked extends Runnable {
        /** Fails the operation without running it. */
        void refuse(Throwable why);
    }

    private final TaskLogManager.RecordLookup lookup;
    private final LongSupplier timeoutMillis;
    private final Executor ioThread;
    private final Runnable afterAnswer;
    private final LogRestores restores;
    private final Path directory;
    /** Tasks whose record is being looked up: the operations waiting for it. */
    private final HashMap<String, ArrayDeque<Parked>> parked = new HashMap<>();
    private boolean closing;

    /**
     * @param afterAnswer runs on the I/O thread after each answer that comes later than asked
     * @param restores    brings back the logs of ended tasks missing in {@code directory}
     */
    RecordLookups(TaskLogManager.RecordLookup lookup, LongSupplier timeoutMillis, Executor ioThread,
                  Runnable afterAnswer, LogRestores restores, Path directory) {
        this.lookup = Objects.requireNonNull(lookup, "recordLookup");
        this.timeoutMillis = timeoutMillis;
        this.ioThread = ioThread;
        this.afterAnswer = afterAnswer;
        this.restores = Objects.requireNonNull(restores, "restores");
        this.directory = directory;
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
        if (answer.isDone() && !answer.isCompletedExceptionally() && !needsRestore(answer.join())) {
            then.accept(new Told(answer.join(), false, null));
            return;
        }
        answer.handle((recorded, failure) -> {
            if (failure != null) {
                log.warn("task {}: cannot read its record ({}); {} as if it told nothing", taskId,
                        failure.toString(), what);
                return CompletableFuture.completedFuture(Told.NOTHING);
            }
            return restoreIfNeeded(taskId, recorded);
        }).thenCompose(told -> told).thenAccept(told -> {
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

    /**
     * Whether a record means the task's log ended on some master with lines in it: the task
     * ended, and not with an attempt that printed nothing (or none at all). Such a log is in the
     * artifact store once its master uploaded it.
     */
    private boolean needsRestore(TaskLogManager.Recorded recorded) {
        return restores.isEnabled() && recorded != null && recorded.ended()
                && (recorded.end() == null || !recorded.end().isComplete());
    }

    /** The answer, once the log of a task that ended elsewhere is back from the store (if it needs to be). */
    private CompletableFuture<Told> restoreIfNeeded(String taskId, TaskLogManager.Recorded recorded) {
        if (!needsRestore(recorded)) {
            return CompletableFuture.completedFuture(new Told(recorded, false, null));
        }
        return restores.restore(taskId, LogFileFormat.fileOf(directory, taskId)).handle((restored, failure) -> {
            if (failure == null) {
                return new Told(recorded, restored, null);
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            log.warn("task {}: its log ended where this master has no file of it, and cannot be brought back from"
                    + " the artifact store: {}",
                    taskId, cause.toString());
            return new Told(recorded, false, cause);
        });
    }

    /** Starts parking the operations on a task, {@code first} among them, until {@link #runParked}. */
    void park(String taskId, Parked first) {
        ArrayDeque<Parked> waiting = new ArrayDeque<>();
        waiting.add(first);
        parked.put(taskId, waiting);
    }

    /** Parks {@code op} if its task's record is being looked up. Returns whether it was parked. */
    boolean parkIfLookingUp(String taskId, Parked op) {
        ArrayDeque<Parked> waiting = parked.get(taskId);
        if (waiting == null) {
            return false;
        }
        waiting.add(op);
        return true;
    }

    /** Runs the operations parked for a task, in call order. */
    void runParked(String taskId) {
        ArrayDeque<Parked> waiting = parked.remove(taskId);
        if (waiting != null) {
            // An operation that asks again parks the rest behind it, still in order.
            for (Parked op : waiting) {
                op.run();
            }
        }
    }

    /** Refuses the operations parked for a task, without running them. */
    void refuseParked(String taskId, Throwable why) {
        ArrayDeque<Parked> waiting = parked.remove(taskId);
        if (waiting != null) {
            for (Parked op : waiting) {
                op.refuse(why);
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
