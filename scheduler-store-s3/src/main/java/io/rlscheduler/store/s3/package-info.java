/**
 * The S3-compatible artifact store, {@code s3://bucket/prefix}: {@link io.rlscheduler.store.s3.S3Store}
 * on the AWS SDK for Java v2 (AWS S3, MinIO, Ceph RGW, s3proxy), its settings
 * {@link io.rlscheduler.store.s3.S3StoreOptions}, and {@link io.rlscheduler.store.s3.S3StoreProvider},
 * through which {@code ArtifactStores.open} finds it. Everything else in the package is internal:
 * single and multipart uploads, single and ranged parallel downloads, the window of parts in
 * flight, and the translation of the SDK's failures into the store's exceptions.
 */
package io.rlscheduler.store.s3;
