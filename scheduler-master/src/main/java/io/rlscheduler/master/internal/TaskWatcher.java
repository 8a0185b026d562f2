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
import java.util.concurrent.TimeUnit;
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
 * a cancel while its worker was gone) ends the log marked incomplete
 * ({@link TaskLogManager#abandon}), at once on the leader and as late on the others: two masters
 * sharing a directory never both append an end each found missing.
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
     * Ends this master heard of from their events while it did not lead, oldest first (every one
     * waits as long, so this is also the order they are due in), each written when its time comes
     * ({@link #sweep}). Guards {@link #deferredSooner} too.
     */
    private final java.util.LinkedHashMap<String, DeferredEnd> deferred = new java.util.LinkedHashMap<>();
    /** Ends learnt from records (a follower, a gap), due sooner than those of events: a few, read whole each sweep. */
    private final Map<String, DeferredEnd> deferredSooner = new java.util.HashMap<>();

    /** An end to write later: completed at {@code lines}, or abandoned with {@code reason} where lines is -1. */
    private record DeferredEnd(long dueNanos, long epoch, long lines, TaskState state, String reason) {
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
        timer.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
        subscription = core.subscribe("$", this::onEvent);
    }

    /** Re-reads the tasks whose re-read after a gap failed. */
    private void sweep() {
        for (Map.Entry<String, DeferredEnd> due : dueEnds()) {
            DeferredEnd end = due.getValue();
            try {
                writeEnd(due.getKey(), end.lines(), end.epoch(), end.state(), end.reason());
            } catch (RuntimeException e) {
                // Thrown out of the scheduled sweep, it would cancel every later one, and their ends.
                log.warn("task {}: cannot end its log: {}", due.getKey(), e.toString());
            }
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
            for (java.util.Iterator<Map.Entry<String, DeferredEnd>> it = deferredSooner.entrySet().iterator(); it.hasNext();) {
                Map.Entry<String, DeferredEnd> e = it.next();
                if (now - e.getValue().dueNanos() >= 0) {
                    due.add(Map.entry(e.getKey(), e.getValue()));
                    it.remove();
                }
            }
        }
        return due;
    }

    /**
     * The end its worker recorded: the leader ends the log now, another master later.
     *
     * @param endedAtMillis when the task ended (wall clock), or 0 for just now (its event)
     */
    private void endRecorded(String taskId, long epoch, long lines, TaskState state, long endedAtMillis) {
        endLog(taskId, epoch, lines, state, null, endedAtMillis);
    }

    /** An end nobody recorded for the worker: the leader abandons the log now, another master later. */
    private void endUnrecorded(String taskId, long epoch, TaskState state, String reason, long endedAtMillis) {
        endLog(taskId, epoch, -1, state, reason, endedAtMillis);
    }

    /**
     * Ends the log now on the leader; on any other master only once twice the task lease has
     * passed since the end (by then the leader's end is in a shared file, and this one is then
     * not written), so two masters never both append an end they each found missing.
     */
    private void endLog(String taskId, long epoch, long lines, TaskState state, String reason, long endedAtMillis) {
        if (leading.getAsBoolean()) {
            writeEnd(taskId, lines, epoch, state, reason);
            return;
        }
        long since = endedAtMillis <= 0 ? 0 : Math.max(0, System.currentTimeMillis() - endedAtMillis);
        long wait = deferNanos - TimeUnit.MILLISECONDS.toNanos(since);
        if (wait <= 0) {
            writeEnd(taskId, lines, epoch, state, reason); // long over: the leader's end, if any, is in the file
            return;
        }
        synchronized (deferred) {
            DeferredEnd waiting = deferred.get(taskId);
            if (waiting == null) {
                waiting = deferredSooner.get(taskId);
            }
            if (waiting != null && waiting.epoch() == epoch) {
                return; // heard again (a follower came, a gap): its time stays as first set
            }
            deferred.remove(taskId);
            deferredSooner.remove(taskId);
            DeferredEnd end = new DeferredEnd(System.nanoTime() + wait, epoch, lines, state, reason);
            (wait < deferNanos ? deferredSooner : deferred).put(taskId, end);
        }
    }

    private void writeEnd(String taskId, long lines, long epoch, TaskState state, String reason) {
        if (lines >= 0) {
            logs.complete(taskId, epoch, lines, state);
        } else {
            logs.abandon(taskId, state, reason);
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
     * (its worker recorded the end) completes the log once it holds that line, at once on the
     * leader and, as from the event, later on a master that does not lead (the leader writes
     * that end into a shared file meanwhile, and its followers here get it from there); one that does not
     * ends a log that still waits for the attempt's end, marked incomplete. A task with no log
     * here whose record says no line was printed needs nothing: its followers end from the record.
     */
    private void checkLogOfEnded(TaskRecord task, String reason) {
        String taskId = task.getTaskId();
        if (!task.getState().isTerminal() || task.getAttempt() == 0) {
            return;
        }
        if (task.getLogLines() >= 0) {
            endRecorded(taskId, task.getEpoch(), task.getLogLines(), task.getState(), task.getUpdatedAtMillis());
            return;
        }
        logs.awaitsEnd(taskId).thenAccept(awaiting -> {
            if (awaiting == TaskLogManager.Awaiting.ATTEMPT_END) {
                endUnrecorded(taskId, task.getEpoch(), task.getState(), reason, task.getUpdatedAtMillis());
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
                    endRecorded(taskId, event.getEpoch(), event.getLogLines(), to, 0);
                } else {
                    endUnrecorded(taskId, event.getEpoch(), to, event.getReason(), 0);
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
