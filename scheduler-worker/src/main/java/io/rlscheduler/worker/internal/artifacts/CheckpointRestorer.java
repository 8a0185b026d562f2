package io.rlscheduler.worker.internal.artifacts;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.core.internal.Json;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.CheckpointManifest;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Before an attempt's script starts, on whichever worker it runs, makes its checkpoint directory
 * hold exactly the task's latest committed checkpoint: the manifest is fetched and checked
 * against the SHA-256 Redis recorded for it, every file is fetched (or kept, where the local
 * copy has the same SHA-256) and checked against the manifest. A missing or corrupt checkpoint is
 * skipped for the one committed before it; what was resumed from and what was skipped, and why,
 * go into the task's log and its record. With nothing committed, the directory is left as it is
 * (a script that never marks checkpoints resumes from what is on this machine, as without a store).
 */
public final class CheckpointRestorer {

    private static final Logger log = LoggerFactory.getLogger(CheckpointRestorer.class);
    private final LeaseCore core;
    private final String workerId;
    private final String sessionId;
    private final ArtifactTransfers transfers;
    private final long patienceNanos;

    /**
     * @param patience how long one restore keeps retrying while Redis or the store cannot be
     *                 read before it gives up on what it could not read: long enough to outlast a
     *                 Redis restart. The worker passes how long an attempt may go without a lease
     *                 renewal ({@code LeaseKeeper.fenceAfter}): with Redis down longer than that,
     *                 the attempt is stopped anyway.
     */
    public CheckpointRestorer(LeaseCore core, String workerId, String sessionId, ArtifactTransfers transfers,
                              Duration patience) {
        this.core = core;
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.transfers = transfers;
        this.patienceNanos = patience.toNanos();
    }

    /** The checkpoint could not be used; the message says why. */
    private static final class Unusable extends Exception {
        private static final long serialVersionUID = 1L;

        Unusable(String message) {
            super(message);
        }
    }

