package io.rlscheduler.bench.harness;

import io.rlscheduler.store.s3.S3StoreOptions;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.gaul.s3proxy.BlobStores;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;

/**
 * An S3 server in this JVM for the S3 benchmarks: s3proxy on a free loopback port with its
 * filesystem backend (objects as files in a directory of its own) and one bucket. It shares the
 * machine's cores with the client it serves, so what it measures is what both cost together.
 */
final class InJvmS3 implements AutoCloseable {

    static final String BUCKET = "rls-bench";
    static final String ACCESS_KEY = "rls-bench-access";
    static final String SECRET_KEY = "rls-bench-secret-0123456789";
    private static final long START_TIMEOUT_NANOS = 30_000_000_000L;

    private final Path directory;
    private final S3Proxy proxy;

    private InJvmS3(Path directory, S3Proxy proxy) {
        this.directory = directory;
        this.proxy = proxy;
    }

    /** Starts a server whose objects lie under {@code directory} (created; deleted at close). */
    static InJvmS3 start(Path directory) throws Exception {
        Files.createDirectories(directory);
        Properties p = new Properties();
        p.setProperty("jclouds.identity", ACCESS_KEY);
        p.setProperty("jclouds.credential", SECRET_KEY);
        p.setProperty("jclouds.filesystem.basedir", directory.toString());
        BlobStore blobs = BlobStores.create("filesystem", p);
        blobs.createContainer(BUCKET);
        S3Proxy proxy = S3Proxy.builder().blobStore(blobs).endpoint(URI.create("http://127.0.0.1:0"))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY).build();
        proxy.start();
        long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
        while (!"STARTED".equals(proxy.getState())) { // start() can return before Jetty accepts connections
            if (System.nanoTime() > deadline) {
                proxy.stop();
                throw new IllegalStateException("s3proxy did not start within 30 s: " + proxy.getState());
            }
            Thread.sleep(10);
        }
        return new InJvmS3(directory, proxy);
    }

    /** Returns the server's endpoint. */
    URI endpoint() {
        return URI.create("http://127.0.0.1:" + proxy.getPort());
    }

    /** Returns settings of an S3 store of this server's bucket under {@code prefix}, all else at its defaults. */
    S3StoreOptions.Builder storeOptions(String prefix) {
        return S3StoreOptions.builder(BUCKET).prefix(prefix).endpoint(endpoint()).pathStyle(true).region("us-east-1")
                .accessKey(ACCESS_KEY).secretKey(SECRET_KEY);
    }

    /** Stops the server and deletes its objects. */
    @Override
    public void close() throws Exception {
        proxy.stop();
        LocalCluster.deleteTree(directory);
    }
}
