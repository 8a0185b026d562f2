package io.rlscheduler.worker.internal.artifacts;

import io.rlscheduler.core.LeaseLostException;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.CheckpointCommit;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.store.CheckpointManifest;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits the checkpoints of this worker's attempts to the artifact store, each in three steps:
 * its files are sent to a location of their own ({@link RunLayout#checkpoint}, per task, epoch
 * and number), then its manifest, and only then the task's latest-checkpoint pointer in Redis
 * moves (checkpoint.lua: only for the attempt that holds the task, only forward). A checkpoint
 * whose upload failed or whose attempt lost its task is never pointed at, and its objects are
 * deleted; a half-sent one is invisible. The script never waits: the files are snapshotted (hard
 * links) when marked and sent on the transfer threads; at most one upload per attempt is in
 * flight, and a newer checkpoint replaces a queued older one. Store failures are retried with
 * backoff for as long as the attempt's checkpoint is the newest.
 *
 * <p>A checkpoint is marked by a {@link CheckpointLine}, by {@link #commit} (in-JVM executors), by
 * the attempt's end when the directory changed since the last one, and, for scripts that never
 * print the line, when the directory has stayed unchanged for the quiet period. Thread-safe.
 */
public final class CheckpointCommitter {

    private static final Logger log = LoggerFactory.getLogger(CheckpointCommitter.class);

    private final LeaseCore core;
    private final String workerId;
    private final String sessionId;
    private final ArtifactTransfers transfers;
    private final Path snapshots;
    private final Set<Slot> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean scanning = new AtomicBoolean();

    /**
     * @param snapshots the worker's own directory for snapshots (beside the run root, on its file system)
     */
    public CheckpointCommitter(LeaseCore core, String workerId, String sessionId, ArtifactTransfers transfers,
                               Path snapshots) {
        this.core = core;
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.transfers = transfers;
        this.snapshots = snapshots;
        Duration quiet = transfers.options().getCheckpointQuietPeriod();
        if (!quiet.isZero()) {
            Duration period = quiet.dividedBy(4);
            transfers.every(this::scan, period.compareTo(Duration.ofMillis(10)) < 0 ? Duration.ofMillis(10) : period);
        }
    }

    /**
     * Starts committing an attempt's checkpoints.
     *
     * @param lease       the attempt's task and epoch
     * @param attempt     its number
     * @param dir         its checkpoint directory
     * @param restored    the fingerprint of the directory as the resume left it (so an unchanged
     *                    restored checkpoint is not committed again), or null
     * @param say         writes a line into the task's log
     * @param keep        how many committed checkpoints the task keeps, 0 for the worker's setting
     * @param maxBytes    the most bytes they may hold together, 0 for the worker's setting
     * @return the attempt's checkpoints
     */
    public Slot open(TaskLease lease, int attempt, Path dir, String restored, Consumer<String> say, int keep,
                     long maxBytes) {
        Slot s = new Slot(lease, attempt, dir, restored, say,
                keep > 0 ? keep : transfers.options().getCheckpointsKept(),
                maxBytes > 0 ? maxBytes : transfers.options().getMaxCheckpointBytes());
        open.add(s);
        return s;
    }

    /** The quiet-period scan of every open attempt that never marked a checkpoint itself. */
    private void scan() {
        if (!scanning.compareAndSet(false, true)) {
            return;
        }
        try {
            long quiet = transfers.options().getCheckpointQuietPeriod().toNanos();
            for (Slot s : open) {
                s.scan(quiet);
            }
        } finally {
            scanning.set(false);
        }
    }

    /** One attempt's checkpoints: its numbering, the upload in flight and the one queued. */
    public final class Slot {
        private final TaskLease lease;
        private final int attempt;
        private final Path dir;
        private final Consumer<String> say;
        private final int keep;
        private final long maxBytes;
        // Guarded by this slot.
        private int next = 1;
        private Job inFlight;
        private Job queued;
        private boolean marked;
        private boolean closed;
        private boolean lost;
        /** Completed once nothing is in flight; made by {@link #settled()} while something is. */
        private CompletableFuture<Void> settled;
        /** The whole directory's fingerprint when a checkpoint was last taken (or restored). */
        private String lastTaken;
        private String lastSeen;
        private long lastChange = System.nanoTime();

        Slot(TaskLease lease, int attempt, Path dir, String restored, Consumer<String> say, int keep, long maxBytes) {
            this.keep = keep;
            this.maxBytes = maxBytes;
            this.lease = lease;
            this.attempt = attempt;
            this.dir = dir;
            this.say = say;
            this.lastTaken = restored;
            this.lastSeen = restored;
        }

        /**
         * A checkpoint line the attempt printed: the entry it names is snapshotted now and
         * committed in the background. A malformed line is said in the task's log and ignored.
         * On the thread reading the attempt's output.
         */
        public void line(String text) {
            String path;
            try {
                path = CheckpointLine.path(text);
            } catch (IllegalArgumentException e) {
                say.accept("rl-scheduler: checkpoint line ignored: " + e.getMessage());
                return;
            }
            synchronized (this) {
                marked = true;
            }
            take(path, "marked").exceptionally(e -> null);
        }

        /**
         * Commits the entry {@code path} of the checkpoint directory ("" for all of it). Returns
         * the committed checkpoint's id; fails with {@link LeaseLostException} when the attempt no
         * longer holds its task, with a {@link SchedulerException} when the checkpoint could not
         * be taken or was replaced by a newer one before it was sent.
         */
        public CompletableFuture<String> commit(String path) {
            synchronized (this) {
                marked = true;
            }
            return take(path, "marked");
        }

        /**
         * The attempt ended: when it recorded its end and its directory changed since the last
         * checkpoint, that is committed as a last one. No checkpoint is taken afterwards. The
         * future completes once every checkpoint the attempt took is committed or said not to be
         * (in the task's log and, for a refusal, in its record), so that its end can wait for them.
         */
        public CompletableFuture<Void> ended(boolean recorded) {
            if (!recorded) {
                close();
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<Void> done = new CompletableFuture<>();
            Runnable last = () -> {
                try {
                    FileListing.Result all = list("");
                    String fp = Snapshot.fingerprint(all);
                    boolean changed;
                    synchronized (this) {
                        changed = !all.files().isEmpty() && !fp.equals(lastTaken);
                    }
                    if (changed) {
                        take("", "the attempt's end").exceptionally(e -> null);
                    }
                } catch (IOException | FileListing.LimitExceeded | UncheckedIOException e) {
                    say.accept("rl-scheduler: no last checkpoint committed: " + e.getMessage());
                } finally {
                    close();
                    settled().whenComplete((v, e) -> done.complete(null));
                }
            };
            try {
                transfers.run(last);
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                close();
                done.complete(null);
            }
            return done;
        }

        /** Completes once no checkpoint of the attempt is being sent or waits to be. */
        private synchronized CompletableFuture<Void> settled() {
            if (inFlight == null) {
                return CompletableFuture.completedFuture(null);
            }
            if (settled == null) {
                settled = new CompletableFuture<>();
            }
            return settled;
        }

        private synchronized void close() {
            closed = true;
            if (inFlight == null) {
                open.remove(this);
            }
        }

        private FileListing.Result list(String path) throws IOException, FileListing.LimitExceeded {
            return FileListing.list(dir, path.isEmpty() ? dir : dir.resolve(path),
                    transfers.options().getMaxCheckpointFiles(), maxBytes);
        }

        /** The quiet-period check of an attempt that marks nothing itself; on a pipeline thread. */
        void scan(long quietNanos) {
            String fp;
            try {
                FileListing.Result all = list("");
                if (all.files().isEmpty()) {
                    return;
                }
                fp = Snapshot.fingerprint(all);
            } catch (IOException | FileListing.LimitExceeded e) {
                return; // said when a checkpoint is taken; a scan only looks
            }
            boolean due;
            synchronized (this) {
                if (marked || closed || lost) {
                    return;
                }
                long now = System.nanoTime();
                if (!fp.equals(lastSeen)) {
                    lastSeen = fp;
                    lastChange = now;
                    return;
                }
                due = now - lastChange >= quietNanos && !fp.equals(lastTaken);
            }
            if (due) {
                take("", "unchanged for " + transfers.options().getCheckpointQuietPeriod().toSeconds() + " s")
                        .exceptionally(e -> null);
            }
        }

        /** Snapshots {@code path} and queues its upload; the future completes when it is committed. */
        private CompletableFuture<String> take(String path, String why) {
            CompletableFuture<String> done = new CompletableFuture<>();
            int number;
            synchronized (this) {
                if (lost) {
                    done.completeExceptionally(lostException("checkpoint"));
                    return done;
                }
                if (closed) {
                    done.completeExceptionally(new SchedulerException("attempt " + attempt + " of task "
                            + lease.getTaskId() + " has ended: no checkpoint is taken after its end"));
                    return done;
                }
                number = next++;
            }
            String id = RunLayout.checkpointId(lease.getEpoch(), number);
            Snapshot snap;
            String wholeFingerprint;
            try {
                FileListing.Result listed = list(path);
                if (listed.files().isEmpty()) {
                    throw new IOException(path.isEmpty() ? "the checkpoint directory holds no files"
                            : "'" + path + "' names no file in the checkpoint directory");
                }
                for (String s : listed.skipped()) {
                    say.accept("rl-scheduler: checkpoint " + id + ": skipped " + s);
                }
                snap = Snapshot.take(snapshots.resolve(lease.getTaskId() + "-" + id), listed);
                wholeFingerprint = path.isEmpty() ? Snapshot.fingerprint(listed) : Snapshot.fingerprint(list(""));
            } catch (IOException | FileListing.LimitExceeded | UncheckedIOException e) {
                String why2 = e instanceof FileListing.LimitExceeded ? e.getMessage()
                        + " (the limits maxCheckpointFiles " + transfers.options().getMaxCheckpointFiles()
                        + " and maxCheckpointBytes " + maxBytes + ")" : e.getMessage();
                say.accept("rl-scheduler: checkpoint " + id + " not committed: " + why2);
                if (e instanceof FileListing.LimitExceeded) {
                    core.artifacts().noteError(lease, workerId, sessionId, "checkpoint " + id + " not committed: " + why2);
                }
                done.completeExceptionally(new SchedulerException("checkpoint " + id + " of task " + lease.getTaskId()
                        + " not committed: " + why2));
                return done;
            }
            Job job = new Job(id, number, snap, done);
            Job dropped = null;
            boolean start = false;
            synchronized (this) {
                lastTaken = wholeFingerprint;
                lastSeen = wholeFingerprint;
                if (inFlight == null) {
                    inFlight = job;
                    start = true;
                } else {
                    dropped = queued;
                    queued = job;
                }
            }
            log.debug("task {} checkpoint {} taken ({}): {} files, {} bytes", lease.getTaskId(), id, why,
                    snap.files().size(), snap.bytes());
            if (dropped != null) {
                dropped.snapshot.delete();
                dropped.done.completeExceptionally(new SchedulerException("checkpoint " + dropped.id
                        + " was replaced by the newer " + id + " before it was sent"));
            }
            if (start) {
                transfers.run(() -> upload(job));
            }
            return done;
        }

        /** Sends a checkpoint's files and manifest, then moves the pointer; on a pipeline thread. */
        private void upload(Job job) {
            String task = lease.getTaskId();
            boolean commitSent = false;
            try {
                List<Map.Entry<String, Path>> files = new ArrayList<>();
                for (FileListing.Entry e : job.snapshot.files()) {
                    files.add(new AbstractMap.SimpleEntry<>(RunLayout.checkpointFile(task, job.id, e.path()), e.file()));
                }
                List<StoredObject> stored = transfers.putAll(files);
                String changed = job.snapshot.changed();
                if (changed != null) {
                    discard(job, new SchedulerException("checkpoint " + job.id + " not committed: " + changed
                            + " changed while it was sent (write each checkpoint to a new directory and mark it,"
                            + " as scripts/rls_checkpoint.py does)"), true);
                    return;
                }
                List<CheckpointManifest.File> entries = new ArrayList<>();
                for (int i = 0; i < stored.size(); i++) {
                    entries.add(new CheckpointManifest.File(job.snapshot.files().get(i).path(), stored.get(i).getSize(),
                            stored.get(i).getSha256()));
                }
                CheckpointManifest manifest = new CheckpointManifest(task, job.id, lease.getEpoch(), attempt, job.number,
                        List.copyOf(entries));
                String manifestKey = RunLayout.checkpointManifest(task, job.id);
                StoredObject m = transfers.store().put(manifestKey, manifest.toJson());
                commitSent = true;
                CheckpointCommit result = core.artifacts().commit(lease, workerId, sessionId, attempt, job.number,
                        manifestKey, m.getSha256(), manifest.bytes(), entries.size(), keep, maxBytes)
                        .get(30, TimeUnit.SECONDS);
                committed(job, result);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                discard(job, new SchedulerException("checkpoint " + job.id + " not committed: the worker is stopping"), false);
            } catch (StoreUnavailableException | java.util.concurrent.ExecutionException
                     | java.util.concurrent.TimeoutException | UncheckedIOException | IOException e) {
                retry(job, e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e,
                        commitSent);
            } catch (RuntimeException e) {
                log.error("task {} checkpoint {}: upload failed", task, job.id, e);
                discard(job, new SchedulerException("checkpoint " + job.id + " not committed: " + e, false, e), true);
            }
        }

        private void committed(Job job, CheckpointCommit result) {
            switch (result.status()) {
                case COMMITTED, DUPLICATE -> {
                    log.debug("task {} checkpoint {} committed", lease.getTaskId(), job.id);
                    for (CheckpointEntry gone : result.evicted()) {
                        deleteQuietly(gone.id());
                    }
                    finish(job, null);
                    job.done.complete(job.id);
                }
                case STALE, WRONG_SESSION, UNKNOWN_TASK -> {
                    synchronized (this) {
                        lost = true;
                    }
                    log.info("task {} checkpoint {} refused ({}): epoch {} no longer holds the task", lease.getTaskId(),
                            job.id, result.status(), lease.getEpoch());
                    discard(job, lostException("checkpoint " + job.id), true);
                }
                case BEHIND -> discard(job, new SchedulerException("checkpoint " + job.id + " not committed: the newer "
                        + result.id() + " is committed"), true);
                case TOO_LARGE -> discard(job, new SchedulerException("checkpoint " + job.id + " not committed: the "
                        + keep + " kept checkpoints would exceed the task's limit of " + maxBytes
                        + " bytes (maxCheckpointBytes; see the task record)"), true);
            }
        }

        private LeaseLostException lostException(String what) {
            return new LeaseLostException(lease.getTaskId(), lease.getEpoch(), 0, what + " of task " + lease.getTaskId());
        }

        /**
         * A transfer failed: tried again after the backoff, unless a newer checkpoint waits (then
         * dropped for it). A dropped one whose commit call had been made may be committed (Redis
         * ran it and the answer was lost): its objects are not deleted then, but left to the
         * collection at the task's next attempt, which keeps what the list of committed ones holds.
         */
        private void retry(Job job, Throwable cause, boolean commitSent) {
            job.failures++;
            boolean replaced;
            synchronized (this) {
                replaced = queued != null || lost;
            }
            if (replaced) {
                discard(job, new SchedulerException("checkpoint " + job.id + (commitSent ? ": its commit's answer was lost ("
                        : " not committed (") + cause.getMessage() + "); a newer one replaces it"), !commitSent);
                return;
            }
            Duration wait = transfers.backoff(job.failures);
            if (job.failures == 1 || job.failures % 10 == 0) {
                say.accept("rl-scheduler: checkpoint " + job.id + " not committed yet: " + cause.getMessage()
                        + "; retrying every " + wait.toSeconds() + " s at most");
            }
            log.warn("task {} checkpoint {}: transfer failed ({} times), retrying in {} ms: {}", lease.getTaskId(), job.id,
                    job.failures, wait.toMillis(), cause.toString());
            transfers.runLater(() -> upload(job), wait);
        }

        /** Ends a job that will not be committed: its objects deleted (when any were sent), the next one started. */
        private void discard(Job job, SchedulerException why, boolean sentSome) {
            if (sentSome) {
                deleteQuietly(job.id);
            }
            if (!(why instanceof LeaseLostException)) {
                say.accept("rl-scheduler: " + why.getMessage());
            }
            finish(job, why);
            job.done.completeExceptionally(why);
        }

        private void deleteQuietly(String checkpointId) {
            try {
                transfers.store().deleteAll(RunLayout.checkpoint(lease.getTaskId(), checkpointId));
            } catch (RuntimeException e) {
                log.warn("task {}: could not delete checkpoint {} from the store ({}); it is collected later",
                        lease.getTaskId(), checkpointId, e.toString());
            }
        }

        /** The job is over: its snapshot deleted, the queued one started (or the slot let go once closed). */
        private void finish(Job job, SchedulerException why) {
            job.snapshot.delete();
            Job nextJob;
            CompletableFuture<Void> idle = null;
            synchronized (this) {
                nextJob = lost ? null : queued;
                if (lost && queued != null) {
                    Job q = queued;
                    q.snapshot.delete();
                    q.done.completeExceptionally(lostException("checkpoint " + q.id));
                }
                queued = null;
                inFlight = nextJob;
                if (nextJob == null && closed) {
                    open.remove(this);
                }
                if (nextJob == null && settled != null) {
                    idle = settled;
                    settled = null;
                }
            }
            if (idle != null) {
                idle.complete(null);
            }
            if (nextJob != null) {
                transfers.run(() -> upload(nextJob));
            }
        }
    }

    /** One checkpoint on its way to the store. */
    private static final class Job {
        final String id;
        final int number;
        final Snapshot snapshot;
        final CompletableFuture<String> done;
        int failures;

        Job(String id, int number, Snapshot snapshot, CompletableFuture<String> done) {
            this.id = id;
            this.number = number;
            this.snapshot = snapshot;
            this.done = done;
        }
    }
}
