package io.rlscheduler.store.s3;

import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.AwsProfileRegionProvider;
import software.amazon.awssdk.regions.providers.AwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.SystemSettingsRegionProvider;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/** Builds the SDK client of an {@link S3Store} from its options: HTTP client, timeouts, region, credentials. */
final class S3Clients {

    /** How long opening a connection may take. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** How long a connection may stay silent while a request or response is under way. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(30);
    /** The longest one API call may take, its retries included (one part, or one object up to the threshold). */
    static final Duration CALL_TIMEOUT = Duration.ofMinutes(5);
    /** Attempts of one API call, the first included. */
    static final int ATTEMPTS = 4;

    private S3Clients() {
    }

    /** Returns the credentials of the options: static ones, or the AWS chain (closed with the store). */
    static AwsCredentialsProvider credentials(S3StoreOptions options) {
        if (options.getAccessKey() != null) {
            return StaticCredentialsProvider.create(AwsBasicCredentials.create(options.getAccessKey(), options.getSecretKey()));
        }
        return DefaultCredentialsProvider.builder().build();
    }

    /**
     * Returns the region to sign for: the one given; else the chain's (with an endpoint, the
     * chain without instance metadata, which a lab's S3 server does not stand behind, and
     * us-east-1 when it names none).
     *
     * @throws IllegalArgumentException if no region is given and, without an endpoint, the chain names none
     */
    static Region region(S3StoreOptions options) {
        if (options.getRegion() != null) {
            return Region.of(options.getRegion());
        }
        if (options.getEndpoint() != null) {
            try {
                return new AwsRegionProviderChain(new SystemSettingsRegionProvider(), new AwsProfileRegionProvider()).getRegion();
            } catch (SdkClientException e) {
                return Region.of(S3StoreOptions.DEFAULT_ENDPOINT_REGION);
            }
        }
        try {
            return new DefaultAwsRegionProviderChain().getRegion();
        } catch (SdkClientException e) {
            throw new IllegalArgumentException("no region for the S3 store s3://" + options.getBucket()
                    + ": set the " + S3StoreOptions.REGION + " setting, aws.region or AWS_REGION (" + e.getMessage() + ")", e);
        }
    }

    /**
     * Returns a synchronous client over the JDK's HTTP client, with the SDK's standard retries
     * (throttling, 5xx and I/O errors; exponential backoff with jitter; fewer retries once many
     * calls fail in a row) fixed here rather than left to the environment. Checksums are computed only where
     * an operation requires one, and then as MD5 (what MinIO, Ceph RGW and older servers check):
     * the store keeps its own SHA-256 of every object.
     */
    static S3Client client(S3StoreOptions options, AwsCredentialsProvider credentials) {
        S3ClientBuilder b = S3Client.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder()
                        .connectionTimeout(CONNECT_TIMEOUT)
                        .socketTimeout(READ_TIMEOUT))
                .overrideConfiguration(o -> o.apiCallTimeout(CALL_TIMEOUT)
                        .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(ATTEMPTS).build()))
                .region(region(options))
                .credentialsProvider(credentials)
                .forcePathStyle(options.isPathStyle())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .addPlugin(LegacyMd5Plugin.create());
        if (options.getEndpoint() != null) {
            b.endpointOverride(options.getEndpoint());
        }
        return b.build();
    }
}
