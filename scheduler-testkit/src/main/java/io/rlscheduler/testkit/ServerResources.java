package io.rlscheduler.testkit;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link RedisExtension} keeps for one test class: the server and a Lettuce client for it.
 * Thread-safe; {@link #close()} is idempotent.
 */
final class ServerResources implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ServerResources.class);

    /** Reconnect quickly after a test restarts Redis: 1 ms doubling up to 500 ms. */
    private static final Delay RECONNECT_DELAY =
            Delay.exponential(Duration.ofMillis(1), Duration.ofMillis(500), 2, TimeUnit.MILLISECONDS);
    private static final int SCAN_BATCH = 1000;

    private final String ownerId;
    private final TestRedis server;
    private final ClientResources clientResources;
    private final RedisClient client;
    private boolean closed;

    private ServerResources(String ownerId, TestRedis server) {
        this.ownerId = ownerId;
        this.server = server;
        this.clientResources = ClientResources.builder()
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                .reconnectDelay(RECONNECT_DELAY)
                .build();
        this.client = RedisClient.create(clientResources, server.getUri());
    }

    /** Gets a server ({@link TestRedis#fromEnvironment()}) and a client for it. */
    static ServerResources open(String ownerId) {
        TestRedis server = TestRedis.fromEnvironment();
        try {
            return new ServerResources(ownerId, server);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    String ownerId() {
        return ownerId;
    }

    TestRedis server() {
        return server;
    }

    RedisClient client() {
        return client;
    }

    /** Restarts a server that a test left stopped or killed, so the next test finds it up. */
    void ensureRunning() {
        if (!server.isRunning()) {
            log.info("A test left {} down; restarting it for the next test", server);
            server.restart();
        }
    }

    /** Unlinks every key matching {@link RedisNamespace#keyPattern()}; returns how many. */
    long deleteKeys(RedisNamespace namespace) {
        long deleted = 0;
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> commands = connection.sync();
            ScanArgs args = ScanArgs.Builder.matches(namespace.keyPattern()).limit(SCAN_BATCH);
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = commands.scan(cursor, args);
                if (!page.getKeys().isEmpty()) {
                    deleted += commands.unlink(page.getKeys().toArray(new String[0]));
                }
                cursor = page;
            } while (!cursor.isFinished());
        }
        return deleted;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            clientResources.shutdown(0, 2, TimeUnit.SECONDS);
        } finally {
            server.close();
        }
    }
}
