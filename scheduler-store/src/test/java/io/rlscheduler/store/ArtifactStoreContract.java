package io.rlscheduler.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link ArtifactStore} must do, run by each store's module against a real store of
 * its kind (a directory, an S3 server): a subclass returns a fresh, empty store per test, or one
 * whose keys under {@link #prefix()} are its own.
 */
public abstract class ArtifactStoreContract {

    @TempDir
    protected Path temp;

    /** Returns the store under test. */
    protected abstract ArtifactStore store();

    /** Returns a key prefix no other test uses (stores shared by a test class). */
    protected abstract String prefix();

    private String key(String rest) {
        return prefix() + "/" + rest;
    }

    protected static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    protected static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aFileStoredComesBackWithTheSameBytesAndDigest() throws Exception {
        byte[] data = randomBytes(3 * 1024 * 1024 + 17, 1);
        Path src = Files.write(temp.resolve("src.bin"), data);
        StoredObject put = store().put(key("a/model.bin"), src);
        assertThat(put.getSize()).isEqualTo(data.length);
        assertThat(put.getSha256()).isEqualTo(sha256(data));

        Path back = temp.resolve("back.bin");
        StoredObject got = store().get(key("a/model.bin"), back);
        assertThat(Files.readAllBytes(back)).isEqualTo(data);
        assertThat(got.getSha256()).isEqualTo(put.getSha256());
        assertThat(store().stat(key("a/model.bin"))).hasValueSatisfying(o -> assertThat(o.getSize()).isEqualTo(data.length));
        try (InputStream in = store().open(key("a/model.bin"))) {
            assertThat(in.readAllBytes()).isEqualTo(data);
        }
    }

    @Test
    void anEmptyObjectAndBytesAreStoredToo() throws Exception {
        assertThat(store().put(key("empty"), new byte[0]).getSize()).isZero();
        assertThat(store().stat(key("empty"))).hasValueSatisfying(o -> assertThat(o.getSize()).isZero());
        byte[] json = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);
        assertThat(store().put(key("m.json"), json).getSha256()).isEqualTo(sha256(json));
        try (InputStream in = store().open(key("m.json"))) {
            assertThat(in.readAllBytes()).isEqualTo(json);
        }
    }

    @Test
    void writingAKeyAgainReplacesItsObjectAndGetReplacesTheTarget() throws Exception {
        store().put(key("x"), "one".getBytes(StandardCharsets.UTF_8));
        store().put(key("x"), "second".getBytes(StandardCharsets.UTF_8));
        Path target = Files.writeString(temp.resolve("t"), "old and longer content");
        store().get(key("x"), target);
        assertThat(Files.readString(target)).isEqualTo("second");
        assertThat(store().list(prefix())).extracting(StoredObject::getKey).containsExactly(key("x"));
    }

    @Test
    void aMissingKeyIsATypedErrorOrEmpty() {
        assertThatThrownBy(() -> store().open(key("nothing"))).isInstanceOf(ArtifactNotFoundException.class)
                .hasMessageContaining("nothing");
        assertThatThrownBy(() -> store().get(key("nothing"), temp.resolve("t"))).isInstanceOf(ArtifactNotFoundException.class);
        assertThat(temp.resolve("t")).doesNotExist();
        assertThat(store().stat(key("nothing"))).isEmpty();
        assertThat(store().list(key("nothing"))).isEmpty();
    }

    @Test
    void listingNamesWhatIsUnderAPrefixInKeyOrderAndNothingBeside() {
        for (String k : List.of("t/b/2", "t/a", "t/b/1", "tt/x", "t2")) {
            store().put(key(k), k.getBytes(StandardCharsets.UTF_8));
        }
        assertThat(store().list(key("t"))).extracting(StoredObject::getKey)
                .containsExactly(key("t/a"), key("t/b/1"), key("t/b/2"));
        assertThat(store().list(key("t/b"))).extracting(StoredObject::getSize).containsExactly(5L, 5L);
    }

    @Test
    void deletingIsIdempotentAndDeleteAllEmptiesAPrefix() {
        store().put(key("d/1"), new byte[] {1});
        store().put(key("d/2/3"), new byte[] {2});
        store().put(key("keep"), new byte[] {3});
        store().delete(key("d/1"));
        store().delete(key("d/1"));
        store().delete(key("never"));
        assertThat(store().list(key("d"))).extracting(StoredObject::getKey).containsExactly(key("d/2/3"));
        assertThat(store().deleteAll(key("d"))).isEqualTo(1);
        assertThat(store().deleteAll(key("d"))).isZero();
        assertThat(store().list(prefix())).extracting(StoredObject::getKey).containsExactly(key("keep"));
    }

    @Test
    void aSymbolicLinkIsNeverReadAsASource() throws IOException {
        Path secret = Files.writeString(temp.resolve("secret"), "not yours");
        Path link = Files.createSymbolicLink(temp.resolve("link"), secret);
        assertThatThrownBy(() -> store().put(key("l"), link)).isInstanceOf(UncheckedIOException.class);
        assertThat(store().stat(key("l"))).isEmpty();
    }

    @Test
    void invalidKeysAreRefusedBeforeAnythingIsWritten() {
        for (String bad : List.of("", "/abs", "a//b", "a/../b", "..", "a/./b", "a/b/", "a\\b", "a\nb", ".hidden/x")) {
            assertThatThrownBy(() -> store().put(bad, new byte[] {1})).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("invalid artifact key");
        }
        assertThat(store().list(prefix())).isEmpty();
    }

    @Test
    void unusualButValidNamesRoundTrip() throws Exception {
        String k = key("outputs/événements tf.events=1,2@x+y (copy)");
        store().put(k, "v".getBytes(StandardCharsets.UTF_8));
        assertThat(store().list(key("outputs"))).extracting(StoredObject::getKey).containsExactly(k);
        try (InputStream in = store().open(k)) {
            assertThat(in.readAllBytes()).isEqualTo("v".getBytes(StandardCharsets.UTF_8));
        }
    }
}
