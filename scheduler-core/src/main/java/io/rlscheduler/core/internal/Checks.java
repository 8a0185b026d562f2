package io.rlscheduler.core.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * Range checks for option setters, shared by every options builder so that a setting is refused
 * in the setter, with one wording, instead of failing later in {@code start()} or mid-call.
 */
public final class Checks {

    private Checks() {
    }

    /**
     * Returns {@code d} if it lies in {@code [min, max]}.
     *
     * @throws NullPointerException     if {@code d} is null
     * @throws IllegalArgumentException "name must be 1ms to 1h, was PT2H" otherwise
     */
    public static Duration range(Duration d, Duration min, Duration max, String name) {
        Objects.requireNonNull(d, name);
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be " + human(min) + " to " + human(max) + ", was " + d);
        }
        return d;
    }

    /**
     * Returns {@code value} if it lies in {@code [min, max]}.
     *
     * @throws IllegalArgumentException "name must be between min and max, was value" otherwise
     */
    public static int range(int value, int min, int max, String name) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
        }
        return value;
    }

    /**
     * Returns {@code value} if it lies in {@code [min, max]}.
     *
     * @throws IllegalArgumentException "name must be between min and max, was value" otherwise
     */
    public static long range(long value, long min, long max, String name) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
        }
        return value;
    }

    /** Returns a duration as "10s", "1h", "500ms". */
    static String human(Duration d) {
        return d.toString().substring(2).toLowerCase(Locale.ROOT);
    }
}
