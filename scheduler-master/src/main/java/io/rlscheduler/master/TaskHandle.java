package io.rlscheduler.master;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.CancelResult;
import io.rlscheduler.core.internal.CancelStatus;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A submitted task, seen from the master's API: its state, the future of its result, cancel, its
 * log, and the provenance of its attempts. Cheap; any number of handles may refer to one task. Thread-safe.
 */
public final class TaskHandle {

    private final SchedulerMaster master;
    private final String taskId;

    TaskHandle(SchedulerMaster master, String taskId) {
        this.master = master;
        this.taskId = taskId;
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /**
     * Returns the task's current record, read from Redis.
     *
     * @throws TaskNotFoundException if the task does not exist
     */
    public TaskRecord getRecord() {
        return master.getTask(taskId).orElseThrow(() -> new TaskNotFoundException(taskId));
    }

    /** Returns the task's current state, read from Redis. */
    public TaskState getState() {
        return getRecord().getState();
    }

    /**
     * Returns a future completed with the result when the task has ended (SUCCEEDED, FAILED,
     * CANCELLED or TIMED_OUT), whichever master, worker or reaper ended it. Completes at once for a
     * task that already ended; fails with {@link TaskNotFoundException} if the task does not exist.
     */
    public CompletableFuture<TaskResult> result() {
        return master.watcher().whenDone(taskId).thenCompose(master::resultOf);
    }

    /**
     * Cancels the task: a queued task ends CANCELLED at once; a running one is stopped by its
     * worker (TERM to its process group, KILL after the grace period) and ends CANCELLED when its
     * processes are gone. Safe to call more than once.
     *
     * @return true if the task is or will be cancelled; false if it had already ended otherwise
     * @throws TaskNotFoundException if the task does not exist
     */
    public boolean cancel() {
        CancelResult result = master.cancel(taskId);
        if (result.getStatus() == CancelStatus.UNKNOWN_TASK) {
            throw new TaskNotFoundException(taskId);
        }
        return result.getStatus() != CancelStatus.WRONG_STATE;
    }

    /**
     * Follows the task's log: replays every line written so far, continues live, and ends with
     * one end-of-stream record carrying the final state. Lines are those this master's log file
     * holds (see docs/operations.md for where logs live). A follow may start before the task is
     * submitted (to be attached live from its first line): for a task that does not exist it
     * waits, until the task's log ends or the follow is closed. A task that ended without this
     * master hearing of it (the master was not running then) is ended from the task's record:
     * complete once this master's log holds the line its worker recorded as the last, or marked
     * incomplete when those lines do not come within twice the task lease (they went to another
     * master whose log directory is its own, or the worker died before sending them).
     *
     * <p>The log of a task that ended where this master has no file of it (another master wrote
     * it, or this one restarted with an empty log directory) is brought back from the artifact
     * store, where the master that ended it copied it, and served whole. If the store cannot be
     * read then, the follow ends at once: the consumer gets an END_OF_STREAM marked incomplete
     * saying so, and {@link LogFollow#whenEnded()} fails with
     * {@link io.rlscheduler.store.StoreUnavailableException} (follow again once it is back).
     *
     * @param consumer receives the records, on the log manager's delivery thread; must not block long
     * @return the follow; close it to stop early
     */
    public LogFollow followLogs(Consumer<LogRecord> consumer) {
        return master.followLogs(taskId, consumer);
    }

    /**
     * Follows the metrics the task prints: each line {@code RLS_METRIC {json object}} of its log
     * (every attempt's, in order: those written so far, then new ones as they are written), as a
     * {@link MetricPoint}; other lines are skipped. A learning curve as it grows, for a dashboard or
     * a notebook; the task's final metrics (the latest value of each name) are in its result. It
     * is a {@link #followLogs} that keeps the metrics lines: it ends as that does, and its
     * {@link LogFollow#whenEnded()} says how.
     *
     * @param consumer receives the points, on the log manager's delivery thread; must not block long
     * @return the follow; close it to stop early
     */
    public LogFollow followMetrics(Consumer<MetricPoint> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        return master.followLogs(taskId, record -> {
            MetricPoint point = MetricPoint.of(record);
            if (point != null) {
                consumer.accept(point);
            }
        });
    }

    /**
     * Says why the task is still waiting in the queue, if it is: no live worker, none with its
     * selector's labels, none large enough, too many tasks ahead of it, or every worker large
     * enough busy (see {@link PendingReason}). Read at the call; the answer may be stale a moment later.
     *
     * @throws TaskNotFoundException if the task does not exist
     */
    public PendingReason whyPending() {
        return master.whyPending(taskId);
    }

    /**
     * Returns the provenance of the task's attempts, read from Redis, by attempt number: for each,
     * the worker and its hostname, the script file as resolved on that machine with its SHA-256,
     * the git commit of its work tree and whether the tree was dirty, the interpreter and its
     * version, and the GPUs it was given with their UUIDs (see {@link AttemptProvenance}). Each
     * attempt's worker records it just after the attempt's script started, fenced by the
     * attempt's epoch, in a Redis hash of the task's own rather than in the task record; so an
     * attempt that has just started may not have it yet, and one whose worker could not store it
     * is left out.
     *
     * @return the attempts' provenance, oldest first; empty while none has been recorded
     * @throws TaskNotFoundException if the task does not exist
     */
    public List<AttemptProvenance> provenance() {
        return master.provenance(taskId);
    }

    /**
     * Lists the run's stored artifacts, read now from Redis and the artifact store: the files of
     * each committed checkpoint (newest first) and the outputs each attempt left in its run
     * directory (by attempt), with sizes and SHA-256 from their manifests, and the run's log once
     * it ended. Whether an attempt's outputs are all stored, and why not:
     * {@code AttemptOutputs} (one per attempt). Open one with {@link RunArtifacts#open}, or download all with
     * {@link RunArtifacts#downloadAll}. Blocks while Redis and the store answer.
     *
     * @throws io.rlscheduler.core.TaskNotFoundException      if no such task exists
     * @throws io.rlscheduler.store.StoreUnavailableException if the store cannot be read
     */
    public RunArtifacts artifacts() {
        return master.artifacts(taskId);
    }

    /** Returns the task's current record if it exists. */
    public Optional<TaskRecord> findRecord() {
        return master.getTask(taskId);
    }

    @Override
    public String toString() {
        return "TaskHandle{" + taskId + '}';
    }
}
