package io.rlscheduler.bench.harness;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The checkpoint the artifact benchmarks move: {@code files} files of random bytes (incompressible,
 * as model weights are) of equal size in one directory, written once and forced to disk before
 * anything is measured, so that every variant reads them from a warm page cache and no write-back
 * of them runs during a measurement.
 *
 * @param dir   the directory holding them (and nothing else)
 * @param files the files, in name order
 * @param bytes their total size
 */
record CheckpointFiles(Path dir, List<Path> files, long bytes) {

    private static final int BUFFER = 1 << 20;

    /**
     * Writes {@code count} files of {@code totalBytes / count} bytes each into {@code dir}
     * ({@code model-0.bin}, ...), from a random generator seeded with {@code seed}.
     */
    static CheckpointFiles write(Path dir, int count, long totalBytes, long seed) throws IOException {
        Files.createDirectories(dir);
        long each = totalBytes / count;
        SplittableRandom random = new SplittableRandom(seed);
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
        List<Path> files = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Path file = dir.resolve(String.format(Locale.ROOT, "model-%d.bin", i));
            try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (long written = 0; written < each; ) {
                    buffer.clear();
                    while (buffer.remaining() >= Long.BYTES) {
                        buffer.putLong(random.nextLong());
                    }
                    buffer.flip();
                    buffer.limit((int) Math.min(buffer.limit(), each - written));
                    while (buffer.hasRemaining()) {
                        written += out.write(buffer);
                    }
                }
                out.force(true);
            }
            files.add(file);
        }
        return new CheckpointFiles(dir, List.copyOf(files), each * count);
    }

    /** Returns the size of one file. */
    long fileBytes() {
        return bytes / files.size();
    }

    /**
     * Reads every file through SHA-256 on {@code threads} threads at once (as the stores hash the
     * files they send) and returns the seconds it took: the digest's share of a transfer.
     */
    double hashSeconds(int threads) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long began = System.nanoTime();
            List<Future<byte[]>> digests = new ArrayList<>();
            for (Path f : files) {
                digests.add(pool.submit(() -> sha256(f)));
            }
            for (Future<byte[]> d : digests) {
                d.get();
            }
            return (System.nanoTime() - began) / 1e9;
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] sha256(Path file) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            while (in.read(buffer.clear()) >= 0) {
                digest.update(buffer.array(), 0, buffer.position());
            }
        }
        return digest.digest();
    }
}
