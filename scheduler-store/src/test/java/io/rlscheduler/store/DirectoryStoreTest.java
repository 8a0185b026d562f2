package io.rlscheduler.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DirectoryStoreTest extends ArtifactStoreContract {

    private DirectoryStore store;

    @BeforeEach
    void open() {
        store = new DirectoryStore(temp.resolve("store"));
    }

    @Override
    protected ArtifactStore store() {
        return store;
    }

    @Override
    protected String prefix() {
        return "p";
    }

    @Test
    void objectsAreWrittenAsideAndMovedIntoPlaceLeavingNoPartBehind() {
        store.put("p/a/b", "x".getBytes(StandardCharsets.UTF_8));
        assertThat(store.getRoot().resolve("p/a/b")).hasContent("x");
        assertThat(store.getRoot().resolve(DirectoryStore.INCOMING)).isEmptyDirectory();
        assertThat(store.list("")).extracting(StoredObject::getKey).containsExactly("p/a/b");
    }

    @Test
    void aKeyWhosePathHasALinkInItIsRefusedAndNothingLandsThroughIt() throws Exception {
        Path outside = Files.createDirectory(temp.resolve("outside"));
        Files.createDirectories(store.getRoot().resolve("p"));
        Files.createSymbolicLink(store.getRoot().resolve("p/evil"), outside);
        assertThatThrownBy(() -> store.put("p/evil/x", new byte[] {1})).isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("not a plain directory");
        assertThat(outside).isEmptyDirectory();
        assertThat(store.getRoot().resolve(DirectoryStore.INCOMING)).isEmptyDirectory();
    }

    @Test
    void deletingTheLastObjectOfADirectoryRemovesTheEmptyDirectories() {
        store.put("p/t/1/2/3", new byte[] {1});
        store.delete("p/t/1/2/3");
        assertThat(store.getRoot().resolve("p")).doesNotExist();
        assertThat(store.getRoot()).isDirectory();
    }

    @Test
    void storesOpenByUriAndSayWhatIsMissing() {
        URI uri = store.getUri();
        try (ArtifactStore again = ArtifactStores.open(uri, Map.of())) {
            store.put("p/seen", new byte[] {7});
            assertThat(again.stat("p/seen")).isPresent();
            assertThat(again.getUri()).isEqualTo(uri);
        }
        try (ArtifactStore plain = ArtifactStores.open(temp.resolve("plain").toString(), Map.of(ArtifactStores.FSYNC, "false"))) {
            assertThat(plain).isInstanceOf(DirectoryStore.class);
            assertThat(((DirectoryStore) plain).getRoot()).isEqualTo(temp.resolve("plain").toAbsolutePath());
        }
        assertThatThrownBy(() -> ArtifactStores.open("s3://bucket/prefix", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scheduler-store-s3");
        assertThatThrownBy(() -> ArtifactStores.open("gopher://x/y", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no artifact store for 'gopher:'");
        assertThatThrownBy(() -> ArtifactStores.open(store.getUri() + "?colour=red", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown setting 'colour'");
        assertThatThrownBy(() -> ArtifactStores.open(store.getUri().toString(), Map.of(ArtifactStores.FSYNC, "maybe")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fsync must be true or false");
    }

    @Test
    void theKeyRuleNamesWhatIsWrong() {
        assertThat(StoreKeys.isValid("tasks/t-1/checkpoints/e3-1/model.pt")).isTrue();
        assertThat(StoreKeys.isValidSegment("a/b")).isFalse();
        assertThat(StoreKeys.isValidSegment("..")).isFalse();
        assertThat(StoreKeys.isValidSegment(".tfevents")).isTrue();
        assertThatThrownBy(() -> StoreKeys.check("a/../b")).hasMessageContaining("a '..' segment");
        assertThatThrownBy(() -> StoreKeys.check("a/" + "x".repeat(256))).hasMessageContaining("longer than 255 bytes");
        assertThatThrownBy(() -> StoreKeys.check("x".repeat(1025))).hasMessageContaining("longer than 1024 bytes");
        assertThatThrownBy(() -> StoreKeys.check("a\u0000b")).hasMessageContaining("\\x00");
        assertThatThrownBy(() -> StoreKeys.check("a\ud800b")).hasMessageContaining("unpaired surrogate");
        assertThat(StoreKeys.join("tasks", "t", "x")).isEqualTo("tasks/t/x");
    }
}
