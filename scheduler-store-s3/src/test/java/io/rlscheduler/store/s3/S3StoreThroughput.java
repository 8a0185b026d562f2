package io.rlscheduler.store.s3;

import io.rlscheduler.store.StoredObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;

/**
 * Prints rough put and get throughput of one large file against s3proxy's filesystem backend in
 * this JVM, with the store's default settings (a figure, not a test: client and server share the
 * machine's cores and disk). Arguments: the file size in MiB (default 256) and the rounds (default 3).
 * One JSON line per round.
 */
public final class S3StoreThroughput {

    private S3StoreThroughput() {
    }

    public static void main(String[] args) throws Exception {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 256;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Path dir = Files.createTempDirectory("s3-throughput");
        try (S3ProxyServer server = S3ProxyServer.start(S3ProxyServer.Backend.FILESYSTEM)) {
            Path source = TestFiles.random(dir.resolve("source.bin"), mib << 20, 1);
            System.out.printf("{\"sha256MiBPerSecond\":%.0f}%n", hashRate(source, mib));
            try (S3Store store = server.store("bench")) {
                for (int round = 1; round <= rounds; round++) {
                    long t0 = System.nanoTime();
                    StoredObject put = store.put("bench/source.bin", source);
                    long t1 = System.nanoTime();
                    StoredObject got = store.get("bench/source.bin", dir.resolve("back.bin"));
                    long t2 = System.nanoTime();
                    if (!got.getSha256().equals(put.getSha256())) {
                        throw new IllegalStateException("digests differ: " + put + " / " + got);
                    }
                    System.out.printf("{\"round\":%d,\"mib\":%d,\"putMiBPerSecond\":%.0f,\"getMiBPerSecond\":%.0f}%n",
                            round, mib, mib / ((t1 - t0) / 1e9), mib / ((t2 - t1) / 1e9));
                }
            }
        } finally {
            TestFiles.deleteTree(dir);
        }
    }

    private static double hashRate(Path file, long mib) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        byte[] b = new byte[1 << 20];
        long t0 = System.nanoTime();
        try (var in = Files.newInputStream(file)) {
            for (int n; (n = in.read(b)) > 0; ) {
                digest.update(b, 0, n);
            }
        }
        return mib / ((System.nanoTime() - t0) / 1e9);
    }
}
