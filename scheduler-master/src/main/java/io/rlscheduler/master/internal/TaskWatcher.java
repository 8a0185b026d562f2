package io.rlscheduler.master.internal;

import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.EventSubscription;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.internal.log.TaskLogManager;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the lease core's event stream, so this master learns every transition whoever made it
 * (its own dispatcher, a worker, the reaper, another master): completes the result futures of
 * tasks that ended, ends their logs, triggers a dispatch round when capacity may have been freed,
 * and passes each event to the listeners. Thread-safe.
 *
 * <p>The event of an end its worker recorded is the one source of an attempt's end: it names the
 * line the attempt's log ends at, and the log is completed once it holds that line
 * ({@link TaskLogManager#complete}; a completion whose lines never come ends incomplete after the
 * log manager's patience). The leader does so at once; a master that does not lead (the workers
 * send their lines to the leader, and a log directory may be shared) twice the task lease later,
 * when the leader's end is in a shared file. An end nobody recorded for the worker (the reaper,
 * a cancel while its worker was gone) ends the log at once, marked incomplete
 * ({@link TaskLogManager#abandon}).
 * A master that did not see an end (it started later, the event was trimmed, its cached state
 * was dropped) learns it from the task's record when a follower comes or after a gap.
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
    private final long sweepMillis;
    private final BooleanSupplier leading;
    private final long deferNanos;
    /**
     * Ends its worker recorded that this master heard of while it did not lead, oldest first
     * (every one waits as long), each completed when its time comes ({@link #sweep}).
     */
    private final java.util.LinkedHashMap<String, DeferredEnd> deferred = new java.util.LinkedHashMap<>();

    private record DeferredEnd(long dueNanos, long epoch, long lines, TaskState state) {
    }
    private EventSubscription subscription;
    private final java.util.concurrent.atomic.AtomicLong gaps = new java.util.concurrent.atomic.AtomicLong();
    /** Tasks whose re-read after a gap failed (Redis away): the sweep asks again. */
    private final java.util.Set<String> resultRechecks = ConcurrentHashMap.newKeySet();
    private final java.util.Set<String> logRechecks = ConcurrentHashMap.newKeySet();
    /** Set by {@link #close()}: results waited on from then on fail at once. */
    private volatile boolean closed;

    /** As {@link #TaskWatcher(LeaseCore, Dispatcher, TaskLogManager, BooleanSupplier)} on a master that always leads. */
    public TaskWatcher(LeaseCore core, Dispatcher dispatcher, TaskLogManager logs) {
        this(core, dispatcher, logs, () -> true);
    }

    /**
     * @param leading whether this master leads now: workers send their lines to the leader, so
     *                the leader ends a log from the end's event at once; any other master (whose
     *                log directory may be shared with the leader's) ends it only once the
     *                leader's end can be in the file, after twice the task lease
     */
    public TaskWatcher(LeaseCore core, Dispatcher dispatcher, TaskLogManager logs, BooleanSupplier leading) {
        this.core = core;
        this.dispatcher = dispatcher;
        this.logs = logs;
        this.leading = leading;
        this.sweepMillis = Math.max(10, Math.min(1_000, core.getOptions().getTaskLease().toMillis() / 5));
        this.deferNanos = core.getOptions().getTaskLease().multipliedBy(2).toNanos();
    }

    /** Starts following new events. */
    public void start() {
        timer.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
        subscription = core.subscribe("$", this::onEvent);
    }

    /** Re-reads the tasks whose re-read after a gap failed. */
    private void sweep() {
        for (Map.Entry<String, DeferredEnd> due : dueEnds()) {
            DeferredEnd end = due.getValue();
            logs.complete(due.getKey(), end.epoch(), end.lines(), end.state());
        }
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
    }

    /** Removes and returns the deferred ends whose time has come. */
    private List<Map.Entry<String, DeferredEnd>> dueEnds() {
        List<Map.Entry<String, DeferredEnd>> due = new java.util.ArrayList<>();
        long now = System.nanoTime();
        synchronized (deferred) {
            for (java.util.Iterator<Map.Entry<String, DeferredEnd>> it = deferred.entrySet().iterator(); it.hasNext();) {
                Map.Entry<String, DeferredEnd> e = it.next();
                if (now - e.getValue().dueNanos() < 0) {
                    break;
                }
                due.add(Map.entry(e.getKey(), e.getValue()));
                it.remove();
            }
        }
        return due;
    }

    /** The end its worker recorded, from its event: the leader ends the log now, another master later. */
    private void endRecorded(String taskId, long epoch, long lines, TaskState state) {
        if (leading.getAsBoolean()) {
            logs.complete(taskId, epoch, lines, state);
            return;
        }
        synchronized (deferred) {
            deferred.remove(taskId);
            deferred.put(taskId, new DeferredEnd(System.nanoTime() + deferNanos, epoch, lines, state));
        }
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
     * its futures and has its log ended as the end's event would have; and since QUEUED events
     * may be among the lost, a dispatch round runs.
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
     * A task that may have ended without this master hearing of it: ends its log from the record
     * as the end's event would have. A record that names the line its last attempt's log ends at
     * (its worker recorded the end) completes the log once it holds that line; one that does not
     * ends a log that still waits for the attempt's end, marked incomplete. A task with no log
     * here whose record says no line was printed needs nothing: its followers end from the record.
     */
    private void checkLogOfEnded(TaskRecord task, String reason) {
        String taskId = task.getTaskId();
        if (!task.getState().isTerminal() || task.getAttempt() == 0) {
            return;
        }
        if (task.getLogLines() >= 0) {
            logs.complete(taskId, task.getEpoch(), task.getLogLines(), task.getState());
            return;
        }
        logs.awaitsEnd(taskId).thenAccept(awaiting -> {
            if (awaiting == TaskLogManager.Awaiting.ATTEMPT_END) {
                logs.abandon(taskId, task.getState(), reason);
            }
        });
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
     * the log's state was not cached), the follower would wait for good: the log is ended from
     * the record ({@link #checkLogOfEnded}). One record read per follow; never blocks.
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
        } else if (event.getKind() == TaskEvent.Kind.OWNER) {
            dispatcher.taskQueued(); // limits changed: tasks that waited on them may be claimable now
        } else if (event.getKind() == TaskEvent.Kind.TASK) {
            TaskState to = event.getTo();
            TaskEvent.Via via = event.getVia();
            if (to != null && to.isTerminal()) {
                String taskId = event.getTaskId();
                if (via == TaskEvent.Via.WORKER && event.getLogLines() >= 0) {
                    endRecorded(taskId, event.getEpoch(), event.getLogLines(), to);
                } else {
                    logs.abandon(taskId, to, event.getReason());
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
