package io.rlscheduler.core.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Thread factories of the runtimes' pools: daemon threads (a pool left behind never keeps a JVM
 * alive), named {@code <name>-1}, {@code <name>-2}, ... so that a thread dump says whose they are.
 */
public final class DaemonThreads {

    private DaemonThreads() {
    }

    /** Returns a factory of daemon threads named {@code <name>-<n>}, n counting from 1. */
    public static ThreadFactory named(String name) {
        AtomicLong n = new AtomicLong();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
