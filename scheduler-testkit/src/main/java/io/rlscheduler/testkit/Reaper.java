package io.rlscheduler.testkit;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kills every {@link JvmProcess} still open when the JVM exits normally or on SIGTERM, so an
 * aborted test run leaves no child JVM behind. (A JVM killed with SIGKILL runs no hook; its
 * processes then keep running until killed by hand. A {@link TestRedis}'s server has a hook of
 * its own, in {@code EmbeddedRedis}.) Thread-safe.
 */
final class Reaper {

    private static final Map<Object, Runnable> OPEN = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(Reaper::closeAll, "testkit-reaper"));
    }

    private Reaper() {
    }

    static void register(JvmProcess process) {
        OPEN.put(process, process::reap);
    }

    static void unregister(Object owner) {
        OPEN.remove(owner);
    }

    private static void closeAll() {
        for (Runnable reap : OPEN.values()) {
            try {
                reap.run();
            } catch (RuntimeException e) {
                // Best effort while the JVM goes down; nothing is left to report to.
            }
        }
    }
}
