package io.rlscheduler.bench;

import io.rlscheduler.redis.embedded.RedisServerBinary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Copies the redis-server executable that the benchmarks start ({@link RedisServerBinary}: the one
 * embedded-redis ships for this OS and architecture, or the override in
 * {@code REDIS_SERVER_BINARY}) to a file, and prints its version. {@code scripts/bullmq-compare.sh}
 * runs BullMQ and dispatch-throughput on one server started from this copy, so both measure the
 * same Redis build; the binary the library extracts itself is deleted when this JVM exits.
 *
 * <pre>
 * java -cp scheduler-bench/target/benchmarks.jar io.rlscheduler.bench.RedisServerCopy DEST
 * </pre>
 */
public final class RedisServerCopy {

    private RedisServerCopy() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: RedisServerCopy DEST");
            System.exit(2);
        }
        Path dest = Path.of(args[0]);
        Files.copy(RedisServerBinary.path(), dest, StandardCopyOption.REPLACE_EXISTING);
        if (!dest.toFile().setExecutable(true, true)) {
            throw new IllegalStateException("cannot make " + dest + " executable");
        }
        System.out.println(RedisServerBinary.version());
    }
}
