package io.rlscheduler.redis.embedded;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Stops every {@link EmbeddedRedis} still open when the JVM exits normally or on SIGTERM, so that
 * no redis-server outlives the application that started it. (A JVM killed with SIGKILL runs no
 * hook.) One hook for all servers, added with the first registration, so that a JVM whose servers
 * all opted out never gets one. Thread-safe.
 */
final class ExitHook {

    private static final Set<EmbeddedRedis> OPEN = ConcurrentHashMap.newKeySet();
    private static boolean added;

    private ExitHook() {
    }

    /** Stops {@code server} when the JVM exits, unless it is unregistered first; a no-op once the JVM is exiting. */
    static void register(EmbeddedRedis server) {
        synchronized (ExitHook.class) {
            if (!added) {
                try {
                    Runtime.getRuntime().addShutdownHook(new Thread(ExitHook::stopAll, "embedded-redis-exit"));
                } catch (IllegalStateException shuttingDown) {
                    return;
                }
                added = true;
            }
        }
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
