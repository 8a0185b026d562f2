package io.rlscheduler.store.s3;

import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.UUID;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/**
 * Reads objects into files: an object up to the multipart threshold in one GET, a larger one in
 * ranged GETs of a part each, in parallel, all conditional on the ETag the object had when the
 * download began (an object replaced meanwhile fails the download instead of mixing two). The
 * bytes go to a part file beside the target, hashed in order as they are written, and the part
 * file is moved onto the target once complete; a failed download deletes it. Thread-safe.
 */
final class Downloads {

    /** Bytes copied at a time. */
    private static final int CHUNK = 1 << 20;

    private final Bucket bucket;

    Downloads(Bucket bucket) {
        this.bucket = bucket;
    }

    /** Copies the object into target and returns the size and SHA-256 of the bytes received. */
    StoredObject get(String key, String objectKey, Path target) {
        HeadObjectResponse head = bucket.head(objectKey).orElseThrow(() -> new ArtifactNotFoundException(key));
        long size = head.contentLength();
        Path absolute = target.toAbsolutePath();
        Path part = absolute.resolveSibling("." + absolute.getFileName() + "." + UUID.randomUUID() + ".part");
        MessageDigest digest = Sha256.newDigest();
        long received;
        try {
            try (FileChannel out = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                received = size <= bucket.options.getMultipartThreshold()
                        ? copyWhole(key, objectKey, out, digest)
                        : copyRanges(key, objectKey, head.eTag(), size, out, digest);
            }
            Files.move(part, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            part = null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target, e);
        } finally {
            deleteQuietly(part);
        }
        return new StoredObject(key, received, Sha256.hex(digest), null);
    }

    private long copyWhole(String key, String objectKey, FileChannel out, MessageDigest digest) throws IOException {
        ResponseInputStream<GetObjectResponse> in;
        try {
            in = bucket.client.getObject(r -> r.bucket(bucket.name).key(objectKey));
        } catch (SdkException e) {
            throw bucket.failures.translate("read", key, objectKey, e);
        }
        boolean complete = false;
        try {
            byte[] buffer = new byte[CHUNK];
            long n = 0;
            while (true) {
                int r = readFromStore(in, buffer, objectKey);
                if (r < 0) {
                    complete = true;
                    return n;
                }
                digest.update(buffer, 0, r);
                write(out, buffer, r);
                n += r;
            }
        } finally {
            release(in, complete);
        }
    }

    private int readFromStore(ResponseInputStream<GetObjectResponse> in, byte[] buffer, String objectKey) {
        try {
            return in.read(buffer);
        } catch (IOException | SdkException e) {
            throw bucket.failures.unavailable("read", objectKey, e);
        }
    }

    /** Fetches the object's ranges in parallel, writing and hashing them in order; returns the bytes written. */
    private long copyRanges(String key, String objectKey, String eTag, long size, FileChannel out, MessageDigest digest) throws IOException {
        int partSize = (int) bucket.options.getPartSize();
        PartWindow<byte[]> window = new PartWindow<>(bucket.transfers, bucket.options.getParallelism());
        ArrayDeque<byte[]> free = new ArrayDeque<>();
        long written = 0;
        try {
            for (long offset = 0; offset < size; offset += partSize) {
                if (window.isFull()) {
                    written += consume(window.takeOldest(), size - written, partSize, out, digest, free);
                }
                long from = offset;
                int length = (int) Math.min(partSize, size - offset);
                byte[] buffer = free.isEmpty() ? new byte[(int) Math.min(partSize, size)] : free.pop();
                window.submit(() -> fetch(key, objectKey, eTag, from, length, buffer));
            }
            while (!window.isEmpty()) {
                written += consume(window.takeOldest(), size - written, partSize, out, digest, free);
            }
            return written;
        } catch (InterruptedException e) {
            window.drain();
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while reading " + bucket.failures.location(objectKey), e);
        } catch (IOException | RuntimeException | Error e) {
            if (window.drain()) {
                Thread.currentThread().interrupt();
            }
            throw e;
        }
    }

    private static int consume(byte[] buffer, long remaining, int partSize, FileChannel out, MessageDigest digest,
            ArrayDeque<byte[]> free) throws IOException {
        int length = (int) Math.min(partSize, remaining);
        digest.update(buffer, 0, length);
        write(out, buffer, length);
        free.push(buffer);
        return length;
    }

    /** Fetches one range into the buffer: exactly its length, of the object with the ETag given. */
    private byte[] fetch(String key, String objectKey, String eTag, long from, int length, byte[] buffer) {
        ResponseInputStream<GetObjectResponse> in;
        try {
            in = bucket.client.getObject(r -> r.bucket(bucket.name).key(objectKey)
                    .range("bytes=" + from + "-" + (from + length - 1)).ifMatch(eTag));
        } catch (SdkException e) {
            if (S3Failures.isPreconditionFailed(e)) {
                throw bucket.failures.unavailable("read", objectKey, new IOException("the object was replaced while it was read", e));
            }
            throw bucket.failures.translate("read", key, objectKey, e);
        }
        boolean complete = false;
        try {
            int n = in.readNBytes(buffer, 0, length);
            complete = in.read() < 0;
            if (n != length || !complete) {
                throw bucket.failures.unavailable("read", objectKey, new IOException("the range from " + from + " of "
                        + length + " bytes came back with " + (n != length ? n + " bytes" : "more bytes")));
            }
            return buffer;
        } catch (IOException | SdkException e) {
            throw bucket.failures.unavailable("read", objectKey, e);
        } finally {
            release(in, complete);
        }
    }

    /** Closes a response read to its end (its connection is kept for the next request), or aborts one that was not. */
    static void release(ResponseInputStream<?> in, boolean complete) {
        if (!complete) {
            in.abort();
            return;
        }
        try {
            in.close();
        } catch (IOException ignored) {
            // its bytes are all read: a failure to close only loses the connection
        }
    }

    private static void write(FileChannel out, byte[] buffer, int length) throws IOException {
        for (int n = 0; n < length; ) {
            ByteBuffer chunk = ByteBuffer.wrap(buffer, n, Math.min(CHUNK, length - n));
            while (chunk.hasRemaining()) {
                n += out.write(chunk);
            }
        }
    }

    private static void deleteQuietly(Path part) {
        if (part == null) {
            return;
        }
        try {
            Files.deleteIfExists(part);
        } catch (IOException ignored) {
            // the directory went away or became read-only: nothing more can be done for the part file
        }
    }
}
