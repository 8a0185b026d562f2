/**
 * A worker's artifacts: {@link io.rlscheduler.worker.internal.artifacts.CheckpointCommitter}
 * commits an attempt's checkpoints to the artifact store (files, manifest, then the fenced pointer
 * in Redis), {@link io.rlscheduler.worker.internal.artifacts.CheckpointRestorer} puts the latest
 * committed one into a new attempt's checkpoint directory before its script starts,
 * {@link io.rlscheduler.worker.internal.artifacts.ArtifactTransfers} runs the transfers off the
 * worker's task and I/O threads, and {@link io.rlscheduler.worker.internal.artifacts.FileListing}
 * finds what may leave the machine without following a link out of its directory. The commit
 * protocol is drawn in docs/architecture.md.
 */
package io.rlscheduler.worker.internal.artifacts;
