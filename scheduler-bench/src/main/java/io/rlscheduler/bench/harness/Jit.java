package io.rlscheduler.bench.harness;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * The JIT compiler's activity, to tell when a warm-up is done: on 2 cores a compiler thread still
 * busy with the master's, workers' and clients' code takes a large share of the CPU the
 * measurement needs.
 */
final class Jit {

    private static final CompilationMXBean MX = ManagementFactory.getCompilationMXBean();

    /** Most warm-up rounds before measuring anyway. */
    static final int MAX_WARMUP_ROUNDS = 6;

    /** A round counts as settled when the JIT's CPU time was less than this share of its wall time. */
    static final double SETTLED_SHARE = 0.10;

    private Jit() {
    }

    /** Returns the JIT's accumulated compilation time in milliseconds (elapsed time of compile tasks). */
    static long compileMillis() {
        return MX != null && MX.isCompilationTimeMonitoringSupported() ? MX.getTotalCompilationTime() : 0;
    }

    /**
     * Returns the CPU time of the JIT compiler threads in milliseconds where /proc tells it, else
     * {@link #compileMillis()}: elapsed time of compile tasks, which a busy machine inflates.
     */
    static long cpuMillis() {
        Long nanos = JvmThreads.cpuNanos().get("JIT");
        return nanos != null ? nanos / 1_000_000 : compileMillis();
    }
}
