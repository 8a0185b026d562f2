package io.rlscheduler.master.internal;

import io.rlscheduler.core.EventSubscription;
import io.rlscheduler.core.LeaseCore;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
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
    private EventSubscription subscription;

    public TaskWatcher(LeaseCore core, Dispatcher dispatcher, TaskLogManager logs) {
        this.core = core;
        this.dispatcher = dispatcher;
        this.logs = logs;
    }

    /** Starts following new events. */
    public void start() {
        subscription = core.subscribe("$", this::onEvent);
    }

    public void addListener(Consumer<TaskEvent> listener) {
        listeners.add(listener);
    }

    public void removeListener(Consumer<TaskEvent> listener) {
        listeners.remove(listener);
    }

    /** Returns a future of the task's final record; completes at once if it has already ended. */
    public CompletableFuture<TaskRecord> whenDone(String taskId) {
        CompletableFuture<TaskRecord> done = waiting.computeIfAbsent(taskId, id -> new CompletableFuture<>());
        // Registered first, checked second: an end that happens in between is seen either way.
        core.getTask(taskId).thenAccept(record -> finishIfEnded(taskId, record));
        return done;
    }

    private void finishIfEnded(String taskId, Optional<TaskRecord> record) {
        if (record.isPresent() && record.get().getState().isTerminal()) {
            CompletableFuture<TaskRecord> done = waiting.remove(taskId);
            if (done != null) {
                done.complete(record.get());
            }
        }
    }

    private void onEvent(TaskEvent event) {
        if ("task".equals(event.getType())) {
            TaskState to = event.getTo();
            String via = event.getFields().getOrDefault("via", "");
            if (to != null && to.isTerminal()) {
                String taskId = event.getTaskId();
                String reason = event.getFields().getOrDefault("reason", "");
                if (!"worker".equals(via)) {
                    logs.abandon(taskId, to.name(), reason);
                } else {
                    // The worker recorded the end in Redis and reports where the log ends; should
                    // that report never come (the worker died just after), followers must still
                    // end. A no-op when the log was completed meanwhile.
                    long delay = 2 * core.getOptions().getTaskLease().toMillis();
                    timer.schedule(() -> logs.abandon(taskId, to.name(), "no report from the worker within "
                            + delay + " ms after " + reason), delay, java.util.concurrent.TimeUnit.MILLISECONDS);
                }
                if (waiting.containsKey(taskId)) {
                    core.getTask(taskId).thenAccept(record -> finishIfEnded(taskId, record));
                }
                dispatcher.trigger();
            } else if (to == TaskState.QUEUED) {
                dispatcher.taskQueued();
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

    @Override
    public void close() {
        timer.shutdownNow();
        if (subscription != null) {
            subscription.close();
        }
    }
}
