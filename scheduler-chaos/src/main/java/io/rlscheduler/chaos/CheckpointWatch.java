package io.rlscheduler.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.internal.ArtifactRecords;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.RunLayout;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Watches the tasks' committed checkpoints while a chaos run goes on: every {@value #POLL_MILLIS}
 * ms it reads each task's list in Redis ({@link ArtifactRecords#committed}) and, for each entry
 * not seen before, reads the checkpoint's {@code checkpoint.json} from the store (train.py's
 * episode count and the attempt that wrote it) into the {@link CheckpointLedger}.
 *
 * <p>Polling sees every checkpoint a resumed attempt can start from: the newest one committed
 * before a failure stays at the head of its task's list from its commit until the next attempt
 * has restored it, started its script and committed one of its own, which takes seconds in this
 * run (the failure is noticed after a lease of 1 to 3 s); a checkpoint replaced within one poll
 * may go unseen, and nothing is checked against such a one. While Redis is down a round fails
 * and the next one tries again; so do commits, which go through Redis too.
 *
 * <p>A daemon thread of its own; {@link #finish()} stops it after one last round.
 */
final class CheckpointWatch extends Thread {

    static final long POLL_MILLIS = 100;
    /** The bound of one round's Redis reads. */
    private static final long ROUND_TIMEOUT_MILLIS = 5000;
    /** train.py's checkpoint file, the whole of what chaos_task.py's attempts commit. */
    static final String CHECKPOINT_FILE = "checkpoint.json";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ArtifactRecords records;
    private final ArtifactStore store;
    private final List<String> taskIds;
    private final CheckpointLedger ledger;
    private volatile boolean stopping;

    CheckpointWatch(ArtifactRecords records, ArtifactStore store, List<String> taskIds, CheckpointLedger ledger) {
        super("chaos-checkpoint-watch");
        setDaemon(true);
        this.records = records;
        this.store = store;
        this.taskIds = List.copyOf(taskIds);
        this.ledger = ledger;
    }

    @Override
    public void run() {
        while (!stopping) {
            round();
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                break;
            }
        }
    }

    /** Stops polling, then reads every task's list once more, so that the last commits are in the ledger too. */
    void finish() throws InterruptedException {
        stopping = true;
        interrupt();
        join(ROUND_TIMEOUT_MILLIS * 2);
        round();
    }

    /** Reads every task's list (all reads sent at once) and records the entries not seen before. */
    private void round() {
        List<CompletableFuture<List<CheckpointEntry>>> lists = new ArrayList<>();
        for (String id : taskIds) {
            CompletableFuture<List<CheckpointEntry>> f;
            try {
                f = records.committed(id);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            lists.add(f);
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ROUND_TIMEOUT_MILLIS);
        for (int i = 0; i < taskIds.size(); i++) {
            List<CheckpointEntry> entries;
            try {
                entries = lists.get(i).get(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                continue; // Redis away: the next round reads it again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            String task = taskIds.get(i);
            for (CheckpointEntry e : entries) {
                if (!ledger.has(task, e.id())) {
                    ledger.add(task, read(task, e));
                }
            }
        }
    }

    /** Reads what a committed checkpoint holds from the store; its files stay there until it is evicted. */
    private CheckpointLedger.Commit read(String task, CheckpointEntry e) {
        try (InputStream in = store.open(RunLayout.checkpointFile(task, e.id(), CHECKPOINT_FILE))) {
            JsonNode ck = JSON.readTree(in);
            JsonNode episode = ck.get("episode");
            if (episode == null || !episode.canConvertToInt()) {
                return new CheckpointLedger.Commit(e, -1, "?", CHECKPOINT_FILE + " has no episode");
            }
            return new CheckpointLedger.Commit(e, episode.asInt(), ck.path("written_by").path("attempt").asText("?"), null);
        } catch (IOException | RuntimeException ex) {
            // Evicted (and deleted) before this read, or unreadable.
            return new CheckpointLedger.Commit(e, -1, "?", ex.toString());
        }
    }
}
