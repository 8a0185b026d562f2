package io.rlscheduler.store.s3;

import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.gaul.s3proxy.BlobStores;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real S3 server in the test JVM: s3proxy on a free port of the loopback interface, with one
 * bucket, its blob store in memory or in a directory of its own and observed
 * ({@link ObservedBlobStore}). Register it as an extension ({@code @RegisterExtension}) for one
 * server per test class, started before its first test and stopped after its last; or
 * {@link #start} and {@link #close} it. It can be stopped and started again on the same port
 * with the same objects.
 */
public final class S3ProxyServer implements BeforeAllCallback, AfterAllCallback, AutoCloseable {

    public static final String BUCKET = "rls-test";
    public static final String ACCESS_KEY = "rls-test-access";
    public static final String SECRET_KEY = "rls-test-secret-0123456789";

    /** The s3proxy backends the tests run on. */
    public enum Backend { TRANSIENT, FILESYSTEM }

    private final Backend backend;
    private Path directory;
    private ObservedBlobStore blobs;
    private S3Proxy proxy;
    private int port;

    private S3ProxyServer(Backend backend) {
        this.backend = backend;
    }

    /** Returns a server of that backend, started when its test class starts. */
    public static S3ProxyServer of(Backend backend) {
        return new S3ProxyServer(backend);
    }

    /** Starts a server now. */
    public static S3ProxyServer start(Backend backend) throws Exception {
        S3ProxyServer server = new S3ProxyServer(backend);
        server.start();
        return server;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    private void start() throws Exception {
        directory = Files.createTempDirectory("s3proxy");
        Properties p = new Properties();
        p.setProperty("jclouds.identity", ACCESS_KEY);
        p.setProperty("jclouds.credential", SECRET_KEY);
        p.setProperty("jclouds.filesystem.basedir", directory.toString());
        blobs = new ObservedBlobStore(BlobStores.create(backend == Backend.TRANSIENT ? "transient" : "filesystem", p));
        blobs.createContainer(BUCKET);
        startOn(0);
    }

    private void startOn(int wanted) throws Exception {
        proxy = S3Proxy.builder()
                .blobStore(blobs)
                .endpoint(URI.create("http://127.0.0.1:" + wanted))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                .build();
        proxy.start();
        // start() can return before Jetty accepts connections.
        S3Proxy started = proxy;
        await().atMost(Duration.ofSeconds(30)).until(() -> "STARTED".equals(started.getState()));
        port = proxy.getPort();
    }

    /** Returns the server's endpoint. */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    ObservedBlobStore blobs() {
        return blobs;
    }

    /** Returns the URI of this server's bucket under {@code prefix}, with the endpoint and path style in its query (no credentials). */
    public String uri(String prefix) {
        return "s3://" + BUCKET + "/" + prefix + "?endpoint=" + endpoint() + "&path-style=true&region=us-east-1";
    }

    /** Returns settings that reach this server's bucket under {@code prefix}, all else at its default. */
    public S3StoreOptions.Builder options(String prefix) {
        return S3StoreOptions.builder(BUCKET).prefix(prefix).endpoint(endpoint()).pathStyle(true).region("us-east-1")
                .accessKey(ACCESS_KEY).secretKey(SECRET_KEY);
    }

    /** Returns a store of this server's bucket under {@code prefix}. */
    public S3Store store(String prefix) {
        return S3Store.open(options(prefix).build());
    }

    /** Stops the server: its port refuses connections until {@link #restart()}. */
    public void stop() throws Exception {
        proxy.stop();
        S3Proxy stopped = proxy;
        await().atMost(Duration.ofSeconds(30)).until(() -> "STOPPED".equals(stopped.getState()));
    }

    /** Starts the server again, on the same port, with the objects it had. */
    public void restart() throws Exception {
        startOn(port);
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        try {
            blobs.reset();
            proxy.stop();
            TestFiles.deleteTree(directory);
        } catch (Exception e) {
            throw new IllegalStateException("s3proxy did not stop cleanly", e);
        }
    }
}
