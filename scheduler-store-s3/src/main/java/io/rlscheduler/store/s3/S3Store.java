package io.rlscheduler.store.s3;

import io.rlscheduler.core.internal.DaemonThreads;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * An {@link ArtifactStore} in an S3 bucket ({@code s3://bucket/prefix}): AWS S3, or any server
 * that speaks its API (MinIO, Ceph RGW, s3proxy) through the {@code endpoint} setting. A store key
 * is the object key below the prefix. Every setting, its default and unit, is in the table of
 * {@link S3StoreOptions}; open one with {@link #open(S3StoreOptions)} or through
 * {@code ArtifactStores.open("s3://bucket/prefix?endpoint=...", settings)}.
 *
 * <p>Bytes, and files up to {@code multipart-threshold} (32 MiB), go in one PUT; a larger file
 * as a multipart upload of {@code part-size} (16 MiB) parts, {@code parallelism} (4) at once,
 * completed only once every part is stored, so an object is visible whole or not at all; an
 * upload that fails is aborted. Every object carries the SHA-256 of its bytes as its
 * {@code x-amz-meta-sha256} metadata, which {@link #stat} returns (an object written by
 * something else may lack it). {@link #get} of a large object fetches ranges in parallel into a
 * part file beside the target and moves it into place. The digests returned are always of the
 * bytes stored or received.
 *
 * <p>Failures: a missing key is {@link io.rlscheduler.store.ArtifactNotFoundException}; anything
 * else (connection refused, timeouts, a 5xx, refused credentials, a missing bucket) is
 * {@link StoreUnavailableException} naming the object and the endpoint; the SDK's own exceptions
 * never leave the store. Fixed client figures: connect timeout 3 s, 30 s without a byte moving
 * on a connection, 5 min per API call (one part or one small object) with its retries, the SDK's
 * standard retries (4 attempts in all, with backoff) for throttling, 5xx and I/O errors.
 *
 * <p>Thread-safe; share one store. Opening one is cheap (no request is made: a store that is
 * down opens, and its calls fail until it is back). Calls block their thread; part transfers run
 * on the store's own daemon threads, which {@link #close()} ends.
 */
public final class S3Store implements ArtifactStore {

    /** Objects one DeleteObjects request deletes at most: S3's limit. */
    private static final int DELETE_BATCH = 1000;

    private final S3StoreOptions options;
    private final AwsCredentialsProvider credentials;
    private final S3Client client;
    private final ExecutorService transfers;
    private final Bucket bucket;
    private final Uploads uploads;
    private final Downloads downloads;

    private S3Store(S3StoreOptions options) {
        this.options = options;
        this.credentials = S3Clients.credentials(options);
        try {
            this.client = S3Clients.client(options, credentials);
        } catch (RuntimeException e) {
            closeQuietly(credentials);
            throw e;
        }
        this.transfers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                DaemonThreads.named("s3-store-" + options.getBucket()));
        this.bucket = new Bucket(client, transfers, options);
        this.uploads = new Uploads(bucket);
        this.downloads = new Downloads(bucket);
    }

    /**
     * Opens a store; no request is made until the first call.
     *
     * @throws IllegalArgumentException if no region is given and none can be found (without an endpoint)
     */
    public static S3Store open(S3StoreOptions options) {
        return new S3Store(Objects.requireNonNull(options, "options"));
    }

    /** Returns the store's settings. */
    public S3StoreOptions getOptions() {
        return options;
    }

    /** Returns {@link S3StoreOptions#toUri()}: no credentials in it. */
    @Override
    public URI getUri() {
        return options.toUri();
    }

    @Override
    public StoredObject put(String key, Path source) {
        Objects.requireNonNull(source, "source");
        return uploads.put(key, bucket.objectKey(key), source);
    }

    @Override
    public StoredObject put(String key, byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        return uploads.put(key, bucket.objectKey(key), bytes, bytes.length);
    }

    @Override
    public StoredObject get(String key, Path target) {
        Objects.requireNonNull(target, "target");
        return downloads.get(key, bucket.objectKey(key), target);
    }

    @Override
    public InputStream open(String key) {
        String objectKey = bucket.objectKey(key);
        try {
            return new ObjectStream(client.getObject(r -> r.bucket(bucket.name).key(objectKey)));
        } catch (SdkException e) {
            throw bucket.failures.translate("read", key, objectKey, e);
        }
    }

    @Override
    public Optional<StoredObject> stat(String key) {
        Optional<HeadObjectResponse> head = bucket.head(bucket.objectKey(key));
        return head.map(h -> new StoredObject(key, h.contentLength(), Sha256.valid(h.metadata().get(Sha256.METADATA)),
                h.lastModified()));
    }

    @Override
    public List<StoredObject> list(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        String objectPrefix = prefix.isEmpty() ? bucket.keyPrefix() : bucket.objectKey(prefix) + "/";
        List<StoredObject> out = new ArrayList<>();
        try {
            for (S3Object o : client.listObjectsV2Paginator(r -> r.bucket(bucket.name).prefix(objectPrefix)).contents()) {
                String key = bucket.storeKey(o.key());
                if (key != null) {
                    out.add(new StoredObject(key, o.size(), null, o.lastModified()));
                }
            }
        } catch (SdkException e) {
            throw bucket.failures.unavailable("list", objectPrefix, e);
        }
        out.sort(Comparator.comparing(StoredObject::getKey));
        return out;
    }

    @Override
    public void delete(String key) {
        String objectKey = bucket.objectKey(key);
        try {
            client.deleteObject(r -> r.bucket(bucket.name).key(objectKey));
        } catch (SdkException e) {
            throw bucket.failures.unavailable("delete", objectKey, e);
        }
    }

    /** Deletes what {@link #list} names, up to 1,000 objects a request. */
    @Override
    public int deleteAll(String prefix) {
        List<StoredObject> objects = list(prefix);
        for (int from = 0; from < objects.size(); from += DELETE_BATCH) {
            List<ObjectIdentifier> batch = new ArrayList<>();
            for (StoredObject o : objects.subList(from, Math.min(objects.size(), from + DELETE_BATCH))) {
                batch.add(ObjectIdentifier.builder().key(bucket.objectKey(o.getKey())).build());
            }
            DeleteObjectsResponse response;
            try {
                response = client.deleteObjects(r -> r.bucket(bucket.name).delete(d -> d.objects(batch).quiet(true)));
            } catch (SdkException e) {
                throw bucket.failures.unavailable("delete under", bucket.keyPrefix() + prefix, e);
            }
            if (response.hasErrors() && !response.errors().isEmpty()) {
                var error = response.errors().get(0);
                throw new StoreUnavailableException("cannot delete " + bucket.failures.location(error.key()) + " (and "
                        + (response.errors().size() - 1) + " more): " + error.code() + " " + error.message(), null);
            }
        }
        return objects.size();
    }

    /** Ends the transfer threads (a transfer under way fails) and releases the client's connections. */
    @Override
    public void close() {
        transfers.shutdownNow();
        closeQuietly(client);
        closeQuietly(credentials);
    }

    @Override
    public String toString() {
        return "S3Store[" + getUri() + "]";
    }

    private static void closeQuietly(Object closeable) {
        if (closeable instanceof AutoCloseable) {
            try {
                ((AutoCloseable) closeable).close();
            } catch (Exception ignored) {
                // releasing what the store held: nothing left to do with a failure
            }
        }
    }

    /** An object's bytes as a stream; a failure of the client while reading is an IOException. */
    private static final class ObjectStream extends FilterInputStream {
        private final ResponseInputStream<GetObjectResponse> response;
        private boolean ended;

        ObjectStream(ResponseInputStream<GetObjectResponse> response) {
            super(response);
            this.response = response;
        }

        @Override
        public int read() throws IOException {
            try {
                return ended(super.read());
            } catch (SdkException e) {
                throw new IOException(e.getMessage(), e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return ended(super.read(b, off, len));
            } catch (SdkException e) {
                throw new IOException(e.getMessage(), e);
            }
        }

        @Override
        public long skip(long n) throws IOException {
            try {
                return super.skip(n);
            } catch (SdkException e) {
                throw new IOException(e.getMessage(), e);
            }
        }

        private int ended(int n) {
            ended |= n < 0;
            return n;
        }

        /** Closes the response: one read to its end keeps its connection; one that was not is aborted, not drained. */
        @Override
        public void close() {
            Downloads.release(response, ended);
        }
    }
}
