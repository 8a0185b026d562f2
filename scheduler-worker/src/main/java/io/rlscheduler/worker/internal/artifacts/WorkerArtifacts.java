package io.rlscheduler.worker.internal.artifacts;

import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.worker.ArtifactOptions;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What a worker with an artifact store runs for its attempts' artifacts: the transfers, the
 * checkpoint committer and the restorer, and the uploader of ended attempts' outputs. Made at the
 * worker's start, closed at its stop.
 */
public final class WorkerArtifacts implements AutoCloseable {

    private final ArtifactTransfers transfers;
    private final CheckpointCommitter committer;
    private final CheckpointRestorer restorer;
    private final OutputsUploader outputs;

    /**
     * @param store      the store
     * @param ownsStore  whether closing this closes the store
     * @param snapshots  the worker's own directory for checkpoint snapshots; emptied now (what a
     *                   previous run of the worker left there is of attempts that are over)
     * @param patience   how long a restore keeps retrying Redis or the store (see {@link CheckpointRestorer})
     */
    public WorkerArtifacts(LeaseCore core, String workerId, String sessionId, ArtifactStore store, boolean ownsStore,
                           ArtifactOptions options, Path snapshots, Duration patience) {
        Snapshot.delete(snapshots);
        this.transfers = new ArtifactTransfers(store, ownsStore, options, workerId);
        this.committer = new CheckpointCommitter(core, workerId, sessionId, transfers, snapshots);
        this.restorer = new CheckpointRestorer(core, workerId, sessionId, transfers, patience);
        this.outputs = new OutputsUploader(core, workerId, sessionId, transfers);
    }

    public ArtifactTransfers transfers() { return transfers; }
    public CheckpointCommitter committer() { return committer; }
    public CheckpointRestorer restorer() { return restorer; }
    public OutputsUploader outputs() { return outputs; }

    @Override
    public void close() {
        transfers.close();
    }
}
