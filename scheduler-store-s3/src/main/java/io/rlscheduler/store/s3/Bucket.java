package io.rlscheduler.store.s3;

import io.rlscheduler.store.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/**
 * A store's bucket as its uploads, downloads and calls reach it: the client, the transfer
 * threads, the object key of a store key, and a HEAD that tells a missing key from a missing
 * bucket. Thread-safe.
 */
final class Bucket {

    final S3Client client;
    final ExecutorService transfers;
    final S3StoreOptions options;
    final S3Failures failures;
    final String name;
    /** Prepended to every store key: the store's prefix and a slash, or "". */
    private final String keyPrefix;

    Bucket(S3Client client, ExecutorService transfers, S3StoreOptions options) {
        this.client = client;
        this.transfers = transfers;
        this.options = options;
        this.name = options.getBucket();
        this.failures = new S3Failures(name, options.getEndpoint());
        this.keyPrefix = options.getPrefix().isEmpty() ? "" : options.getPrefix() + "/";
    }

    /**
     * Returns the object key of a store key: the key checked, under the store's prefix.
     *
     * @throws IllegalArgumentException if the key is invalid, or too long with the prefix
     */
    String objectKey(String key) {
        StoreKeys.check(key);
        String objectKey = keyPrefix + key;
        if (objectKey.getBytes(StandardCharsets.UTF_8).length > StoreKeys.MAX_KEY_BYTES) {
            throw new IllegalArgumentException("invalid artifact key '" + key + "': longer than " + StoreKeys.MAX_KEY_BYTES
                    + " bytes with the store's prefix " + options.getPrefix());
        }
        return objectKey;
    }

    /** Returns the object key prefix of everything the store holds: its prefix and a slash, or "". */
    String keyPrefix() {
        return keyPrefix;
    }

    /** Returns the store key of an object key under the store's prefix, or null if it is none of the store's. */
    String storeKey(String objectKey) {
        if (!objectKey.startsWith(keyPrefix)) {
            return null;
        }
        String key = objectKey.substring(keyPrefix.length());
        return StoreKeys.isValid(key) ? key : null;
    }

    /**
     * Returns the object's metadata, or empty if the key holds nothing.
     *
     * @throws io.rlscheduler.store.StoreUnavailableException if the store cannot be read, or has no such bucket
     */
    Optional<HeadObjectResponse> head(String objectKey) {
        try {
            return Optional.of(client.headObject(r -> r.bucket(name).key(objectKey)));
        } catch (SdkException e) {
            if (!S3Failures.isNotFound(e)) {
                throw failures.unavailable("read", objectKey, e);
            }
        }
        // A HEAD's 404 has no body to say whether the key or the bucket is missing: ask the bucket.
        try {
            client.headBucket(r -> r.bucket(name));
        } catch (SdkException e) {
            throw failures.unavailable("read", objectKey, S3Failures.isNotFound(e) ? new NoSuchBucket(name, e) : e);
        }
        return Optional.empty();
    }

    /** The bucket of the store does not exist. */
    static final class NoSuchBucket extends Exception {
        private static final long serialVersionUID = 1L;

        NoSuchBucket(String bucket, Throwable cause) {
            super("no bucket " + bucket, cause);
        }
    }
}
