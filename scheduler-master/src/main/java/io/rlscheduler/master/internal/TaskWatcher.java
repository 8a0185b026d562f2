package io.rlscheduler.master.internal;

import io.rlscheduler.core.EventSubscription;
import io.rlscheduler.core.LeaseCore;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.internal.log.TaskLogManager;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the lease core's event stream, so this master learns every transition whoever made it
 * (its own dispatcher, a worker, the reaper, another master): completes the result futures of
 * tasks that ended, ends the logs of tasks that ended without their worker's report, triggers a
 * dispatch round when capacity may have been freed, and passes each event to the listeners.
 * Thread-safe.
 *
 * <p>A task its worker ended is recorded in Redis first and reported to the master after, so
 * the event and the report reach this master in either order. The log is ended by the report
 * ({@link TaskLogManager#complete}); only when the report has not come
 * {@code 2 × taskLease} after the event does the watcher end the log itself
 * ({@link TaskLogManager#abandon}). To know that cheaply it pairs events with reports
 * ({@link #reportArrived}) in two small maps, emptied as the pairs meet, and one timer sweeps
 * them every {@link #sweepMillis} ms; not one timer per task, which at thousands of tasks a
 * second would hold millions of timers and later read millions of files back to find their
 * logs already ended.
 */
public final class TaskWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TaskWatcher.class);

    private final LeaseCore core;
    private final Dispatcher dispatcher;
    private final TaskLogManager logs;
    private final ConcurrentHashMap<String, CompletableFuture<TaskRecord>> waiting = new ConcurrentHashMap<>();
    private final java.util.concurrent.ScheduledExecutorService timer =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "rls-master-log-watch");
                t.setDaemon(true);
                return t;
            });
    private final List<Consumer<TaskEvent>> listeners = new CopyOnWriteArrayList<>();
    /** Task → its end recorded by its worker, while the report has not come (when it is due). */
    private final ConcurrentHashMap<String, EndWithoutReport> endsAwaitingReport = new ConcurrentHashMap<>();
    /** Task → when its worker's report came, while the event of its end has not (nanoTime). */
    private final ConcurrentHashMap<String, Long> reportsAwaitingEnd = new ConcurrentHashMap<>();
    private final long reportGraceMillis;
    private final long sweepMillis;
    private EventSubscription subscription;
    private final java.util.concurrent.atomic.AtomicLong gaps = new java.util.concurrent.atomic.AtomicLong();
    /** Tasks whose re-read after a gap failed (Redis away): the sweep asks again. */
    private final java.util.Set<String> resultRechecks = ConcurrentHashMap.newKeySet();
    private final java.util.Set<String> logRechecks = ConcurrentHashMap.newKeySet();
    /** Tasks whose log has a check scheduled by {@link #checkLogOfEnded}. */
    private final java.util.Set<String> endChecks = ConcurrentHashMap.newKeySet();
    /** Set by {@link #close()}: results waited on from then on fail at once. */
    private volatile boolean closed;
    /** When {@link #start()} ran (wall clock, ms). */
    private volatile long startedAtMillis;

    private record EndWithoutReport(long dueNanos, TaskState finalState, String reason) {
    }

    public TaskWatcher(LeaseCore core, Dispatcher dispatcher, TaskLogManager logs) {
        this.core = core;
        this.dispatcher = dispatcher;
        this.logs = logs;
        this.reportGraceMillis = 2 * core.getOptions().getTaskLease().toMillis();
        this.sweepMillis = Math.max(10, Math.min(1_000, reportGraceMillis / 10));
    }

    /** Starts following new events. */
    public void start() {
        startedAtMillis = System.currentTimeMillis();
        timer.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
        subscription = core.subscribe("$", this::onEvent);
    }

    /**
     * Notes that a worker reported the end of a task's attempt (a final status, not FENCED), so
     * its log needs no ending by the watcher. Never blocks; called on event loops.
     */
    public void reportArrived(String taskId) {
        if (endsAwaitingReport.remove(taskId) == null) {
            reportsAwaitingEnd.put(taskId, System.nanoTime());
            // The event may have come in between: then whichever side sees the other removes both.
            if (endsAwaitingReport.remove(taskId) != null) {
                reportsAwaitingEnd.remove(taskId);
            }
        }
    }

    /** Returns how many ends wait for their report and reports for their end. For tests. */
    int[] unpaired() {
        return new int[] {endsAwaitingReport.size(), reportsAwaitingEnd.size()};
    }

    private void endedByWorker(String taskId, TaskState finalState, String reason) {
        if (reportsAwaitingEnd.remove(taskId) == null) {
            endsAwaitingReport.put(taskId, new EndWithoutReport(
                    System.nanoTime() + reportGraceMillis * 1_000_000, finalState, reason));
            if (reportsAwaitingEnd.remove(taskId) != null) {
                endsAwaitingReport.remove(taskId);
            }
        }
    }

    /**
     * Ends the logs of tasks whose report is overdue; forgets reports whose event never came;
     * re-reads the tasks whose re-read after a gap failed.
     */
    private void sweep() {
        for (String taskId : resultRechecks) {
            if (resultRechecks.remove(taskId)) {
                recheckResult(taskId);
            }
        }
        for (String taskId : logRechecks) {
            if (logRechecks.remove(taskId)) {
                recheckLog(taskId);
            }
        }
        long now = System.nanoTime();
        endsAwaitingReport.forEach((taskId, end) -> {
            if (now - end.dueNanos() >= 0 && endsAwaitingReport.remove(taskId, end)) {
                String reason = "no report from the worker within " + reportGraceMillis + " ms after " + end.reason();
                // The record tells how many lines the attempt printed: a log that holds them all
                // lacks only the report (its worker died just after recording the end) and is
                // completed; without the record it is ended as incomplete.
                core.getTask(taskId).whenComplete((record, error) -> {
                    TaskRecord task = error == null ? record.orElse(null) : null;
                    if (task == null) {
                        logs.abandon(taskId, end.finalState(), reason);
                    } else {
                        logs.abandon(taskId, end.finalState(), reason, task.getEpoch(), task.getLogLines());
                    }
                });
            }
        });
        // A report for an end this master never sees as an event (it started after the end, or a
        // worker resent a report already paired): kept as long as an end waits for a report.
        reportsAwaitingEnd.forEach((taskId, at) -> {
            if (now - at >= reportGraceMillis * 1_000_000) {
                reportsAwaitingEnd.remove(taskId, at);
            }
        });
    }

    public void addListener(Consumer<TaskEvent> listener) {
        listeners.add(listener);
    }

    public void removeListener(Consumer<TaskEvent> listener) {
        listeners.remove(listener);
    }

    /**
     * Returns a future of the task's final record; completes at once if it has already ended, and
     * fails with {@link TaskNotFoundException} if no such task exists (tasks are never deleted, so
     * it never will).
     */
    public CompletableFuture<TaskRecord> whenDone(String taskId) {
        CompletableFuture<TaskRecord> done = waiting.computeIfAbsent(taskId, id -> new CompletableFuture<>());
        if (closed) {
            // close() may have failed the waiting futures before this one was added.
            failClosed(taskId);
            return done;
        }
        // Registered first, checked second: an end that happens in between is seen either way. A
        // read that fails is tried again by the sweep: no event may ever come for an ended task.
        recheckResult(taskId);
        return done;
    }

    /**
     * Completes the waited-on result of a task that ended; fails it for a task that does not
     * exist (tasks are never deleted, so it never will).
     */
    private void finishIfEnded(String taskId, Optional<TaskRecord> record) {
        if (record.isEmpty()) {
            CompletableFuture<TaskRecord> done = waiting.remove(taskId);
            if (done != null) {
                done.completeExceptionally(new TaskNotFoundException(taskId));
            }
        } else if (record.get().getState().isTerminal()) {
            CompletableFuture<TaskRecord> done = waiting.remove(taskId);
            if (done != null) {
                done.complete(record.get());
            }
        }
    }

    /**
     * Events this master had not read were trimmed from the stream: the ends among them would
     * leave result futures waiting and logs open for good. So it re-reads the record of every task
     * it waits on, and of every task whose log attempt it holds unended: an ended one completes
     * its futures and, should its worker's report not come within the grace, has its log ended as
     * an end by its worker would; and since QUEUED events may be among the lost, a dispatch round
     * runs.
     */
    private void onGap(TaskEvent event) {
        log.warn("task events after {} (up to {}) were trimmed from the stream before this master read them;"
                + " re-reading the {} tasks waited on and the tasks with an unended log", event.getFields().get("after"),
                event.getFields().get("next"), waiting.size());
        gaps.incrementAndGet();
        dispatcher.taskQueued();
        waiting.keySet().forEach(this::recheckResult);
        logs.unendedAttempts().thenAccept(taskIds -> taskIds.forEach(this::recheckLog));
    }

    /**
     * Completes a waited-on result if the task ended (asked when the wait begins, after a gap, and
     * after the task's end event); asked again by the sweep if Redis failed.
     */
    private void recheckResult(String taskId) {
        core.getTask(taskId).whenComplete((record, error) -> {
            if (error != null) {
                recheckFailed(resultRechecks, taskId, error);
            } else {
                finishIfEnded(taskId, record);
            }
        });
    }

    /** After a gap: checks the log of a task that ended ({@link #checkLogOfEnded}); asked again by the sweep if Redis failed. */
    private void recheckLog(String taskId) {
        core.getTask(taskId).whenComplete((record, error) -> {
            if (error != null) {
                recheckFailed(logRechecks, taskId, error);
            } else {
                record.ifPresent(task -> checkLogOfEnded(task, "its end, whose event this master missed (trimmed from the stream)"));
            }
        });
    }

    /**
     * A task that may have ended without this master hearing of it: once its worker's report can
     * no longer be coming, ends its log here (marked incomplete) if the log still waits for an
     * end: a started attempt not ended and no completion waiting for lines, or nothing here at all
     * while the record says the attempt printed lines (with none printed, or not known, a
     * follower's own record lookup ends it). "No longer coming" is the report grace after the
     * later of the end (the record's time, Redis's clock; a local clock ahead of it shortens the
     * wait by the difference) and this watcher's start: a worker keeps its report until a master
     * takes it, so after an outage of every master the grace counts from this one's start.
     * Without the pairing maps, so a report that comes meanwhile completes the log first; repeated
     * calls neither push the end back nor check twice.
     */
    private void checkLogOfEnded(TaskRecord task, String reason) {
        String taskId = task.getTaskId();
        if (!task.getState().isTerminal() || task.getAttempt() == 0 || !endChecks.add(taskId)) {
            return;
        }
        long from = Math.max(task.getUpdatedAtMillis(), startedAtMillis);
        long delay = Math.max(0, from + reportGraceMillis - System.currentTimeMillis());
        try {
            timer.schedule(() -> logs.awaitsEnd(taskId).whenComplete((awaiting, error) -> {
                endChecks.remove(taskId);
                if (awaiting == TaskLogManager.Awaiting.ATTEMPT_END
                        || (awaiting == TaskLogManager.Awaiting.NO_LOG_HERE && task.getLogLines() > 0)) {
                    logs.abandon(taskId, task.getState(), "no report from the worker within " + reportGraceMillis
                            + " ms after " + reason, task.getEpoch(), task.getLogLines());
                }
            }), delay, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            endChecks.remove(taskId);
        }
    }

    private static void recheckFailed(java.util.Set<String> retries, String taskId, Throwable error) {
        if (retries.add(taskId)) {
            log.warn("task {}: cannot read its record (for a result waited on, or after a gap in the event stream): {};"
                    + " trying again", taskId, error.toString());
        }
    }

    /**
     * A follower was attached to a task's log. If the task has ended while its log here still
     * waits for the end (this master was not running when it ended, or missed the event while
     * the log's state was not cached), the follower would wait for good: the log is ended once
     * the worker's report can no longer be coming ({@link #checkLogOfEnded}). One record read per
     * follow; never blocks.
     */
    public void followed(String taskId) {
        core.getTask(taskId).whenComplete((record, error) -> {
            if (error != null) {
                log.debug("task {}: cannot read its record for a new follower: {}", taskId, error.toString());
            } else {
                record.ifPresent(task -> checkLogOfEnded(task, "its end, which this master did not see (it was not"
                        + " running then, or missed the event)"));
            }
        });
    }

    /** Returns how many gaps in the event stream this watcher met. */
    public long getGaps() {
        return gaps.get();
    }

    private void onEvent(TaskEvent event) {
        if (event.getKind() == TaskEvent.Kind.GAP) {
            onGap(event);
        } else if (event.getKind() == TaskEvent.Kind.TASK) {
            TaskState to = event.getTo();
            String via = event.getFields().getOrDefault("via", "");
            if (to != null && to.isTerminal()) {
                String taskId = event.getTaskId();
                String reason = event.getFields().getOrDefault("reason", "");
                if (!"worker".equals(via)) {
                    logs.abandon(taskId, to, reason);
                } else {
                    // The worker recorded the end in Redis and reports where the log ends; should
                    // that report never come (the worker died just after), followers must still
                    // end: the sweep sees to it.
                    endedByWorker(taskId, to, reason);
                }
                if (waiting.containsKey(taskId)) {
                    recheckResult(taskId);
                }
                dispatcher.trigger();
            } else if (to == TaskState.QUEUED) {
                dispatcher.queuedEvent(event.getTaskId(), via);
            }
        }
        for (Consumer<TaskEvent> listener : listeners) {
            try {
                listener.accept(event);
            } catch (RuntimeException e) {
                log.error("task event listener failed on {}", event.getStreamId(), e);
            }
        }
    }

    /**
     * Stops following events. Results still waited on fail with a retryable
     * {@link SchedulerException}: nothing here will see their end any more.
     */
    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        if (subscription != null) {
            subscription.close();
        }
        waiting.keySet().forEach(this::failClosed);
    }

    private void failClosed(String taskId) {
        CompletableFuture<TaskRecord> done = waiting.remove(taskId);
        if (done != null) {
            done.completeExceptionally(new SchedulerException("the master stopped before task " + taskId + " ended;"
                    + " ask a running master for its result", true, null));
        }
    }
}
