package io.rlscheduler.master.internal.log;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The log manager's threads: named daemon threads, and a bounded wait for a pool to stop. */
final class LogThreads {

    private static final Logger log = LoggerFactory.getLogger(LogThreads.class);
    private static final long CLOSE_TIMEOUT_MILLIS = 10_000;

    private LogThreads() {
    }

    /** Returns a factory of daemon threads named {@code <prefix>1}, {@code <prefix>2}, ... */
    static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * Waits up to 10 s for a shut-down pool to finish, then interrupts its threads.
     *
     * @return whether the calling thread was interrupted meanwhile (the caller restores the flag)
     */
    static boolean awaitTermination(ExecutorService executor, String what) {
        try {
            if (!executor.awaitTermination(CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                log.warn("{} threads did not stop within {} ms; interrupting them", what, CLOSE_TIMEOUT_MILLIS);
                executor.shutdownNow();
            }
            return false;
        } catch (InterruptedException e) {
            executor.shutdownNow();
            return true;
        }
    }
}
