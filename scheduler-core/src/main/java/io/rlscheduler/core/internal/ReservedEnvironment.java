package io.rlscheduler.core.internal;

/**
 * The one rule for environment variable names a task may not set, because the scheduler sets
 * them for every attempt: {@code CUDA_VISIBLE_DEVICES} and {@code CUDA_DEVICE_ORDER} (its GPUs)
 * and every name starting with {@code RLS_} (its run, checkpoint and parameter paths). The master
 * refuses such a spec at submission; the worker applies the same rule before it starts a process.
 */
public final class ReservedEnvironment {

    /** The variable naming the attempt's GPUs. */
    public static final String CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES";
    /** The variable that makes GPU ids mean what nvidia-smi lists. */
    public static final String CUDA_DEVICE_ORDER = "CUDA_DEVICE_ORDER";
    /** The prefix of the scheduler's own variables. */
    public static final String PREFIX = "RLS_";

    private ReservedEnvironment() {
    }

    /** Returns whether the scheduler sets a variable of this name itself. */
    public static boolean isReserved(String name) {
        return name.equals(CUDA_VISIBLE_DEVICES) || name.equals(CUDA_DEVICE_ORDER) || name.startsWith(PREFIX);
    }

    /** Describes the rule, for error messages. */
    public static String describe() {
        return "the scheduler sets " + CUDA_VISIBLE_DEVICES + ", " + CUDA_DEVICE_ORDER + " and every " + PREFIX
                + "* variable itself";
    }
}
