package io.rlscheduler.store.s3;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.Stream;

/** Files the tests write and remove. */
final class TestFiles {

    private TestFiles() {
    }

    /** Writes {@code size} pseudo-random bytes (from {@code seed}) to {@code file}. */
    static Path random(Path file, long size, long seed) throws IOException {
        Random random = new Random(seed);
        byte[] chunk = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long left = size; left > 0; left -= chunk.length) {
                random.nextBytes(chunk);
                out.write(chunk, 0, (int) Math.min(chunk.length, left));
            }
        }
        return file;
    }

    /** Deletes a directory and everything in it; nothing happens if it is not there. */
    static void deleteTree(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
