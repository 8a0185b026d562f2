package io.rlscheduler.master.internal.log;

import io.rlscheduler.store.StoreUnavailableException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's threads: the I/O stripes, to which each task goes by its id, the sync threads
 * behind them ({@link LogDurability}) and the followers' delivery pool ("rls-log-follow-N", a
 * cached pool: one thread at a time per follower). Runs operations on a task's stripe, and stops
 * the threads in the order that loses nothing. Thread-safe.
 */
final class LogStripes {

    private static final Logger log = LoggerFactory.getLogger(LogStripes.class);

    /** An operation without a result, for {@link #run}. */
    @FunctionalInterface
    interface Action {
        void run(LogStripe stripe) throws IOException;
    }

    private final LogStripe[] stripes;
    private final LogDurability durability;
    private final ThreadPoolExecutor delivery;
    /** Asks each stripe, a tenth of the patience apart (10 ms to 1 s), to end the completions that waited too long. */
    private final ScheduledThreadPoolExecutor patienceTimer;
    private final AtomicInteger openFiles = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

    LogStripes(Path directory, TaskLogManager.Limits limits, TaskLogManager.FileForcer forcer,
               TaskLogManager.RecordLookup recordLookup, LongSupplier lookupTimeoutMillis, LogUploads uploads,
               LogRestores restores, LogSizeLimit sizeLimit, LogEvents events) {
        int perStripeFiles = Math.max(1, limits.maxOpenFiles() / limits.ioThreads());
        int perStripeTasks = Math.max(1, limits.maxCachedTasks() / limits.ioThreads());
        this.durability = new LogDurability(limits.syncThreads(), forcer);
        this.stripes = new LogStripe[limits.ioThreads()];
        for (int i = 0; i < stripes.length; i++) {
            stripes[i] = new LogStripe(i, directory, perStripeFiles, perStripeTasks, openFiles, durability,
                    recordLookup, lookupTimeoutMillis, limits.linePatience().toNanos(), uploads, restores, sizeLimit,
                    events);
        }
        this.delivery = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                LogThreads.named("rls-log-follow-"));
        long check = Math.max(10, Math.min(1_000, limits.linePatience().toMillis() / 10));
        this.patienceTimer = new ScheduledThreadPoolExecutor(1, LogThreads.named("rls-log-patience-"));
        patienceTimer.scheduleWithFixedDelay(() -> {
            for (LogStripe stripe : stripes) {
                stripe.giveUpOverdue();
            }
        }, check, check, TimeUnit.MILLISECONDS);
    }

    /** Returns the stripe of a task. */
    LogStripe of(String taskId) {
        return stripes[Math.floorMod(taskId.hashCode(), stripes.length)];
    }

    /** Returns the pool that runs the followers' consumers. */
    Executor delivery() {
        return delivery;
    }

    /** Returns whether {@link #close} was called. */
    boolean isClosed() {
        return closed.get();
    }

    /**
     * Runs {@code call} on the task's I/O thread and completes the result with its value (see
     * {@link LogStripe#submit}); fails with IllegalStateException once closed.
     */
    <T> CompletableFuture<T> submit(String taskId, boolean lookUpFirst, LogStripe.Call<T> call) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("the task log manager is closed"));
        }
        return of(taskId).submit(taskId, lookUpFirst, call);
    }

    /** As {@link #submit}, for an operation nothing waits for: a failure is logged. */
    void run(String taskId, String what, boolean lookUpFirst, Action action) {
        submit(taskId, lookUpFirst, stripe -> {
            action.run(stripe);
            return null;
        }).whenComplete((ignored, failure) -> {
            if (failure instanceof IllegalStateException) {
                log.debug("task {}: {} after the log manager closed: ignored", taskId, what);
            } else if (failure instanceof StoreUnavailableException) {
                // Its log is in a store that cannot be read (warned of when found): nothing was done.
                log.debug("task {}: {} of its log refused: {}", taskId, what, failure.toString());
            } else if (failure != null) {
                log.error("task {}: {} of its log failed", taskId, what, failure);
            }
        });
    }

    /** Starts attempts' logs with one hand-off to each stripe concerned (see {@link TaskLogManager#openAll}). */
    void openAll(List<TaskLogManager.AttemptStart> starts) {
        if (closed.get()) {
            log.debug("{} log starts after the log manager closed: ignored", starts.size());
            return;
        }
        Map<LogStripe, List<Runnable>> byStripe = new IdentityHashMap<>();
        for (TaskLogManager.AttemptStart start : starts) {
            LogStripe stripe = of(start.taskId());
            byStripe.computeIfAbsent(stripe, s -> new ArrayList<>()).add(stripe.operation(start.taskId(), false, s -> {
                s.open(start.taskId(), start.traceId(), start.epoch(), start.attempt());
                return null;
            }, new CompletableFuture<>()));
        }
        byStripe.forEach((stripe, operations) -> {
            if (!stripe.runAll(operations)) {
                log.debug("{} log starts after the log manager closed: ignored", operations.size());
            }
        });
    }

    /** Returns the tasks of every stripe whose attempt has no end heard of ({@link TaskLogManager#unendedAttempts}). */
    CompletableFuture<List<String>> unended() {
        List<CompletableFuture<List<String>>> parts = new ArrayList<>(stripes.length);
        for (LogStripe stripe : stripes) {
            parts.add(stripe.unended());
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            List<String> all = new ArrayList<>();
            for (CompletableFuture<List<String>> part : parts) {
                all.addAll(part.join());
            }
            return all;
        });
    }

    /** Returns the operations queued on the I/O threads, not yet begun. */
    int writeBacklog() {
        int queued = 0;
        for (LogStripe stripe : stripes) {
            queued += stripe.backlog();
        }
        return queued;
    }

    /** Returns the ended files queued for forcing to disk, not yet begun. */
    int syncBacklog() {
        return durability.backlog();
    }

    /** Returns the files open for appending, over all stripes. */
    int openFiles() {
        return openFiles.get();
    }

    /**
     * Stops the threads: first the I/O threads, after the operations asked for (they write what
     * is pending and force and close their files), then the sync threads (which may have been
     * handed ends until the I/O threads stopped), then the followers not ending already, then the
     * delivery pool. Idempotent; see {@link TaskLogManager#close}.
     */
    void close(Collection<LogFollower> followers) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        patienceTimer.shutdownNow();
        for (LogStripe stripe : stripes) {
            stripe.shutDown();
        }
        boolean interrupted = false;
        for (LogStripe stripe : stripes) {
            interrupted |= stripe.awaitTermination();
        }
        interrupted |= durability.shutDown();
        for (LogFollower follower : followers) {
            // A follower whose end a sync thread queued just before stopping gets that end
            // (complete): its file was forced. The others end here, incomplete.
            follower.terminateUnlessEnding("the task log manager was closed");
        }
        delivery.shutdown();
        interrupted |= LogThreads.awaitTermination(delivery, "log delivery");
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
