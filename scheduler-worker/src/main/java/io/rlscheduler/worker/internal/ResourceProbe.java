package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.ResourceUsage;
import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the machine's resources for heartbeats: CPU count and load, memory, and GPUs from
 * {@code nvidia-smi} when it is on the PATH (or at the configured command). {@link #sample}
 * never waits for nvidia-smi: it reports the GPUs of the last probe and starts the next one on a
 * thread of its own, one at a time, because nvidia-smi hangs when a GPU fails, and the worker's
 * timer thread, which calls it, also renews the leases and fences tasks. A probe is bounded
 * ({@value #NVIDIA_SMI_TIMEOUT_SECONDS} s, then the process is killed); its output goes to a
 * temporary file, so a full pipe cannot hold it either. Thread-safe.
 */
public final class ResourceProbe implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ResourceProbe.class);
    static final long NVIDIA_SMI_TIMEOUT_SECONDS = 5;

    private final String nvidiaSmi;
    private volatile boolean nvidiaSmiMissing;
    private volatile List<GpuStatus> lastGpus = List.of();
    /** An nvidia-smi that outlived its timeout and SIGKILL (stuck in the driver): none is started while it lives. */
    private volatile Process stuck;
    private final java.util.concurrent.atomic.AtomicBoolean probing = new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.concurrent.ExecutorService prober = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "rls-worker-gpu-probe");
        t.setDaemon(true);
        return t;
    });

    /** @param nvidiaSmi the nvidia-smi command (a name looked up on the PATH, or a path) */
    public ResourceProbe(String nvidiaSmi) {
        this.nvidiaSmi = nvidiaSmi;
    }

    /** Stops probing (a probe in flight is interrupted, its process killed). */
    @Override
    public void close() {
        prober.shutdownNow();
    }

    /** Returns the machine's total physical memory in bytes, or 0 if unknown. */
    public static long totalMemoryBytes() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getTotalMemorySize();
        }
        return 0;
    }

    /** Returns the current usage, with {@code cpuSlots} as offered by the worker. */
    public ResourceUsage sample(int cpuSlots) {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        ResourceUsage.Builder usage = ResourceUsage.newBuilder()
                .setCpuCount(Runtime.getRuntime().availableProcessors())
                .setCpuSlots(cpuSlots)
                .setCpuLoad(Math.max(0, os.getSystemLoadAverage()));
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            long total = sun.getTotalMemorySize();
            usage.setMemoryTotalBytes(total).setMemoryUsedBytes(Math.max(0, total - sun.getFreeMemorySize()));
        }
        usage.addAllGpus(lastGpus);
        refreshGpus();
        return usage.build();
    }

    /** Starts a probe of the GPUs on the probe thread, unless one is running (or nvidia-smi is missing). */
    private void refreshGpus() {
        if (nvidiaSmiMissing || stillStuck() || !probing.compareAndSet(false, true)) {
            return;
        }
        try {
            prober.execute(() -> {
                try {
                    gpus();
                } finally {
                    probing.set(false);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            probing.set(false);
        }
    }

    /**
     * Returns the GPUs of the last probe, without probing: empty before the first probe finished,
     * and where nvidia-smi is missing or failed.
     */
    public List<GpuStatus> lastGpus() {
        return lastGpus;
    }

    /**
     * Returns the GPUs nvidia-smi reports, or an empty list if it is missing, fails or takes over
     * {@value #NVIDIA_SMI_TIMEOUT_SECONDS} s. Waits for it: for the worker's start, and the probe thread.
     */
    public List<GpuStatus> gpus() {
        if (nvidiaSmiMissing || stillStuck()) {
            return lastGpus;
        }
        java.nio.file.Path output;
        try {
            output = java.nio.file.Files.createTempFile("rls-nvidia-smi-", ".csv");
        } catch (IOException e) {
            log.warn("cannot create a file for {}'s output: {}", nvidiaSmi, e.toString());
            return List.of();
        }
        try {
            List<GpuStatus> gpus = probe(output);
            lastGpus = gpus;
            return gpus;
        } finally {
            try {
                java.nio.file.Files.deleteIfExists(output);
            } catch (IOException e) {
                log.debug("cannot delete {}: {}", output, e.toString());
            }
        }
    }

    /** Whether the last nvidia-smi that timed out is still alive (then starting more would pile them up). */
    private boolean stillStuck() {
        Process p = stuck;
        if (p == null) {
            return false;
        }
        if (p.isAlive()) {
            return true;
        }
        stuck = null;
        return false;
    }

    private List<GpuStatus> probe(java.nio.file.Path output) {
        List<GpuStatus> gpus = new ArrayList<>();
        Process process;
        try {
            process = new ProcessBuilder(nvidiaSmi,
                    "--query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu",
                    "--format=csv,noheader,nounits").redirectErrorStream(true).redirectOutput(output.toFile()).start();
        } catch (IOException e) {
            String why = String.valueOf(e.getMessage());
            if (why.contains("error=2,") || why.contains("error=13,")) { // no such file, not executable
                nvidiaSmiMissing = true;
                log.info("no GPUs detected: {} cannot be run ({})", nvidiaSmi, why);
            } else { // out of processes, say: tried again at the next heartbeat
                log.warn("{} could not be started: {}", nvidiaSmi, why);
            }
            return List.of();
        }
        try {
            if (!process.waitFor(NVIDIA_SMI_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                stuck = process;
                log.warn("{} did not finish within {} s; its GPUs are reported as they were", nvidiaSmi,
                        NVIDIA_SMI_TIMEOUT_SECONDS);
                return lastGpus;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return List.of();
        }
        try (BufferedReader out = java.nio.file.Files.newBufferedReader(output, StandardCharsets.UTF_8)) {
            for (String line; (line = out.readLine()) != null; ) {
                String[] f = line.split(",\\s*");
                if (f.length < 6) {
                    continue;
                }
                try {
                    gpus.add(GpuStatus.newBuilder()
                            .setIndex(Integer.parseInt(f[0].trim())).setUuid(f[1].trim()).setName(f[2].trim())
                            .setMemoryTotalBytes(Long.parseLong(f[3].trim()) * 1024 * 1024)
                            .setMemoryUsedBytes(Long.parseLong(f[4].trim()) * 1024 * 1024)
                            .setUtilizationPercent(Integer.parseInt(f[5].trim()))
                            .build());
                } catch (NumberFormatException e) {
                    log.debug("unreadable nvidia-smi line: {}", line);
                }
            }
        } catch (IOException e) {
            log.warn("reading {} failed: {}", nvidiaSmi, e.toString());
            return List.of();
        }
        return gpus;
    }
}
