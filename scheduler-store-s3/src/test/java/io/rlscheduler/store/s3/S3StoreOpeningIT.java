package io.rlscheduler.store.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.ArtifactStores;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Opening S3 stores by URI through {@link ArtifactStores#open}, as masters and workers do. */
class S3StoreOpeningIT {

    @RegisterExtension
    static final S3ProxyServer server = S3ProxyServer.of(S3ProxyServer.Backend.TRANSIENT);

    private static Map<String, String> credentials() {
        return Map.of(S3StoreOptions.ACCESS_KEY, S3ProxyServer.ACCESS_KEY, S3StoreOptions.SECRET_KEY, S3ProxyServer.SECRET_KEY);
    }

    @Test
    void aStoreOpensFromItsUriWithCredentialsInTheSettingsAndItsUriOpensItAgain() throws Exception {
        String uri = "s3://" + S3ProxyServer.BUCKET + "/lab/runs?endpoint=" + server.endpoint() + "&path-style=true";
        try (ArtifactStore store = ArtifactStores.open(uri, credentials())) {
            assertThat(store).isInstanceOf(S3Store.class);
            store.put("t-1/manifest.json", "{}".getBytes(StandardCharsets.UTF_8));
            assertThat(server.blobs().blobExists(S3ProxyServer.BUCKET, "lab/runs/t-1/manifest.json")).isTrue();

            URI told = store.getUri();
            assertThat(told.toString()).doesNotContain(S3ProxyServer.SECRET_KEY).doesNotContain(S3ProxyServer.ACCESS_KEY)
                    .startsWith("s3://" + S3ProxyServer.BUCKET + "/lab/runs?");
            try (ArtifactStore again = ArtifactStores.open(told, credentials()); InputStream in = again.open("t-1/manifest.json")) {
                assertThat(in.readAllBytes()).isEqualTo("{}".getBytes(StandardCharsets.UTF_8));
                assertThat(again.getUri()).isEqualTo(told);
            }
        }
    }

    @Test
    void unknownSettingsAndBadValuesAreRefusedBeforeAnyRequest() {
        String uri = "s3://" + S3ProxyServer.BUCKET + "/p?endpoint=" + server.endpoint();
        assertThatThrownBy(() -> ArtifactStores.open(uri + "&colour=red", credentials()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown setting 'colour'");
        assertThatThrownBy(() -> ArtifactStores.open(uri, Map.of("part-size", "1MiB")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("part-size");
        assertThatThrownBy(() -> ArtifactStores.open(uri, Map.of("access-key", "only-one")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("secret-key");
        assertThatThrownBy(() -> ArtifactStores.open("s3://" + S3ProxyServer.ACCESS_KEY + ":" + S3ProxyServer.SECRET_KEY
                + "@" + S3ProxyServer.BUCKET + "/p", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("carries no credentials")
                .hasMessageNotContaining(S3ProxyServer.SECRET_KEY);
    }
}
