package io.rlscheduler.store.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.StoreUnavailableException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store that cannot be reached or refuses: every call fails with {@link StoreUnavailableException}
 * naming the bucket and key, within the client's timeouts (seconds, not minutes), and nothing is
 * left half written once the store is back.
 */
class S3StoreFailureIT {

    private static final long MIB = 1L << 20;
    /** Far more than the few seconds a refused connection takes with the client's retries; only a hang exceeds it. */
    private static final Duration NO_HANG = Duration.ofSeconds(30);

    @RegisterExtension
    static final S3ProxyServer server = S3ProxyServer.of(S3ProxyServer.Backend.TRANSIENT);

    @TempDir
    Path temp;

    /** Every call of the store, each expected to fail as the store is unavailable. */
    private List<Consumer<ArtifactStore>> everyCall(Path large) {
        return List.of(
                s -> s.put("k/bytes", new byte[] {1}),
                s -> s.put("k/large", large),
                s -> s.get("k/bytes", temp.resolve("target")),
                s -> s.open("k/bytes"),
                s -> s.stat("k/bytes"),
                s -> s.list("k"),
                s -> s.delete("k/bytes"),
                s -> s.deleteAll("k"));
    }

    private void assertEveryCallUnavailable(ArtifactStore store, String location) throws Exception {
        Path large = TestFiles.random(temp.resolve("large.bin"), 33 * MIB, 1);
        assertTimeoutPreemptively(NO_HANG, () -> {
            for (Consumer<ArtifactStore> call : everyCall(large)) {
                assertThatThrownBy(() -> call.accept(store)).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining(location);
            }
        });
        assertThat(temp.resolve("target")).doesNotExist();
        try (var names = Files.list(temp)) {
            assertThat(names).as("no part file left").containsExactly(large);
        }
    }

    @Test
    void anEndpointOnAClosedPortFailsEveryCallQuicklyAsUnavailable() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        URI endpoint = URI.create("http://127.0.0.1:" + closedPort);
        try (S3Store store = S3Store.open(server.options("down").endpoint(endpoint).build())) {
            assertEveryCallUnavailable(store, "s3://" + S3ProxyServer.BUCKET + "/down/k");
            assertThatThrownBy(() -> store.stat("k/x")).hasMessageContaining(endpoint.toString());
        }
    }

    @Test
    void aStoppedServerFailsCallsAndOnceBackHasNothingHalfWritten() throws Exception {
        try (S3Store store = server.store("restart")) {
            store.put("k/kept", new byte[] {7});
            Path large = TestFiles.random(temp.resolve("large.bin"), 33 * MIB, 2);
            server.stop();
            try {
                assertTimeoutPreemptively(NO_HANG, () -> {
                    assertThatThrownBy(() -> store.put("k/small", new byte[] {1})).isInstanceOf(StoreUnavailableException.class)
                            .hasMessageContaining("restart/k/small");
                    assertThatThrownBy(() -> store.put("k/large", large)).isInstanceOf(StoreUnavailableException.class)
                            .hasMessageContaining("restart/k/large");
                    assertThatThrownBy(() -> store.list("k")).isInstanceOf(StoreUnavailableException.class);
                });
            } finally {
                server.restart();
            }
            assertThat(store.list("k")).extracting(o -> o.getKey()).containsExactly("k/kept");
            assertThat(store.stat("k/large")).isEmpty();
            assertThat(server.blobs().listMultipartUploads(S3ProxyServer.BUCKET)).isEmpty();
            assertThat(store.put("k/large", large).getSize()).isEqualTo(33 * MIB);
        }
    }

    @Test
    void refusedCredentialsAreUnavailableNamingTheObject() throws Exception {
        try (S3Store store = S3Store.open(server.options("creds").secretKey("not-the-secret").build())) {
            assertEveryCallUnavailable(store, "s3://" + S3ProxyServer.BUCKET + "/creds/k");
            // The refusal's status, on a call that sends no body: s3proxy answers a put's 403 and
            // closes before reading the body, and the JDK's HTTP client, still writing it, then
            // reports the broken write ("Error writing request body") instead of the 403, now and
            // then. The put itself is refused as unavailable and named, above.
            assertThatThrownBy(() -> store.stat("k/x")).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("403").hasMessageContaining("creds/k/x");
        }
    }

    @Test
    void aMissingBucketIsUnavailableNotAMissingKey() throws Exception {
        try (S3Store store = S3Store.open(server.options("p").build().mutate().build())) {
            store.put("k", new byte[] {1});
        }
        S3StoreOptions missing = S3StoreOptions.builder("no-such-bucket").endpoint(server.endpoint()).region("us-east-1")
                .accessKey(S3ProxyServer.ACCESS_KEY).secretKey(S3ProxyServer.SECRET_KEY).build();
        try (S3Store store = S3Store.open(missing)) {
            assertEveryCallUnavailable(store, "s3://no-such-bucket/k");
            assertThatThrownBy(() -> store.stat("k/x")).hasMessageContaining("no bucket no-such-bucket");
        }
    }
}
