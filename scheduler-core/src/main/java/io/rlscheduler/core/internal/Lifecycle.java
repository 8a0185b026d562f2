package io.rlscheduler.core.internal;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of a runtime (a master or a worker), shaped as an
 * {@link java.util.concurrent.ExecutorService}'s: NEW, then RUNNING after {@link #start()}, then
 * SHUTDOWN once a stop begins, then TERMINATED once it has finished. Moves only forward; this is
 * its one writer. Thread-safe.
 */
public final class Lifecycle {

    /** A runtime's phase. */
    public enum Phase { NEW, RUNNING, SHUTDOWN, TERMINATED }

    /** What a request to stop found. */
    public enum Stop {
        /** The runtime was never started: it is terminated now, with nothing to stop. */
        NEVER_STARTED,
        /** This call began the stop: the caller stops the runtime's parts, then calls {@link #terminated()}. */
        BEGUN,
        /** A stop had already begun (or ended): nothing to do. */
        ALREADY
    }

    private static final Logger log = LoggerFactory.getLogger(Lifecycle.class);

    private final String name;
    private final CountDownLatch terminated = new CountDownLatch(1);
    private Phase phase = Phase.NEW;

    /**
     * @param name the runtime as it appears in messages, such as "master m-1"
     */
    public Lifecycle(String name) {
        this.name = name;
    }

    /**
     * Moves NEW to RUNNING.
     *
     * @throws IllegalStateException if the runtime was already started (or stopped)
     */
    public synchronized void start() {
        if (phase != Phase.NEW) {
            throw new IllegalStateException(name + " was already started");
        }
        phase = Phase.RUNNING;
    }

    /** Moves to SHUTDOWN (or NEW straight to TERMINATED); returns what the call found. */
    public Stop beginStop() {
        synchronized (this) {
            if (phase == Phase.RUNNING) {
                phase = Phase.SHUTDOWN;
                return Stop.BEGUN;
            }
            if (phase != Phase.NEW) {
                return Stop.ALREADY;
            }
        }
        terminated();
        return Stop.NEVER_STARTED;
    }

    /**
     * Runs {@code stop} on a daemon thread of its own, then marks the runtime terminated whether
     * or not {@code stop} threw (what it throws is logged).
     */
    public void stopInBackground(String threadName, Runnable stop) {
        Thread stopper = new Thread(() -> {
            try {
                stop.run();
            } catch (RuntimeException e) {
                log.warn("error while stopping {}: {}", name, e.toString());
            } finally {
                terminated();
            }
        }, threadName);
        stopper.setDaemon(true);
        stopper.start();
    }

    /** Marks the runtime terminated and wakes {@link #awaitTermination} callers. Idempotent. */
    public void terminated() {
        synchronized (this) {
            phase = Phase.TERMINATED;
        }
        terminated.countDown();
    }

    /**
     * Throws unless RUNNING.
     *
     * @throws IllegalStateException "master m-1 is shutdown, not running"
     */
    public synchronized void requireRunning() {
        if (phase != Phase.RUNNING) {
            throw new IllegalStateException(name + " is " + phase.name().toLowerCase(java.util.Locale.ROOT)
                    + ", not running");
        }
    }

    /** Returns the current phase. */
    public synchronized Phase getPhase() {
        return phase;
    }

    /** Returns whether RUNNING. */
    public synchronized boolean isRunning() {
        return phase == Phase.RUNNING;
    }

    /** Returns whether a stop has begun (SHUTDOWN or TERMINATED). */
    public synchronized boolean isShutdown() {
        return phase == Phase.SHUTDOWN || phase == Phase.TERMINATED;
    }

    /** Returns whether the runtime has fully stopped. */
    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    /** Waits until terminated; returns whether that happened within {@code timeout}. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Waits up to {@code timeout} for termination, keeping the caller's interrupt status if it is
     * interrupted meanwhile; for {@code close()}.
     */
    public void awaitQuietly(Duration timeout) {
        try {
            awaitTermination(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
