package io.rlscheduler.worker.internal.artifacts;

import io.rlscheduler.core.internal.DaemonThreads;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.worker.ArtifactOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A worker's way to its artifact store: the store, threads that run the transfer pipelines
 * (which may block for minutes on a large upload, so never the worker's task or I/O threads),
 * a pool sending or fetching the files of one transfer in parallel, a timer for retries, and the
 * retry backoff. Thread-safe.
 */
public final class ArtifactTransfers implements AutoCloseable {

    private final ArtifactStore store;
    private final boolean ownsStore;
    private final ArtifactOptions options;
    private final ExecutorService pipelines;
    private final ExecutorService transfers;
    private final ScheduledExecutorService timer;

    /**
     * @param store     the store
     * @param ownsStore whether {@link #close()} closes it (false for a store the host application gave)
     * @param options   the worker's artifact settings
     * @param name      the worker's id, for thread names
     */
    public ArtifactTransfers(ArtifactStore store, boolean ownsStore, ArtifactOptions options, String name) {
        this.store = store;
        this.ownsStore = ownsStore;
        this.options = options;
        this.pipelines = Executors.newCachedThreadPool(DaemonThreads.named("rls-worker-store-" + name));
        this.transfers = Executors.newFixedThreadPool(options.getTransferThreads(), DaemonThreads.named("rls-worker-transfer-" + name));
        this.timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("rls-worker-store-timer-" + name));
    }

    /** Returns the store. */
    public ArtifactStore store() {
        return store;
    }

    /** Returns the worker's artifact settings. */
    public ArtifactOptions options() {
        return options;
    }

    /** Runs a transfer pipeline's step on a thread that may block. */
    public void run(Runnable step) {
        pipelines.execute(step);
    }

    /** Runs {@code step} on a pipeline thread after {@code delay}. */
    public void runLater(Runnable step, Duration delay) {
        timer.schedule(() -> pipelines.execute(step), delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Runs {@code step} on a pipeline thread every {@code period}, until the transfers close. */
    public void every(Runnable step, Duration period) {
        timer.scheduleWithFixedDelay(() -> pipelines.execute(step), period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Returns the wait before retry number {@code failures} (1 for the first): doubling from the minimum, capped. */
    public Duration backoff(int failures) {
        long min = options.getRetryMin().toMillis();
        long max = options.getRetryMax().toMillis();
        long wait = min << Math.min(Math.max(failures - 1, 0), 20);
        return Duration.ofMillis(Math.min(Math.max(wait, min), max));
    }

    /**
     * Stores files under keys, several at once, and returns what was stored in the same order.
     * Waits for every transfer to end; the first failure is thrown after that.
     */
    public List<StoredObject> putAll(List<Map.Entry<String, Path>> files) throws InterruptedException {
        List<Future<StoredObject>> futures = new ArrayList<>(files.size());
        for (Map.Entry<String, Path> f : files) {
            futures.add(transfers.submit(() -> store.put(f.getKey(), f.getValue())));
        }
        return await(futures);
    }

    /** Fetches objects into files, several at once, and returns what was received in the same order. */
    public List<StoredObject> getAll(List<Map.Entry<String, Path>> objects) throws InterruptedException {
        List<Future<StoredObject>> futures = new ArrayList<>(objects.size());
        for (Map.Entry<String, Path> o : objects) {
            futures.add(transfers.submit(() -> store.get(o.getKey(), o.getValue())));
        }
        return await(futures);
    }

    private static List<StoredObject> await(List<Future<StoredObject>> futures) throws InterruptedException {
        List<StoredObject> out = new ArrayList<>(futures.size());
        RuntimeException first = null;
        for (Future<StoredObject> f : futures) {
            try {
                out.add(f.get());
            } catch (ExecutionException e) {
                if (first == null) {
                    first = e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                }
            } catch (InterruptedException e) {
                futures.forEach(x -> x.cancel(true));
                throw e;
            }
        }
        if (first != null) {
            throw first;
        }
        return out;
    }

    /** Stops the threads (transfers in progress are interrupted) and closes the store if it is the worker's own. */
    @Override
    public void close() {
        timer.shutdownNow();
        pipelines.shutdownNow();
        transfers.shutdownNow();
        if (ownsStore) {
            store.close();
        }
    }

}
