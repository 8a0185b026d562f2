package io.rlscheduler.bench.harness;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A fixed-capacity, lock-free record of durations in nanoseconds, written from any thread (event
 * loops, Redis client threads) and read once writing has stopped. Samples beyond the capacity are
 * counted, not kept.
 */
final class SampleRecorder {

    private final AtomicLongArray values;
    private final AtomicInteger next = new AtomicInteger();

    /** @param capacity the most samples kept */
    SampleRecorder(int capacity) {
        this.values = new AtomicLongArray(capacity);
    }

    /** Records one duration. */
    void add(long nanos) {
        int i = next.getAndIncrement();
        if (i >= 0 && i < values.length()) {
            values.set(i, nanos);
        }
    }

    /** Returns how many samples were offered, kept or not. */
    long offered() {
        int n = next.get();
        return n < 0 ? Integer.MAX_VALUE : n;
    }

    /** Returns how many samples did not fit. */
    long dropped() {
        return Math.max(0, offered() - values.length());
    }

    /** Returns the kept samples, or null if there are none. */
    Stats stats() {
        int n = (int) Math.min(offered(), values.length());
        if (n == 0) {
            return null;
        }
        long[] copy = new long[n];
        for (int i = 0; i < n; i++) {
            copy[i] = values.get(i);
        }
        return new Stats(copy);
    }
}
