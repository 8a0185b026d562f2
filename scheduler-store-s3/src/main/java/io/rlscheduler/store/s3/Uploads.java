package io.rlscheduler.store.s3;

import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * Writes objects: bytes and files up to the multipart threshold in one PUT, larger files as
 * multipart uploads whose parts go in parallel.
 *
 * <p>An object carries its SHA-256 in its metadata, which S3 takes only when an upload starts.
 * A large file is therefore read twice: once to hash it, and once as its parts are sent, hashed
 * again in part order; the upload is completed only if both digests agree, so the metadata, the
 * digest returned and the bytes stored are always the same (a file that changes while it is sent
 * is refused, its upload aborted). The second read usually comes from the page cache. A failed
 * upload is aborted once no part of it is in flight, so that no part is left behind. Thread-safe.
 */
final class Uploads {

    private static final Logger LOG = LoggerFactory.getLogger(Uploads.class);

    /** S3's most parts per upload. */
    static final int MAX_PARTS = 10_000;
    /** Bytes read from a file at a time (the JDK copies each read through a direct buffer of this size). */
    private static final int CHUNK = 1 << 20;
    private static final String CONTENT_TYPE = "application/octet-stream";

    private final Bucket bucket;

    Uploads(Bucket bucket) {
        this.bucket = bucket;
    }

    /** Stores {@code length} bytes of {@code bytes} under the key in one PUT. */
    StoredObject put(String key, String objectKey, byte[] bytes, int length) {
        MessageDigest digest = Sha256.newDigest();
        digest.update(bytes, 0, length);
        String sha256 = Sha256.hex(digest);
        try {
            bucket.client.putObject(r -> r.bucket(bucket.name).key(objectKey).contentLength((long) length)
                            .contentType(CONTENT_TYPE).metadata(Map.of(Sha256.METADATA, sha256)),
                    RequestBody.fromContentProvider(() -> new ByteArrayInputStream(bytes, 0, length), length, CONTENT_TYPE));
        } catch (SdkException e) {
            throw bucket.failures.unavailable("store", objectKey, e);
        }
        return new StoredObject(key, length, sha256, null);
    }

