package io.rlscheduler.store.s3;

import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.StoreUnavailableException;
import java.net.URI;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * Turns the SDK's failures into the store's: a missing key into {@link ArtifactNotFoundException},
 * everything else the service or the client reports (a refused connection, a 5xx, refused
 * credentials, a missing bucket) into {@link StoreUnavailableException} naming the object and the
 * endpoint. No SDK exception leaves the store.
 */
final class S3Failures {

    private final String bucket;
    private final URI endpoint;

    S3Failures(String bucket, URI endpoint) {
        this.bucket = bucket;
        this.endpoint = endpoint;
    }

    /** Returns whether the failure says the key holds nothing (its bucket exists). */
    static boolean isNoSuchKey(SdkException e) {
        if (e instanceof NoSuchKeyException) {
            return true;
        }
        return e instanceof AwsServiceException && ((AwsServiceException) e).statusCode() == 404
                && ((AwsServiceException) e).awsErrorDetails() != null
                && "NoSuchKey".equals(((AwsServiceException) e).awsErrorDetails().errorCode());
    }

    /** Returns whether the service answered 404: to a HEAD, a missing key or a missing bucket alike. */
    static boolean isNotFound(SdkException e) {
        return e instanceof AwsServiceException && ((AwsServiceException) e).statusCode() == 404;
    }

    /** Returns whether the service answered 412: a condition (If-Match) did not hold. */
    static boolean isPreconditionFailed(SdkException e) {
        return e instanceof AwsServiceException && ((AwsServiceException) e).statusCode() == 412;
    }

    /**
     * Returns the store's exception for a failure of {@code what} on {@code key}.
     *
     * @param what      what was being done ("store", "read", "list")
     * @param key       the store's key (for a not-found), or the prefix listed
     * @param objectKey the object's key in the bucket
     */
    RuntimeException translate(String what, String key, String objectKey, SdkException e) {
        if (isNoSuchKey(e)) {
            return new ArtifactNotFoundException(key);
        }
        return unavailable(what, objectKey, e);
    }

    /** Returns a {@link StoreUnavailableException} for a failure of {@code what} on an object key. */
    StoreUnavailableException unavailable(String what, String objectKey, Throwable e) {
        return new StoreUnavailableException("cannot " + what + " " + location(objectKey) + ": " + describe(e), e);
    }

    /** Returns where an object is: s3://bucket/key, and the endpoint when it is not AWS's. */
    String location(String objectKey) {
        return "s3://" + bucket + "/" + objectKey + (endpoint == null ? "" : " (at " + endpoint + ")");
    }

    private static String describe(Throwable e) {
        if (e instanceof AwsServiceException) {
            AwsServiceException s = (AwsServiceException) e;
            String code = s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorCode();
            return "HTTP " + s.statusCode() + (code == null || code.isEmpty() ? "" : " " + code) + ": " + s.getMessage();
        }
        String message = e.getMessage();
        Throwable cause = e.getCause();
        // The client's own message ("Unable to execute HTTP request") names the cause only in it.
        if (cause != null && cause.getMessage() != null && (message == null || !message.contains(cause.getMessage()))) {
            return (message == null ? "" : message + ": ") + cause;
        }
        return message == null ? e.toString() : message;
    }
}
