package io.rlscheduler.redis.embedded;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Stops every {@link EmbeddedRedis} still open when the JVM exits normally or on SIGTERM, so that
 * no redis-server outlives the application that started it. (A JVM killed with SIGKILL runs no
 * hook.) One hook for all servers, added with the first registration. Thread-safe.
 */
final class ExitHook {

    private static final Set<EmbeddedRedis> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ExitHook::stopAll, "embedded-redis-exit"));
    }

    private ExitHook() {
    }

    static void register(EmbeddedRedis server) {
        OPEN.add(server);
    }

    static void unregister(EmbeddedRedis server) {
        OPEN.remove(server);
    }

    private static void stopAll() {
        for (EmbeddedRedis server : OPEN) {
            try {
                server.stopAtExit();
            } catch (RuntimeException e) {
                // Best effort while the JVM goes down; nothing is left to report to.
            }
        }
    }
}
