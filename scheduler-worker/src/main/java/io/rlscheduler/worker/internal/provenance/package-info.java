/**
 * The provenance of each attempt a worker runs: which code it ran, where, on which GPUs. Not
 * public API; the value is {@link io.rlscheduler.core.AttemptProvenance}.
 *
 * <ul>
 *   <li>{@link io.rlscheduler.worker.internal.provenance.ProvenanceRecorder} wraps the worker's
 *       executor: after each start it has the attempt's provenance collected (on a task thread when
 *       a file is run, without holding the start up) and stored in Redis, fenced by the attempt's
 *       epoch: with the attempt's end when it ends within a second, else alone.</li>
 *   <li>{@code ProvenanceProbe} collects it: the SHA-256 of the file the execution runs, the
 *       interpreter's version and the hostname (both read once), the GPUs' UUIDs from the last
 *       nvidia-smi probe.</li>
 *   <li>{@code GitWorkTree} asks git for the commit of the script's work tree and whether the tree
 *       is dirty, bounded in time; {@code ShortCommand} runs such short child processes.</li>
 * </ul>
 */
package io.rlscheduler.worker.internal.provenance;
