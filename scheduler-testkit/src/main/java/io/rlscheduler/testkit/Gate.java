package io.rlscheduler.testkit;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds a thread at a point the test picks (an event listener, a callback) until the test lets it
 * go: the held thread calls {@link #hold()}, the test {@link #awaitHeld} and later
 * {@link #release()}. One-shot; thread-safe. A held thread goes on by itself after 60 s, so a
 * failed test never leaves it stuck.
 */
public final class Gate {

    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    /** Blocks the calling thread until {@link #release()} (at most 60 s); at once after it. */
    public void hold() {
        held.countDown();
        try {
            released.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until a thread is held, at most {@code timeout}; returns whether one is. */
    public boolean awaitHeld(Duration timeout) throws InterruptedException {
        return held.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets the held thread, and any later one, go on. */
    public void release() {
        released.countDown();
    }
}
