package io.rlscheduler.worker.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread, shared by every execution, for the short timed work of supervising processes:
 * escalating a stop, waiting for a group to empty. Its tasks only read {@code /proc} and send
 * signals, so one thread keeps up; being a daemon, it needs no shutdown.
 */
final class Supervisor {

    private static final Logger LOG = LoggerFactory.getLogger(Supervisor.class);

    private static final ScheduledThreadPoolExecutor TIMER = create();

    private Supervisor() {
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "rls-process-supervisor");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    static ScheduledFuture<?> schedule(Runnable task, long delayMillis) {
        return TIMER.schedule(guarded(task), Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
    }

    static void execute(Runnable task) {
        TIMER.execute(guarded(task));
    }

    /** A scheduled task's exception would vanish into its future: log it instead. */
    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                LOG.error("process supervision task failed", e);
            }
        };
    }
}
