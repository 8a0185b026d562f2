package io.rlscheduler.master.internal.log;

import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.RunLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies the task logs that end while this master leads into the artifact store, under
 * {@link RunLayout#log}: the whole file,
 * read when it is sent, replacing the store's copy at once ({@link ArtifactStore#put} is atomic),
 * so the store only ever holds a whole log as it was at one of its ends. The I/O thread that
 * writes an end hands the file here ({@link #ended}) and goes on; the store is called only from
 * the upload threads ("rls-log-upload-N"). While the store refuses, each upload is retried with
 * a backoff of 1 s doubling to 1 min; the local file is never touched, so nothing is lost
 * meanwhile. Each task has at most one upload queued or in flight ({@link UploadPhase}): a log
 * that ends again while its file is being sent is sent once more afterwards.
 *
 * <p>Thread-safe: an upload's phase changes only inside its task's entry of the map of uploads.
 * {@link #close} lets queued sends run (10 s at most) and names the logs the store still lacks.
 */
final class LogUploads {

    private static final Logger log = LoggerFactory.getLogger(LogUploads.class);

    /** The wait before the first retry of a refused upload: {@value} ms, doubled after each refusal. */
    static final long FIRST_BACKOFF_MILLIS = 1_000;
    /** The longest wait between retries: {@value} ms. */
    static final long MAX_BACKOFF_MILLIS = 60_000;
    private static final int THREADS = 2;
    private static final int NAMED_IN_CLOSE = 20;

    /** One task's upload. Its fields change only in {@code uploads.compute} for its task, or on the one thread holding it. */
    private static final class Upload {
        final String taskId;
        final Path file;
        UploadPhase phase = UploadPhase.QUEUED;
        long backoffMillis = FIRST_BACKOFF_MILLIS;
        int refusals;

        Upload(String taskId, Path file) {
            this.taskId = taskId;
            this.file = file;
        }

        void moveTo(UploadPhase target) {
            phase = phase.moveTo(target);
        }
    }

    private final ArtifactStore store;
    private final BooleanSupplier leading;
    private final ThreadPoolExecutor senders;
    private final ScheduledThreadPoolExecutor retries;
    private final ConcurrentHashMap<String, Upload> uploads = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong stored = new AtomicLong();

    /**
     * @param store   where ended logs go; null for none (then nothing is uploaded and no thread made)
     * @param leading whether this master leads: only the leader's ends are uploaded (see
     *                {@link TaskLogManager#TaskLogManager(Path, TaskLogManager.Limits,
     *                TaskLogManager.RecordLookup, ArtifactStore, BooleanSupplier)})
     */
    LogUploads(ArtifactStore store, BooleanSupplier leading) {
        this.store = store;
        this.leading = leading;
        if (store == null) {
            senders = null;
            retries = null;
            return;
        }
        senders = new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                LogThreads.named("rls-log-upload-"));
        retries = new ScheduledThreadPoolExecutor(1, LogThreads.named("rls-log-upload-retry-"));
    }

    /**
     * The task's log ended (its file holds the end): sends the whole file to the store if this
     * master leads. Returns at once; any thread may call it.
     */
    void ended(String taskId, Path file) {
        if (store == null) {
            return;
        }
        if (!leading.getAsBoolean()) {
            log.debug("task {}: its log ended here while another master leads; the leader's copy goes to the store",
                    taskId);
            return;
        }
        Upload[] fresh = new Upload[1];
        uploads.compute(taskId, (id, current) -> {
            if (current == null) {
                fresh[0] = new Upload(id, file);
                return fresh[0];
            }
            UploadPhase next = current.phase.endedAgain();
            if (next != current.phase) {
                current.moveTo(next);
            }
            return current;
        });
        if (fresh[0] != null) {
            submit(fresh[0]);
        }
    }

    private void submit(Upload up) {
        try {
            senders.execute(() -> send(up));
        } catch (RejectedExecutionException closed) {
            // Closing: the upload stays pending and is named by close().
        }
    }

    /** Sends the file as it is now; on an upload thread. */
    private void send(Upload up) {
        move(up, UploadPhase.SENDING);
        try {
            store.put(RunLayout.log(up.taskId), up.file);
        } catch (RuntimeException e) {
            // StoreUnavailableException, or the file cannot be read (UncheckedIOException): retried
            // alike, the local file being the one copy until the store has it.
            refusedThenRetry(up, e);
            return;
        }
        stored.incrementAndGet();
        if (up.refusals > 0) {
            log.info("task {}: its log is in the artifact store after {} refused uploads", up.taskId, up.refusals);
        }
        Upload again = uploads.compute(up.taskId, (id, current) -> {
            if (current.phase == UploadPhase.SENDING_STALE) {
                current.moveTo(UploadPhase.QUEUED);
                current.backoffMillis = FIRST_BACKOFF_MILLIS;
                return current;
            }
            current.moveTo(UploadPhase.STORED);
            return null;
        });
        if (again != null) {
            submit(again);
        }
    }

    private void refusedThenRetry(Upload up, RuntimeException e) {
        refused.incrementAndGet();
        up.refusals++;
        long delay = up.backoffMillis;
        up.backoffMillis = Math.min(MAX_BACKOFF_MILLIS, delay * 2);
        if (up.refusals == 1) {
            log.warn("task {}: cannot upload its log {} to the artifact store ({}); it stays in the log directory,"
                    + " retrying in {} doubling to {}", up.taskId, up.file, e.toString(), Duration.ofMillis(delay),
                    Duration.ofMillis(MAX_BACKOFF_MILLIS));
        } else {
            log.debug("task {}: log upload refused again ({} times): {}", up.taskId, up.refusals, e.toString());
        }
        move(up, UploadPhase.BACKING_OFF);
        try {
            retries.schedule(() -> {
                move(up, UploadPhase.QUEUED);
                submit(up);
            }, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // Closing: the upload stays pending and is named by close().
        }
    }

    private void move(Upload up, UploadPhase target) {
        uploads.compute(up.taskId, (id, current) -> {
            current.moveTo(target);
            return current;
        });
    }

    /** Returns how many ended logs the store does not hold yet: queued, being sent, or waiting to retry. */
    int pending() {
        return uploads.size();
    }

    /** Returns how many sends the store refused (or whose file could not be read), since start. */
    long refused() {
        return refused.get();
    }

    /** Returns how many sends the store took, since start. */
    long stored() {
        return stored.get();
    }

    /**
     * Stops: drops the retries waiting, lets the queued and running sends finish (10 s at most,
     * then interrupts them), and names the logs the store still lacks (they stay in the log
     * directory). Call once nothing calls {@link #ended} any more. Idempotent.
     *
     * @return whether the calling thread was interrupted meanwhile (the caller restores the flag)
     */
    boolean close() {
        if (store == null || senders.isShutdown()) {
            return false;
        }
        retries.shutdownNow();
        senders.shutdown();
        boolean interrupted = LogThreads.awaitTermination(senders, "log upload");
        if (!uploads.isEmpty()) {
            List<String> named = uploads.keySet().stream().sorted().limit(NAMED_IN_CLOSE).toList();
            log.warn("{} ended task logs are not in the artifact store {} and stay only in the log directory: {}{}",
                    uploads.size(), store.getUri(), named, uploads.size() > NAMED_IN_CLOSE ? " ..." : "");
        }
        return interrupted;
    }
}