    /**
     * Restores the latest usable committed checkpoint into {@code dir}. Blocks (a task thread).
     *
     * @param say      writes a line into the task's log
     * @param stopping  whether the attempt was asked to stop meanwhile (cancelled, fenced, the worker
     *                  stopping): retries end then, and the directory is left as it is
     * @return the fingerprint of the directory as left (see {@link Snapshot#fingerprint}), or null
     *         when nothing was committed, or nothing could be read
     */
    public String restore(TaskLease lease, int attempt, Path dir, Consumer<String> say, BooleanSupplier stopping)
            throws InterruptedException {
        String task = lease.getTaskId();
        long deadline = System.nanoTime() + patienceNanos;
        List<CheckpointEntry> committed = null;
        for (int tryNo = 1; committed == null; tryNo++) {
            try {
                long left = Math.max(1, deadline - System.nanoTime());
                committed = core.artifacts().committed(task).get(Math.min(left, TimeUnit.SECONDS.toNanos(30)),
                        TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                if (stopping.getAsBoolean()) {
                    say.accept("rl-scheduler: the attempt is stopping; its checkpoint is not restored");
                    return null;
                }
                if (!pause(tryNo, deadline)) {
                    say.accept("rl-scheduler: cannot read the task's committed checkpoints (" + e.getMessage()
                            + "); starting with the checkpoint directory as it is");
                    return null;
                }
            }
        }
        transfers.run(() -> collect(lease));
        if (committed.isEmpty()) {
            // Nothing to resume from in the store: the directory stays as it is, so a script that
            // never marks its checkpoints still resumes from what an earlier attempt left on this
            // machine (and only here), as without a store.
            return null;
        }
        long started = System.nanoTime();
        // The store has a patience of its own: an outage of Redis just now must not leave it none.
        long storeDeadline = started + patienceNanos;
        ArrayNode skipped = Json.mapper().createArrayNode();
        for (CheckpointEntry entry : committed) {
            try {
                int fetched = restoreOne(task, entry, dir, storeDeadline, stopping);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                say.accept("rl-scheduler: resuming from checkpoint " + entry.id() + " (attempt " + entry.attempt()
                        + " on " + entry.workerId() + ": " + entry.files() + " files, " + entry.bytes() + " bytes; "
                        + fetched + " fetched in " + ms + " ms)");
                note(lease, attempt, entry, skipped, fetched, ms);
                return Snapshot.fingerprint(list(dir));
            } catch (Unusable e) {
                say.accept("rl-scheduler: checkpoint " + entry.id() + " skipped: " + e.getMessage());
                skipped.addObject().put("id", entry.id()).put("reason", e.getMessage());
            }
        }
        clear(dir, Set.of());
        say.accept("rl-scheduler: no committed checkpoint could be restored; the attempt starts from scratch");
        note(lease, attempt, null, skipped, 0, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        return Snapshot.fingerprint(list(dir));
    }

    /**
     * Deletes what earlier attempts left in the store that no pointer leads to: uploads cut short
     * by a worker's death, checkpoints retention dropped whose deletion did not happen. Only
     * epochs older than this attempt's: a newer one is this attempt's own, or in flight elsewhere.
     * On a transfer thread; a failure is logged, and the next resume tries again.
     */
    private void collect(TaskLease lease) {
        String task = lease.getTaskId();
        try {
            Set<String> kept = new HashSet<>();
            for (CheckpointEntry e : core.artifacts().committed(task).get(30, TimeUnit.SECONDS)) {
                kept.add(e.id());
            }
            String prefix = RunLayout.checkpoints(task) + "/";
            Set<String> stored = new java.util.TreeSet<>();
            for (StoredObject o : transfers.store().list(RunLayout.checkpoints(task))) {
                int slash = o.getKey().indexOf('/', prefix.length());
                if (slash > 0) {
                    stored.add(o.getKey().substring(prefix.length(), slash));
                }
            }
            for (String id : stored) {
                if (!kept.contains(id) && epochOf(id) < lease.getEpoch()) {
                    int n = transfers.store().deleteAll(RunLayout.checkpoint(task, id));
                    log.info("task {}: deleted checkpoint {} ({} objects): no longer committed", task, id, n);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("task {}: could not collect uncommitted checkpoints: {}", task, e.toString());
        }
    }

    /** The epoch in a checkpoint id e&lt;epoch&gt;-&lt;n&gt;; Long.MAX_VALUE for a name that is not one (never collected). */
    static long epochOf(String id) {
        int dash = id.lastIndexOf('-');
        if (!id.startsWith("e") || dash < 2) {
            return Long.MAX_VALUE;
        }
        try {
            return Long.parseLong(id.substring(1, dash));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Makes dir hold exactly the entry's files; returns how many were fetched (the others were already there). */
    private int restoreOne(String task, CheckpointEntry entry, Path dir, long deadline, BooleanSupplier stopping)
            throws Unusable, InterruptedException {
        for (int tryNo = 1; ; tryNo++) {
            try {
                return fetch(task, entry, dir);
            } catch (StoreUnavailableException e) {
                if (stopping.getAsBoolean() || !pause(tryNo, deadline)) {
                    throw new Unusable("the store is unreachable: " + e.getMessage());
                }
            }
        }
    }

    /** Waits before the next try (on this attempt's own launch thread); false when the restore's patience has run out. */
    private boolean pause(int failures, long deadline) throws InterruptedException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        TimeUnit.NANOSECONDS.sleep(Math.min(transfers.backoff(failures).toNanos(), left));
        return true;
    }

    private int fetch(String task, CheckpointEntry entry, Path dir) throws Unusable, InterruptedException {
        byte[] raw;
        try (InputStream in = transfers.store().open(entry.manifestKey())) {
            raw = in.readAllBytes();
        } catch (ArtifactNotFoundException e) {
            throw new Unusable("its manifest is missing from the store");
        } catch (IOException e) {
            throw new StoreUnavailableException("cannot read " + entry.manifestKey() + ": " + e, e);
        }
        if (!HexFormat.of().formatHex(sha256().digest(raw)).equals(entry.sha256())) {
            throw new Unusable("its manifest is corrupt (SHA-256 differs from the one committed)");
        }
        CheckpointManifest manifest;
        try {
            manifest = CheckpointManifest.parse(raw);
        } catch (IOException e) {
            throw new Unusable("its manifest is unreadable: " + e.getMessage());
        }
        if (!manifest.id().equals(entry.id()) || !manifest.taskId().equals(task)) {
            throw new Unusable("its manifest is of another checkpoint (" + manifest.taskId() + " " + manifest.id() + ")");
        }
        Set<String> keep = new HashSet<>();
        List<Map.Entry<String, Path>> wanted = new ArrayList<>();
        List<CheckpointManifest.File> wantedFiles = new ArrayList<>();
        try {
            for (CheckpointManifest.File f : manifest.files()) {
                keep.add(f.path());
                Path target = targetOf(dir, f.path());
                if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS) && Files.size(target) == f.size()
                        && sha256Of(target).equals(f.sha256())) {
                    continue;
                }
                wanted.add(new AbstractMap.SimpleEntry<>(RunLayout.checkpointFile(task, entry.id(), f.path()), target));
                wantedFiles.add(f);
            }
            clear(dir, keep);
            List<StoredObject> got = transfers.getAll(wanted);
            for (int i = 0; i < got.size(); i++) {
                CheckpointManifest.File f = wantedFiles.get(i);
                if (got.get(i).getSize() != f.size() || !f.sha256().equals(got.get(i).getSha256())) {
                    throw new Unusable(f.path() + " is corrupt (its SHA-256 differs from the manifest's)");
                }
            }
        } catch (ArtifactNotFoundException e) {
            throw new Unusable("a file is missing from the store: " + e.getKey());
        } catch (IOException | UncheckedIOException e) {
            throw new Unusable("cannot write the checkpoint directory: " + e.getMessage());
        }
        return wanted.size();
    }

    /** The local path of a manifest's file, its directories made one level at a time and never through a link. */
    private static Path targetOf(Path dir, String path) throws IOException {
        Path target = dir.resolve(path).normalize();
        if (!target.startsWith(dir)) {
            throw new IOException(path + " leads outside the checkpoint directory");
        }
        Path at = dir;
        for (Path segment : dir.relativize(target.getParent() == null ? dir : target.getParent())) {
            at = at.resolve(segment);
            if (Files.isSymbolicLink(at) || (Files.exists(at, LinkOption.NOFOLLOW_LINKS)
                    && !Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS))) {
                Snapshot.delete(at);
                Files.deleteIfExists(at);
            }
            if (!Files.exists(at, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(at);
            }
        }
        if (Files.isSymbolicLink(target) || Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            Snapshot.delete(target);
            Files.deleteIfExists(target);
        }
        return target;
    }

    /**
     * Deletes every file of the directory not in {@code keep} (hidden ones, the script's own
     * temporaries, stay); returns how many it deleted.
     */
    private static int clear(Path dir, Set<String> keep) {
        int n = 0;
        try {
            for (FileListing.Entry e : list(dir).files()) {
                if (!keep.contains(e.path()) && Files.deleteIfExists(e.file())) {
                    n++;
                }
            }
        } catch (IOException e) {
            log.warn("cannot clear the checkpoint directory {}: {}", dir, e.toString());
        }
        return n;
    }

    private static FileListing.Result list(Path dir) {
        try {
            return FileListing.list(dir, dir, Integer.MAX_VALUE, Long.MAX_VALUE);
        } catch (IOException | FileListing.LimitExceeded e) {
            return new FileListing.Result(List.of(), List.of(), 0);
        }
    }

    private void note(TaskLease lease, int attempt, CheckpointEntry from, ArrayNode skipped, int fetched, long ms) {
        ObjectNode n = Json.object();
        n.put("attempt", attempt).put("worker", workerId);
        if (from == null) {
            n.putNull("from");
        } else {
            n.put("from", from.id()).put("from_attempt", from.attempt()).put("files", from.files())
                    .put("bytes", from.bytes()).put("fetched", fetched);
        }
        n.put("ms", ms).set("skipped", skipped);
        core.artifacts().noteRestore(lease, workerId, sessionId, attempt, n.toString()).whenComplete((ok, e) -> {
            if (e != null) {
                log.warn("task {}: could not note what attempt {} resumed from: {}", lease.getTaskId(), attempt, e.toString());
            }
        });
    }

    static String sha256Of(Path file) throws IOException {
        MessageDigest d = sha256();
        ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            while (in.read(buffer.clear()) >= 0) {
                d.update(buffer.flip());
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
