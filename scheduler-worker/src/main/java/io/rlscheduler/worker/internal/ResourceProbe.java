package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.ResourceUsage;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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
 * {@code nvidia-smi} when it is on the PATH (or at the configured command). Runs a process, so it
 * is called from the worker's timer thread, never from an event loop. Thread-safe.
 */
public final class ResourceProbe {

    private static final Logger log = LoggerFactory.getLogger(ResourceProbe.class);
    private static final long NVIDIA_SMI_TIMEOUT_SECONDS = 5;

    private final String nvidiaSmi;
    private volatile boolean nvidiaSmiMissing;

    /** @param nvidiaSmi the nvidia-smi command (a name looked up on the PATH, or a path) */
    public ResourceProbe(String nvidiaSmi) {
        this.nvidiaSmi = nvidiaSmi;
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
        usage.addAllGpus(gpus());
        return usage.build();
    }

    /** Returns the GPUs nvidia-smi reports, or an empty list if it is missing or fails. */
    public List<GpuStatus> gpus() {
        if (nvidiaSmiMissing) {
            return List.of();
        }
        List<GpuStatus> gpus = new ArrayList<>();
        Process process;
        try {
            process = new ProcessBuilder(nvidiaSmi,
                    "--query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu",
                    "--format=csv,noheader,nounits").redirectErrorStream(true).start();
        } catch (IOException e) {
            nvidiaSmiMissing = true;
            log.info("no GPUs detected: {} cannot be run ({})", nvidiaSmi, e.getMessage());
            return List.of();
        }
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
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
            if (!process.waitFor(NVIDIA_SMI_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                log.warn("{} did not finish within {} s", nvidiaSmi, NVIDIA_SMI_TIMEOUT_SECONDS);
                return List.of();
            }
        } catch (IOException e) {
            log.warn("reading {} failed: {}", nvidiaSmi, e.toString());
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return List.of();
        }
        return gpus;
    }
}
