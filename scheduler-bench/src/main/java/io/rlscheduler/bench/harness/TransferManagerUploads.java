package io.rlscheduler.bench.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.transfer.s3.S3TransferManager;
import software.amazon.awssdk.transfer.s3.model.FileUpload;

/**
 * The S3 baseline: the AWS SDK's transfer manager used directly, over the async client's
 * Java-based multipart upload and its Netty HTTP client, uploading every file at once. Parts and
 * threshold as the S3 store's ({@code partSize}, {@code threshold}); no request checksums, as the
 * S3 store sends none for parts (it keeps its own SHA-256). The transfer manager's completion of a
 * multipart upload sends {@code x-amz-mp-object-size}, which s3proxy 4.1 refuses (501), so an
 * interceptor removes that one header; nothing else is changed. Thread-safe.
 */
final class TransferManagerUploads implements AutoCloseable {

    /** The header s3proxy refuses. */
    static final String OBJECT_SIZE_HEADER = "x-amz-mp-object-size";

    private final S3AsyncClient client;
    private final S3TransferManager manager;
    private final String bucket;

    TransferManagerUploads(InJvmS3 server, long partSize, long threshold) {
        this.bucket = InJvmS3.BUCKET;
        this.client = S3AsyncClient.builder()
                .httpClientBuilder(NettyNioAsyncHttpClient.builder())
                .multipartEnabled(true)
                .multipartConfiguration(m -> m.minimumPartSizeInBytes(partSize).thresholdInBytes(threshold))
                .endpointOverride(server.endpoint()).forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(InJvmS3.ACCESS_KEY, InJvmS3.SECRET_KEY)))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .overrideConfiguration(o -> o.addExecutionInterceptor(new WithoutObjectSize()))
                .build();
        this.manager = S3TransferManager.builder().s3Client(client).build();
    }

    /** Uploads the files under {@code prefix}/name, all at once; returns when every upload has completed. */
    void uploadAll(List<Path> files, String prefix) {
        List<FileUpload> uploads = new ArrayList<>(files.size());
        for (Path f : files) {
            String key = prefix + "/" + f.getFileName();
            uploads.add(manager.uploadFile(u -> u.source(f).putObjectRequest(r -> r.bucket(bucket).key(key))));
        }
        for (FileUpload u : uploads) {
            u.completionFuture().join();
        }
    }

    @Override
    public void close() {
        manager.close();
        client.close();
    }

    private static final class WithoutObjectSize implements ExecutionInterceptor {
        @Override
        public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
            return context.httpRequest().toBuilder().removeHeader(OBJECT_SIZE_HEADER).build();
        }
    }
}
