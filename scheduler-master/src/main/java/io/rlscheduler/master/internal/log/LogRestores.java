package io.rlscheduler.master.internal.log;

import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.RunLayout;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings an ended log that this master has no file of (a standby that took over, a restarted
 * master with an empty log directory) back from the artifact store into the log directory, on a
 * restore thread ("rls-log-restore-N"), never an I/O thread. The copy lands whole or not at all
 * ({@link ArtifactStore#get} moves it into place), and from then on the file serves the log as
 * any other: recovery reads it, followers replay it, and a later end appends to it. Downloaded
 * rather than read as a stream: one path for every reader, and a second follow reads the disk.
 *
 * <p>Thread-safe; concurrent restores of one task share one download.
 */
final class LogRestores {

    private static final Logger log = LoggerFactory.getLogger(LogRestores.class);
    private static final int THREADS = 2;

    private final ArtifactStore store;
    private final ThreadPoolExecutor threads;
    private final ConcurrentHashMap<String, CompletableFuture<Boolean>> inFlight = new ConcurrentHashMap<>();

    /** @param store where ended logs are; null for none (nothing is restored and no thread made) */
    LogRestores(ArtifactStore store) {
        this.store = store;
        this.threads = store == null ? null : new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), LogThreads.named("rls-log-restore-"));
    }

    /** Returns whether there is a store to restore from. */
    boolean isEnabled() {
        return store != null;
    }

    /**
     * Copies the store's copy of a task's ended log to {@code file}, unless the file is there
     * (and not empty) already. Returns at once.
     *
     * @return completed with true when the file is there now, false when the store holds no log
     *         of the task; failed with {@link io.rlscheduler.store.StoreUnavailableException} when
     *         the store cannot be read, with {@link java.io.UncheckedIOException} when the file
     *         cannot be written, with IllegalStateException once closed
     */
    CompletableFuture<Boolean> restore(String taskId, Path file) {
        if (store == null) {
            return CompletableFuture.completedFuture(false);
        }
        CompletableFuture<Boolean> fresh = new CompletableFuture<>();
        CompletableFuture<Boolean> running = inFlight.putIfAbsent(taskId, fresh);
        if (running != null) {
            return running.copy();
        }
        fresh.whenComplete((ignored, failure) -> inFlight.remove(taskId, fresh));
        try {
            threads.execute(() -> {
                try {
                    fresh.complete(download(taskId, file));
                } catch (RuntimeException e) {
                    fresh.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException closed) {
            fresh.completeExceptionally(new IllegalStateException("the task log manager is closed"));
        }
        return fresh.copy();
    }

    private boolean download(String taskId, Path file) {
        if (file.toFile().length() > 0) {
            return true; // a restore before this one brought it, or the log was written here meanwhile
        }
        try {
            long size = store.get(RunLayout.log(taskId), file).getSize();
            log.info("task {}: its ended log is not in this master's log directory; brought {} bytes back from the"
                    + " artifact store", taskId, size);
            return true;
        } catch (ArtifactNotFoundException none) {
            return false;
        }
    }

    /** Stops the restore threads after the restores asked for (10 s at most); idempotent. */
    boolean close() {
        if (threads == null) {
            return false;
        }
        threads.shutdown();
        return LogThreads.awaitTermination(threads, "log restore");
    }
}
