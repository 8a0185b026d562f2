package io.rlscheduler.master;

import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.StoreKeys;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * A run's stored artifacts as they were when listed ({@link TaskHandle#artifacts()}): its committed
 * checkpoints' files, its attempts' outputs and its ended log, each with its size and (but for the
 * log) the SHA-256 its manifest records. Opens one as a stream, or downloads all to a directory,
 * checking each against its manifest. Reads block the caller for the transfer. Thread-safe.
 */
public final class RunArtifacts {

    private final String taskId;
    private final List<Artifact> artifacts;
    private final ArtifactStore store;

    RunArtifacts(String taskId, List<Artifact> artifacts, ArtifactStore store) {
        this.taskId = taskId;
        this.artifacts = List.copyOf(artifacts);
        this.store = store;
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }

    /** Returns every artifact: checkpoints newest first (their files by path), then outputs by attempt (by path), then the log. */
    public List<Artifact> list() {
        return artifacts;
    }

    /** Returns the artifacts of one kind, in {@link #list()}'s order. */
    public List<Artifact> list(Artifact.Kind kind) {
        return artifacts.stream().filter(a -> a.getKind() == kind).toList();
    }

    /** Returns the artifacts one attempt made (checkpoints and outputs), in {@link #list()}'s order. */
    public List<Artifact> ofAttempt(int attempt) {
        return artifacts.stream().filter(a -> a.getAttempt() == attempt).toList();
    }

    /**
     * Opens an artifact's bytes; the caller closes the stream.
     *
     * @throws ArtifactNotFoundException if it is no longer stored (a checkpoint dropped by retention since)
     * @throws StoreUnavailableException if the store cannot be read
     */
    public InputStream open(Artifact artifact) {
        return store.open(Objects.requireNonNull(artifact, "artifact").getKey());
    }

    /**
     * Downloads every artifact into {@code directory}: {@code checkpoints/<id>/<path>},
     * {@code outputs/attempt-<n>/<path>} and {@code <taskId>.log}, each written beside its place
     * and moved there when whole; each checked against its manifest's SHA-256.
     *
     * @return the directory
     * @throws ArtifactNotFoundException if one is no longer stored
     * @throws StoreUnavailableException if the store cannot be read
     * @throws UncheckedIOException      if a file cannot be written, or one fetched does not match
     *                                   its manifest (its bytes changed in the store)
     */
    public Path downloadAll(Path directory) {
        Path root = directory.toAbsolutePath().normalize();
        for (Artifact a : artifacts) {
            Path target = switch (a.getKind()) {
                case CHECKPOINT -> root.resolve("checkpoints").resolve(a.getCheckpointId()).resolve(a.getPath());
                case OUTPUT -> root.resolve("outputs").resolve("attempt-" + a.getAttempt()).resolve(a.getPath());
                case LOG -> root.resolve(a.getPath());
            };
            // Paths come from manifests written by workers: checked as keys, and kept inside the directory.
            StoreKeys.check(a.getPath());
            if (!target.normalize().startsWith(root)) {
                throw new UncheckedIOException(new IOException(a + " would be written outside " + root));
            }
            try {
                Files.createDirectories(target.getParent());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + target.getParent(), e);
            }
            StoredObject got = store.get(a.getKey(), target);
            if (a.getSha256() != null && !a.getSha256().equals(got.getSha256())) {
                throw new UncheckedIOException(new IOException(a + " does not match its manifest: SHA-256 "
                        + got.getSha256() + ", recorded " + a.getSha256()));
            }
        }
        return root;
    }

    @Override
    public String toString() {
        return "RunArtifacts{" + taskId + ": " + artifacts.size() + " artifacts}";
    }
}
