package io.rlscheduler.store;

import java.io.InputStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where a run's checkpoints, outputs and logs outlive the machine that made them: a flat space of
 * objects named by keys ({@link StoreKeys}: slash-separated, relative, no {@code .} or {@code ..}
 * segment), each written whole or not at all. Two implementations ship: {@link DirectoryStore}
 * ({@code file:} URIs) and, in the optional module scheduler-store-s3, an S3-compatible store
 * ({@code s3://bucket/prefix}); {@link ArtifactStores#open} picks one by URI scheme.
 *
 * <p>An object is visible under its key only once all of its bytes are stored: a reader sees the
 * old object, the new one or none, never a part. Writing a key again replaces its object (the
 * scheduler writes each key of a checkpoint once; a retry writes the same bytes). Deleting is
 * idempotent. What a store does not promise: ordering between keys (which is why a checkpoint
 * becomes visible through a pointer in Redis, moved only after its manifest is stored), and
 * listing consistency beyond what its backend gives.
 *
 * <p>Every call blocks the calling thread for the transfer: call it from a thread of your own,
 * never from an event loop. Implementations are thread-safe. Failures are unchecked:
 * {@link ArtifactNotFoundException} for a key that holds nothing, {@link StoreUnavailableException}
 * (retryable) when the store cannot be reached or refuses.
 */
public interface ArtifactStore extends AutoCloseable {

    /**
     * Returns where this store is, with no credentials in it: what a master tells its workers and
     * what {@link ArtifactStores#open} opens again on another machine.
     */
    URI getUri();

    /**
     * Stores a file's bytes under {@code key}, read once from the file as it is sent, and returns
     * the size and SHA-256 of the bytes stored (should the file change while it is read, of what
     * was read: the object and its digest always agree).
     *
     * @param key    the object's key
     * @param source a regular file; a symbolic link is refused
     * @return the stored object, with its size and SHA-256
     * @throws StoreUnavailableException if the store cannot take it
     * @throws java.io.UncheckedIOException if the source cannot be read
     */
    StoredObject put(String key, Path source);

    /**
     * Stores {@code bytes} under {@code key}.
     *
     * @return the stored object, with its size and SHA-256
     * @throws StoreUnavailableException if the store cannot take it
     */
    StoredObject put(String key, byte[] bytes);

    /**
     * Copies the object under {@code key} into {@code target} (replaced if it exists; written
     * beside it first and moved into place, so it is never seen half written) and returns the size
     * and SHA-256 of the bytes received, for the caller to check against what it expects.
     *
     * @throws ArtifactNotFoundException if no object has that key
     * @throws StoreUnavailableException if the store cannot be read
     * @throws java.io.UncheckedIOException if the target cannot be written
     */
    StoredObject get(String key, Path target);

    /**
     * Opens the object under {@code key} for reading; the caller closes the stream.
     *
     * @throws ArtifactNotFoundException if no object has that key
     * @throws StoreUnavailableException if the store cannot be read
     */
    InputStream open(String key);

    /**
     * Returns the object under {@code key} with its size (its SHA-256 only where the store keeps
     * one), or empty if there is none.
     *
     * @throws StoreUnavailableException if the store cannot be read
     */
    Optional<StoredObject> stat(String key);

    /**
     * Lists the objects whose keys start with {@code prefix} followed by a slash (every object
     * when the prefix is empty), in key order, with their sizes.
     *
     * @param prefix a key, or "" for all
     * @throws StoreUnavailableException if the store cannot be read
     */
    List<StoredObject> list(String prefix);

    /**
     * Deletes the object under {@code key}; nothing happens if there is none.
     *
     * @throws StoreUnavailableException if the store cannot be reached
     */
    void delete(String key);

    /**
     * Deletes every object under {@code prefix} (as {@link #list} names them); safe to repeat.
     *
     * @return how many objects were deleted
     * @throws StoreUnavailableException if the store cannot be reached
     */
    default int deleteAll(String prefix) {
        int n = 0;
        for (StoredObject o : list(prefix)) {
            delete(o.getKey());
            n++;
        }
        return n;
    }

    /** Releases the store's connections and threads; the store is not used afterwards. */
    @Override
    void close();
}
