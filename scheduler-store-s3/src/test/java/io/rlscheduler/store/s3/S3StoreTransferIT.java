package io.rlscheduler.store.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.store.StoredObject;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large files against s3proxy: multipart uploads and ranged downloads whose parts really go in
 * parallel (seen at the server, which holds the requests until as many as the store allows have
 * arrived), bounded by the parallelism setting, and a multipart upload that fails or whose file
 * changes aborted with nothing left in the bucket.
 */
class S3StoreTransferIT {

    private static final long MIB = 1L << 20;
    private static final int PARALLELISM = 4;

    @RegisterExtension
    static final S3ProxyServer server = S3ProxyServer.of(S3ProxyServer.Backend.FILESYSTEM);

    @TempDir
    Path temp;

    private S3Store store;

    @BeforeEach
    void openStore(TestInfo test) {
        server.blobs().reset();
        store = S3Store.open(server.options("transfer/" + test.getTestMethod().orElseThrow().getName())
                .partSize(5 * MIB).parallelism(PARALLELISM).build());
    }

    @AfterEach
    void closeStore() {
        server.blobs().reset();
        store.close();
    }

    private static String sha256(Path file) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] b = new byte[1 << 20];
            for (int n; (n = in.read(b)) > 0; ) {
                digest.update(b, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    @Test
    void aFileAboveTheThresholdGoesInPartsInParallelAndComesBackInRangesInParallel() throws Exception {
        Path source = TestFiles.random(temp.resolve("model.bin"), 40 * MIB + 123, 7);
        String expected = sha256(source);

        server.blobs().hold();
        CompletableFuture<StoredObject> put = CompletableFuture.supplyAsync(() -> store.put("ckpt/model.bin", source));
        await().atMost(Duration.ofSeconds(20)).until(() -> server.blobs().partsInFlight() == PARALLELISM);
        server.blobs().open();
        StoredObject stored = put.get(60, TimeUnit.SECONDS);
        assertThat(stored.getSize()).isEqualTo(Files.size(source));
        assertThat(stored.getSha256()).isEqualTo(expected);
        assertThat(server.blobs().mostPartsInFlight()).as("parts at the server at once").isEqualTo(PARALLELISM);

        assertThat(store.stat("ckpt/model.bin")).hasValueSatisfying(o -> {
            assertThat(o.getSize()).isEqualTo(stored.getSize());
            assertThat(o.getSha256()).as("kept as x-amz-meta-sha256").isEqualTo(expected);
        });

        Path back = temp.resolve("back/model.bin");
        Files.createDirectories(back.getParent());
        server.blobs().hold();
        CompletableFuture<StoredObject> get = CompletableFuture.supplyAsync(() -> store.get("ckpt/model.bin", back));
        await().atMost(Duration.ofSeconds(20)).until(() -> server.blobs().rangesInFlight() == PARALLELISM);
        assertThat(back).doesNotExist();
        server.blobs().open();
        StoredObject got = get.get(60, TimeUnit.SECONDS);
        assertThat(got.getSha256()).isEqualTo(expected);
        assertThat(got.getSize()).isEqualTo(stored.getSize());
        assertThat(sha256(back)).isEqualTo(expected);
        assertThat(server.blobs().mostRangesInFlight()).as("ranged GETs at the server at once").isEqualTo(PARALLELISM);
        try (var names = Files.list(back.getParent())) {
            assertThat(names).as("no part file left beside the target").containsExactly(back);
        }
    }

    @Test
    void aFileAtTheThresholdGoesInOnePutAndSmallBytesTooWithTheirDigest() throws Exception {
        Path source = TestFiles.random(temp.resolve("small.bin"), 32 * MIB, 3);
        StoredObject stored = store.put("small.bin", source);
        assertThat(stored.getSha256()).isEqualTo(sha256(source));
        assertThat(server.blobs().mostPartsInFlight()).isZero();
        assertThat(store.stat("small.bin")).hasValueSatisfying(o -> assertThat(o.getSha256()).isEqualTo(stored.getSha256()));
        Path back = temp.resolve("small.back");
        assertThat(store.get("small.bin", back).getSha256()).isEqualTo(stored.getSha256());
        assertThat(server.blobs().mostRangesInFlight()).isZero();
        assertThat(store.put("b", new byte[] {1, 2, 3}).getSha256())
                .isEqualTo("039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81");
    }

    @Test
    void aMultipartUploadWhosePartsFailIsAbortedAndLeavesNothing() throws Exception {
        Path source = TestFiles.random(temp.resolve("model.bin"), 36 * MIB, 5);
        server.blobs().failParts(true);
        assertThatThrownBy(() -> store.put("ckpt/model.bin", source)).isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("s3://" + S3ProxyServer.BUCKET + "/transfer/")
                .hasMessageContaining("ckpt/model.bin");
        assertThat(store.stat("ckpt/model.bin")).isEmpty();
        assertThat(store.list("ckpt")).isEmpty();
        assertThat(server.blobs().listMultipartUploads(S3ProxyServer.BUCKET)).as("no upload left, no orphan part").isEmpty();
    }

    @Test
    void aFileThatChangesWhileItIsSentIsRefusedAndItsUploadAborted() throws Exception {
        Path source = TestFiles.random(temp.resolve("model.bin"), 40 * MIB, 9);
        server.blobs().hold();
        CompletableFuture<StoredObject> put = CompletableFuture.supplyAsync(() -> store.put("ckpt/model.bin", source));
        // The first parts are held at the server, so the last part is not read yet: change it.
        await().atMost(Duration.ofSeconds(20)).until(() -> server.blobs().partsInFlight() == PARALLELISM);
        try (FileChannel ch = FileChannel.open(source, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {42, 42, 42, 42}), 39 * MIB);
        }
        server.blobs().open();
        assertThatThrownBy(() -> join(put)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("changed while it was stored");
        assertThat(store.stat("ckpt/model.bin")).isEmpty();
        assertThat(server.blobs().listMultipartUploads(S3ProxyServer.BUCKET)).isEmpty();
    }

    @Test
    void openStreamsAWholeLargeObject() throws Exception {
        Path source = TestFiles.random(temp.resolve("log"), 36 * MIB, 11);
        store.put("logs/run.log", source);
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (InputStream in = store.open("logs/run.log")) {
            byte[] b = new byte[64 * 1024];
            for (int n; (n = in.read(b)) > 0; ) {
                digest.update(b, 0, n);
            }
        }
        assertThat(HexFormat.of().formatHex(digest.digest())).isEqualTo(sha256(source));
        try (InputStream in = store.open("logs/run.log")) {
            assertThat(in.read()).isNotNegative(); // closed before its end: aborted, not drained
        }
    }

    private static <T> T join(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            throw e;
        }
    }

}
