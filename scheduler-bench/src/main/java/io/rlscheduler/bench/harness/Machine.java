package io.rlscheduler.bench.harness;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the figures were measured on: cores, load, memory, JVM. */
final class Machine {

    private Machine() {
    }

    /** Returns the machine's description, with the load average (1, 5, 15 minutes) at the time of the call. */
    static Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("load_average_after", loadAverage());
        m.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
        m.put("gc", ManagementFactory.getGarbageCollectorMXBeans().stream().map(b -> b.getName()).toList().toString());
        return m;
    }

    /** Returns /proc/loadavg's first three figures, or the JVM's one-minute figure. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return String.valueOf(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }
}
