package io.rlscheduler.core;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * An owner's limits and share, or the lab's defaults for every owner (docs/operations.md, "Sharing
 * the GPUs"). Each limit is either set or not; an owner's own value wins over the lab's default,
 * and a limit set in neither does not apply. Immutable; made with {@link #builder()}.
 *
 * <ul>
 *   <li>{@code maxGpus}: GPUs its tasks hold at once. A task waits while it would pass it; a
 *       submission asking for more can never run and is refused.</li>
 *   <li>{@code maxRunning}: its tasks held by workers at once.</li>
 *   <li>{@code maxQueued}: its tasks in the queue; a submission past it is refused.</li>
 *   <li>{@code maxGpusPerTask}: GPUs one task may ask for; a submission past it is refused.</li>
 *   <li>{@code rate} and {@code burst}: submissions per second, and how many may come at once
 *       (default: the rate, at least 1); a submission past them is refused with a time to retry.</li>
 *   <li>{@code weight}: its share against other owners' (default 1): an owner of weight 2 gets
 *       twice the usage of one of weight 1 before the other goes first.</li>
 * </ul>
 * Lowering a limit never stops running work: it applies from the next claim or submission on.
 */
public final class OwnerLimits {

    private static final OwnerLimits NONE = builder().build();

    private final Integer maxGpus;
    private final Integer maxRunning;
    private final Integer maxQueued;
    private final Integer maxGpusPerTask;
    private final Double rate;
    private final Integer burst;
    private final Double weight;

    private OwnerLimits(Builder b) {
        this.maxGpus = b.maxGpus;
        this.maxRunning = b.maxRunning;
        this.maxQueued = b.maxQueued;
        this.maxGpusPerTask = b.maxGpusPerTask;
        this.rate = b.rate;
        this.burst = b.burst;
        this.weight = b.weight;
    }

    /** Returns limits with nothing set. */
    public static OwnerLimits none() {
        return NONE;
    }

    /** Returns a builder with nothing set. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns a builder holding these limits. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxGpus = maxGpus;
        b.maxRunning = maxRunning;
        b.maxQueued = maxQueued;
        b.maxGpusPerTask = maxGpusPerTask;
        b.rate = rate;
        b.burst = burst;
        b.weight = weight;
        return b;
    }

    public OptionalInt getMaxGpus() { return opt(maxGpus); }
    public OptionalInt getMaxRunning() { return opt(maxRunning); }
    public OptionalInt getMaxQueued() { return opt(maxQueued); }
    public OptionalInt getMaxGpusPerTask() { return opt(maxGpusPerTask); }
    public OptionalDouble getRate() { return rate == null ? OptionalDouble.empty() : OptionalDouble.of(rate); }
    public OptionalInt getBurst() { return opt(burst); }
    public OptionalDouble getWeight() { return weight == null ? OptionalDouble.empty() : OptionalDouble.of(weight); }

    /** Returns these limits with each one not set here taken from {@code defaults}. */
    public OwnerLimits orElse(OwnerLimits defaults) {
        Builder b = toBuilder();
        b.maxGpus = pick(maxGpus, defaults.maxGpus);
        b.maxRunning = pick(maxRunning, defaults.maxRunning);
        b.maxQueued = pick(maxQueued, defaults.maxQueued);
        b.maxGpusPerTask = pick(maxGpusPerTask, defaults.maxGpusPerTask);
        b.rate = pick(rate, defaults.rate);
        b.burst = pick(burst, defaults.burst);
        b.weight = pick(weight, defaults.weight);
        return b.build();
    }

    /** Returns the value of one limit, if set. */
    public Optional<Double> get(OwnerLimit limit) {
        Number v;
        switch (limit) {
            case MAX_GPUS: v = maxGpus; break;
            case MAX_RUNNING: v = maxRunning; break;
            case MAX_QUEUED: v = maxQueued; break;
            case MAX_GPUS_PER_TASK: v = maxGpusPerTask; break;
            default: v = rate; break;
        }
        return v == null ? Optional.empty() : Optional.of(v.doubleValue());
    }

    private static <T> T pick(T own, T fallback) {
        return own != null ? own : fallback;
    }

    private static OptionalInt opt(Integer v) {
        return v == null ? OptionalInt.empty() : OptionalInt.of(v);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof OwnerLimits)) {
            return false;
        }
        OwnerLimits x = (OwnerLimits) o;
        return Objects.equals(maxGpus, x.maxGpus) && Objects.equals(maxRunning, x.maxRunning)
                && Objects.equals(maxQueued, x.maxQueued) && Objects.equals(maxGpusPerTask, x.maxGpusPerTask)
                && Objects.equals(rate, x.rate) && Objects.equals(burst, x.burst) && Objects.equals(weight, x.weight);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxGpus, maxRunning, maxQueued, maxGpusPerTask, rate, burst, weight);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("OwnerLimits{");
        append(s, "maxGpus", maxGpus);
        append(s, "maxRunning", maxRunning);
        append(s, "maxQueued", maxQueued);
        append(s, "maxGpusPerTask", maxGpusPerTask);
        append(s, "rate", rate);
        append(s, "burst", burst);
        append(s, "weight", weight);
        return s.append('}').toString();
    }

    private static void append(StringBuilder s, String name, Object v) {
        if (v != null) {
            s.append(s.charAt(s.length() - 1) == '{' ? "" : ", ").append(name).append('=').append(v);
        }
    }

    /** Builds {@link OwnerLimits}; each setter takes null to leave the limit unset. */
    public static final class Builder {
        private Integer maxGpus;
        private Integer maxRunning;
        private Integer maxQueued;
        private Integer maxGpusPerTask;
        private Double rate;
        private Integer burst;
        private Double weight;

        private Builder() {
        }

        /** GPUs held at once, 0 or more (0: GPU tasks of the owner never run). */
        public Builder maxGpus(Integer v) { maxGpus = atLeast(v, 0, "maxGpus"); return this; }
        /** Tasks held by workers at once, 0 or more. */
        public Builder maxRunning(Integer v) { maxRunning = atLeast(v, 0, "maxRunning"); return this; }
        /** Tasks in the queue, 0 or more. */
        public Builder maxQueued(Integer v) { maxQueued = atLeast(v, 0, "maxQueued"); return this; }
        /** GPUs one task may ask for, 0 or more. */
        public Builder maxGpusPerTask(Integer v) { maxGpusPerTask = atLeast(v, 0, "maxGpusPerTask"); return this; }

        /** Submissions per second, above 0 and at most 1,000,000. */
        public Builder rate(Double v) {
            if (v != null && !(v > 0 && v <= 1_000_000)) {
                throw new IllegalArgumentException("rate must be above 0 and at most 1000000 a second, was " + v);
            }
            rate = v;
            return this;
        }

        /** Submissions that may come at once, 1 or more (default: the rate, at least 1). */
        public Builder burst(Integer v) { burst = atLeast(v, 1, "burst"); return this; }

        /** The owner's share, above 0 and at most 1,000,000 (default 1). */
        public Builder weight(Double v) {
            if (v != null && !(v > 0 && v <= 1_000_000)) {
                throw new IllegalArgumentException("weight must be above 0 and at most 1000000, was " + v);
            }
            weight = v;
            return this;
        }

        private static Integer atLeast(Integer v, int min, String name) {
            if (v != null && v < min) {
                throw new IllegalArgumentException(name + " must be at least " + min + ", was " + v);
            }
            return v;
        }

        public OwnerLimits build() {
            return new OwnerLimits(this);
        }
    }
}
