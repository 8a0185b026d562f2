package io.rlscheduler.worker.internal.artifacts;

import io.rlscheduler.core.OutputsState;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.OutputsNote;
import io.rlscheduler.core.internal.WriteResult;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoreKeys;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores what each ended attempt of this worker left in its run directory, then records it in
 * Redis. Per attempt, in order: the run directory is walked ({@link FileListing}: no link is
 * followed, nothing outside it is read) and the files chosen within the limits
 * ({@link OutputSelection}); when the attempt's end is recorded, a {@link OutputsState#PENDING}
 * record says the upload is under way; the files go to {@link RunLayout#outputs}, then the
 * {@link OutputsManifest} to {@link RunLayout#outputsManifest}, and only then the record says
 * {@link OutputsState#COMPLETE} or {@link OutputsState#INCOMPLETE} (outputs.lua, fenced by the
 * attempt's epoch). An attempt that no longer holds its task records nothing, and what it sent is
 * deleted. Store and Redis failures are retried with the transfers' backoff for as long as the
 * worker runs; while the store is down the pending record says why it waits. The task's state
 * never waits for any of it: the upload starts once the attempt's end is recorded (or found not
 * to be this worker's to record), on the transfer threads. Thread-safe.
 */
public final class OutputsUploader {

    private static final Logger log = LoggerFactory.getLogger(OutputsUploader.class);
    /** Files sent per batch: what a batch stored is kept when a later one fails. */
    private static final int BATCH = 64;
    /** The longest wait for one Redis call. */
    private static final long CALL_TIMEOUT_SECONDS = 30;

    private final LeaseCore core;
    private final String workerId;
    private final String sessionId;
    private final ArtifactTransfers transfers;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

    public OutputsUploader(LeaseCore core, String workerId, String sessionId, ArtifactTransfers transfers) {
        this.core = core;
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.transfers = transfers;
    }

    /**
     * Starts storing an ended attempt's outputs; returns at once. A second call for the same
     * attempt while the first is under way does nothing.
     *
     * @param lease       the attempt's task and epoch
     * @param attempt     its number
     * @param runDir      its run directory
     * @param endRecorded whether this worker recorded the attempt's end (the task's state is then
     *                    final, and a pending record is written first); false for an attempt
     *                    fenced or stopped by a shutdown, whose outputs are recorded only if it
     *                    still holds its task when they are stored
     * @return the state recorded once the upload is over, or null when nothing was recorded (the
     *         attempt no longer holds its task, the worker stopped, or a call for it is under way)
     */
    public CompletableFuture<OutputsState> upload(TaskLease lease, int attempt, Path runDir, boolean endRecorded) {
        Job job = new Job(lease, attempt, runDir, endRecorded);
        if (!inFlight.add(job.name)) {
            return CompletableFuture.completedFuture(null);
        }
        try {
            transfers.run(job);
        } catch (RejectedExecutionException stopping) {
            job.finish(null, "the worker is stopping");
        }
        return job.done;
    }

    /** The steps of one attempt's upload, in order; a retry goes on from the step that failed. */
    private enum Step { LIST, RECORD_PENDING, SEND_FILES, SEND_MANIFEST, RECORD_END, DISCARD }

    /** One attempt's outputs on their way to the store; run by one pipeline thread at a time. */
    private final class Job implements Runnable {
        private final TaskLease lease;
        private final int attempt;
        private final Path runDir;
        private final boolean endRecorded;
        private final String name;
        private final String prefix;
        private final String manifestKey;
        private final CompletableFuture<OutputsState> done = new CompletableFuture<>();
        private Step step = Step.LIST;
        private int failures;
        private boolean waitNoted;
        private OutputSelection selection;
        private List<FileListing.Entry> files;
        private StoredObject[] stored;
        private final BitSet sent = new BitSet();
        private int next;
        private OutputsManifest manifest;

        Job(TaskLease lease, int attempt, Path runDir, boolean endRecorded) {
            this.lease = lease;
            this.attempt = attempt;
            this.runDir = runDir;
            this.endRecorded = endRecorded;
            this.name = "task " + lease.getTaskId() + " attempt " + attempt;
            this.prefix = RunLayout.outputs(lease.getTaskId(), attempt);
            this.manifestKey = RunLayout.outputsManifest(lease.getTaskId(), attempt);
        }

        @Override
        public void run() {
            try {
                while (!done.isDone()) {
                    step();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                finish(null, "the worker is stopping");
            } catch (StoreUnavailableException | ExecutionException | TimeoutException e) {
                retry(e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e);
            } catch (SchedulerException e) {
                if (e.isRetryable()) {
                    retry(e);
                } else {
                    failed(e);
                }
            } catch (RuntimeException e) {
                failed(e);
            }
        }

        private void step() throws InterruptedException, ExecutionException, TimeoutException {
            switch (step) {
                case LIST -> {
                    list();
                    advance(endRecorded ? Step.RECORD_PENDING : Step.SEND_FILES);
                }
                case RECORD_PENDING -> {
                    if (held(record(OutputsState.PENDING, files.size(), selection.bytes(), ""), false)) {
                        advance(Step.SEND_FILES);
                    }
                }
                case SEND_FILES -> {
                    sendFiles();
                    advance(Step.SEND_MANIFEST);
                }
                case SEND_MANIFEST -> {
                    sendManifest();
                    advance(Step.RECORD_END);
                }
                case RECORD_END -> {
                    OutputsState end = manifest.complete() ? OutputsState.COMPLETE : OutputsState.INCOMPLETE;
                    if (held(record(end, manifest.files().size(), manifest.bytes(), manifest.error()), true)) {
                        finish(end, null);
                    }
                }
                case DISCARD -> {
                    transfers.store().deleteAll(prefix);
                    transfers.store().delete(manifestKey);
                    finish(null, null);
                }
            }
        }

        private void advance(Step to) {
            step = to;
            failures = 0;
        }

        private void list() {
            selection = new OutputSelection(prefix, transfers.options().getMaxOutputFiles(),
                    transfers.options().getMaxOutputBytes());
            try {
                FileListing.walk(runDir, runDir, selection);
            } catch (java.io.IOException | UncheckedIOException e) {
                selection.failed(e.getMessage());
            }
            files = selection.select();
            stored = new StoredObject[files.size()];
        }

        /** Sends the files not yet sent, a batch at a time. */
        private void sendFiles() throws InterruptedException {
            while (next < files.size()) {
                int end = Math.min(next + BATCH, files.size());
                List<Integer> todo = new ArrayList<>();
                List<Map.Entry<String, Path>> puts = new ArrayList<>();
                for (int i = sent.nextClearBit(next); i < end; i = sent.nextClearBit(i + 1)) {
                    todo.add(i);
                    puts.add(new AbstractMap.SimpleEntry<>(key(i), files.get(i).file()));
                }
                try {
                    List<StoredObject> got = transfers.putAll(puts);
                    for (int k = 0; k < todo.size(); k++) {
                        stored[todo.get(k)] = got.get(k);
                        sent.set(todo.get(k));
                    }
                } catch (UncheckedIOException unreadable) {
                    // Some file of the batch could not be read: one at a time, to tell which.
                    for (int i : todo) {
                        try {
                            stored[i] = transfers.store().put(key(i), files.get(i).file());
                        } catch (UncheckedIOException e) {
                            selection.unreadable(files.get(i), e.getCause() != null ? e.getCause().toString() : e.getMessage());
                        }
                        sent.set(i);
                    }
                }
                next = end;
            }
        }

        private String key(int i) {
            return StoreKeys.join(prefix, files.get(i).path());
        }

        private void sendManifest() {
            List<OutputsManifest.File> entries = new ArrayList<>();
            for (int i = 0; i < files.size(); i++) {
                if (stored[i] != null) {
                    entries.add(new OutputsManifest.File(files.get(i).path(), stored[i].getSize(), stored[i].getSha256()));
                }
            }
            manifest = new OutputsManifest(lease.getTaskId(), attempt, lease.getEpoch(), selection.isComplete(),
                    selection.error(), List.copyOf(entries), selection.left(), selection.leftCount());
            transfers.store().put(manifestKey, manifest.toJson());
        }

        private WriteResult record(OutputsState state, int count, long bytes, String error)
                throws InterruptedException, ExecutionException, TimeoutException {
            List<String> skipped = selection.left().stream().limit(io.rlscheduler.core.AttemptOutputs.MAX_LISTED)
                    .map(OutputSelection.Left::toString).toList();
            OutputsNote note = new OutputsNote(attempt, state, manifestKey, count, bytes, error, skipped,
                    selection.leftCount());
            return core.artifacts().recordOutputs(lease, workerId, sessionId, note).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }

        /**
         * Returns whether the record was written. An attempt that no longer holds its task stops
         * here: what it sent (when {@code sentSome}) is deleted.
         */
        private boolean held(WriteResult w, boolean sentSome) {
            switch (w.getStatus()) {
                case APPLIED, DUPLICATE -> {
                    return true;
                }
                case WRONG_STATE -> {
                    log.warn("{}: outputs recorded already by an earlier upload; this one records nothing", name);
                    finish(null, null);
                }
                default -> {
                    log.info("{}: outputs not recorded ({}): epoch {} no longer holds the task{}", name, w.getStatus(),
                            lease.getEpoch(), sentSome ? "; the objects sent are deleted" : "; nothing is sent");
                    if (sentSome) {
                        advance(Step.DISCARD);
                    } else {
                        finish(null, null);
                    }
                }
            }
            return false;
        }

        /** A store or Redis failure: noted in the pending record the first time, and tried again after the backoff. */
        private void retry(Throwable cause) {
            failures++;
            if (endRecorded && !waitNoted && (step == Step.SEND_FILES || step == Step.SEND_MANIFEST)) {
                noteWait(cause);
            }
            Duration wait = transfers.backoff(failures);
            if (failures == 1 || failures % 10 == 0) {
                log.warn("{}: outputs not stored yet ({} failures, at {}), retrying in {} ms: {}", name, failures, step,
                        wait.toMillis(), cause.toString());
            }
            try {
                transfers.runLater(this, wait);
            } catch (RejectedExecutionException stopping) {
                finish(null, "the worker is stopping");
            }
        }

        /** Says in the pending record why the upload waits; a failure to say so is only logged. */
        private void noteWait(Throwable cause) {
            try {
                WriteResult w = record(OutputsState.PENDING, files.size(), selection.bytes(),
                        "waiting for the artifact store (" + cause.getMessage() + "); retrying");
                waitNoted = w.isAccepted();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                log.debug("{}: could not note the wait for the store: {}", name, e.toString());
            }
        }

        private void failed(RuntimeException e) {
            log.error("{}: outputs upload failed at {}", name, step, e);
            finish(null, null);
        }

        void finish(OutputsState state, String stopped) {
            if (stopped != null) {
                log.warn("{}: outputs not stored: {}", name, stopped);
            } else if (state != null) {
                log.debug("{}: outputs {}: {} files, {} bytes", name, state, manifest.files().size(), manifest.bytes());
            }
            inFlight.remove(name);
            done.complete(state);
        }
    }
}