    /** Stores a regular file (never a link) under the key: in one PUT up to the threshold, else in parts. */
    StoredObject put(String key, String objectKey, Path source) {
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.readAttributes(source, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isRegularFile()) {
                throw new IOException(source + " is not a regular file");
            }
            long size = in.size();
            if (size <= bucket.options.getMultipartThreshold()) {
                byte[] bytes = new byte[(int) size];
                return put(key, objectKey, bytes, read(in, bytes, (int) size, 0));
            }
            return putParts(key, objectKey, in, size);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + source + " to store it as " + key + ": " + e.getMessage(), e);
        }
    }

    /** The part size for a file: the setting, raised so that the file fits in S3's 10,000 parts. */
    static long partSize(long configured, long size) {
        long least = (size + MAX_PARTS - 1) / MAX_PARTS;
        long mib = 1L << 20;
        return Math.max(configured, (least + mib - 1) / mib * mib);
    }

    private StoredObject putParts(String key, String objectKey, FileChannel in, long size) throws IOException {
        String sha256 = hash(in, size);
        String uploadId;
        try {
            uploadId = bucket.client.createMultipartUpload(r -> r.bucket(bucket.name).key(objectKey).contentType(CONTENT_TYPE)
                    .metadata(Map.of(Sha256.METADATA, sha256))).uploadId();
        } catch (SdkException e) {
            throw bucket.failures.unavailable("store", objectKey, e);
        }
        PartWindow<SentPart> window = new PartWindow<>(bucket.transfers, bucket.options.getParallelism());
        try {
            List<CompletedPart> parts = sendParts(objectKey, uploadId, in, size, sha256, window);
            bucket.client.completeMultipartUpload(r -> r.bucket(bucket.name).key(objectKey).uploadId(uploadId)
                    .multipartUpload(u -> u.parts(parts)));
            return new StoredObject(key, size, sha256, null);
        } catch (SdkException e) {
            StoreUnavailableException failure = bucket.failures.unavailable("store", objectKey, e);
            abort(objectKey, uploadId, window, failure);
            throw failure;
        } catch (InterruptedException e) {
            StoreUnavailableException failure = new StoreUnavailableException("interrupted while storing "
                    + bucket.failures.location(objectKey), e);
            abort(objectKey, uploadId, window, failure);
            Thread.currentThread().interrupt();
            throw failure;
        } catch (IOException | RuntimeException | Error e) {
            abort(objectKey, uploadId, window, e);
            throw e;
        }
    }

    /** A part sent, and the buffer it was sent from (for the next part to reuse). */
    private static final class SentPart {
        final CompletedPart part;
        final byte[] buffer;

        SentPart(CompletedPart part, byte[] buffer) {
            this.part = part;
            this.buffer = buffer;
        }
    }

    /**
     * Reads the file part by part, hashing in order, and sends each part on a transfer thread,
     * at most parallelism at once; returns the parts in order once all are stored.
     */
    private List<CompletedPart> sendParts(String objectKey, String uploadId, FileChannel in, long size, String sha256,
            PartWindow<SentPart> window) throws IOException, InterruptedException {
        long partSize = partSize(bucket.options.getPartSize(), size);
        List<CompletedPart> parts = new ArrayList<>();
        ArrayDeque<byte[]> free = new ArrayDeque<>();
        MessageDigest digest = Sha256.newDigest();
        int partNumber = 0;
        for (long offset = 0; offset < size; offset += partSize) {
            if (window.isFull()) {
                SentPart sent = window.takeOldest();
                parts.add(sent.part);
                free.push(sent.buffer);
            }
            int length = (int) Math.min(partSize, size - offset);
            byte[] buffer = free.isEmpty() ? new byte[(int) Math.min(partSize, size)] : free.pop();
            if (read(in, buffer, length, offset) != length) {
                throw changed(size);
            }
            digest.update(buffer, 0, length);
            int number = ++partNumber;
            window.submit(() -> new SentPart(sendPart(objectKey, uploadId, number, buffer, length), buffer));
        }
        while (!window.isEmpty()) {
            parts.add(window.takeOldest().part);
        }
        if (!Sha256.hex(digest).equals(sha256)) {
            throw changed(size);
        }
        return parts;
    }

    private CompletedPart sendPart(String objectKey, String uploadId, int number, byte[] buffer, int length) {
        String eTag = bucket.client.uploadPart(r -> r.bucket(bucket.name).key(objectKey).uploadId(uploadId)
                        .partNumber(number).contentLength((long) length),
                RequestBody.fromContentProvider(() -> new ByteArrayInputStream(buffer, 0, length), length, CONTENT_TYPE)).eTag();
        return CompletedPart.builder().partNumber(number).eTag(eTag).build();
    }

    private static IOException changed(long size) {
        return new IOException("the file changed while it was stored (it had " + size + " bytes when it was hashed)");
    }

    /**
     * Gives a failed upload up: waits until none of its parts is in flight, then aborts it, so
     * that no part stays in the bucket. An abort that fails (the store is down) is logged and
     * added to the failure: its parts stay until the bucket's lifecycle rule for incomplete
     * uploads removes them (docs/operations.md).
     */
    private void abort(String objectKey, String uploadId, PartWindow<SentPart> window, Throwable failure) {
        // The SDK refuses calls on an interrupted thread: the interrupt waits until the upload is aborted.
        boolean interrupted = Thread.interrupted() | window.drain();
        try {
            bucket.client.abortMultipartUpload(r -> r.bucket(bucket.name).key(objectKey).uploadId(uploadId));
        } catch (RuntimeException e) {
            // the store is down, or closed under the upload
            LOG.warn("cannot abort the failed upload {} of {}; its parts stay until the bucket's lifecycle rule removes them: {}",
                    uploadId, bucket.failures.location(objectKey), e.toString());
            failure.addSuppressed(e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Returns the SHA-256 of the file's first size bytes. */
    private static String hash(FileChannel in, long size) throws IOException {
        MessageDigest digest = Sha256.newDigest();
        byte[] buffer = new byte[CHUNK];
        for (long offset = 0; offset < size; ) {
            int n = read(in, buffer, (int) Math.min(CHUNK, size - offset), offset);
            if (n == 0) {
                throw changed(size);
            }
            digest.update(buffer, 0, n);
            offset += n;
        }
        return Sha256.hex(digest);
    }

    /** Reads up to length bytes at position into the buffer, a chunk at a time; returns how many (fewer at the end of the file). */
    static int read(FileChannel in, byte[] buffer, int length, long position) throws IOException {
        int n = 0;
        while (n < length) {
            int r = in.read(ByteBuffer.wrap(buffer, n, Math.min(CHUNK, length - n)), position + n);
            if (r < 0) {
                break;
            }
            n += r;
        }
        return n;
    }
}
