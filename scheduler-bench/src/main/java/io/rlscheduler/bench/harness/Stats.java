package io.rlscheduler.bench.harness;

import java.util.Arrays;

/** Percentiles of a sample of durations in nanoseconds (nearest-rank). */
public final class Stats {

    private final long[] sorted;

    /** Takes a copy of the samples; at least one. */
    public Stats(long[] samplesNanos) {
        if (samplesNanos.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        this.sorted = samplesNanos.clone();
        Arrays.sort(sorted);
    }

    /** Returns the number of samples. */
    public int count() {
        return sorted.length;
    }

    /** Returns the p-th percentile (0 < p <= 100), nearest rank, in milliseconds. */
    public double percentileMillis(double p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
    }

    /** Returns the largest sample in milliseconds. */
    public double maxMillis() {
        return sorted[sorted.length - 1] / 1e6;
    }

    /** Returns the mean in milliseconds. */
    public double meanMillis() {
        double sum = 0;
        for (long v : sorted) {
            sum += v;
        }
        return sum / sorted.length / 1e6;
    }

    /** Rounds to 3 decimals, for reporting. */
    public static double round3(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }

    /** Rounds to 1 decimal, for reporting. */
    public static double round1(double v) {
        return Math.round(v * 10.0) / 10.0;
    }
}
