package io.rlscheduler.testkit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Closes every {@link TestRedis} still open when the JVM exits normally or on SIGTERM, so an
 * aborted test run leaves no redis-server behind. (A JVM killed with SIGKILL runs no hook; its
 * servers then keep running until killed by hand.) Thread-safe.
 */
final class Reaper {

    private static final Set<TestRedis> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(Reaper::closeAll, "test-redis-reaper"));
    }

    private Reaper() {
    }

    static void register(TestRedis redis) {
        OPEN.add(redis);
    }

    static void unregister(TestRedis redis) {
        OPEN.remove(redis);
    }

    private static void closeAll() {
        for (TestRedis redis : OPEN) {
            try {
                redis.reap();
            } catch (RuntimeException e) {
                // Best effort while the JVM goes down; nothing is left to report to.
            }
        }
    }
}
