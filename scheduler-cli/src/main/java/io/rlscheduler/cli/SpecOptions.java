package io.rlscheduler.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options of a run's spec that {@code submit} and {@code sweep} (its base) share. */
final class SpecOptions {
    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE",
            description = "A parameter; numbers and true/false are typed, the rest strings (repeatable).")
    List<String> params;

    @Option(names = "--gpus", paramLabel = "N", description = "GPUs per run (default 0).")
    Integer gpus;

    @Option(names = "--cpus", paramLabel = "N", description = "CPU slots per run (default 1).")
    Integer cpuSlots;

    @Option(names = "--memory", paramLabel = "SIZE", description = "Memory per run: bytes, or 512m, 16g.")
    String memory;

    @Option(names = "--priority", paramLabel = "N", description = "Higher runs first (default 0).")
    Integer priority;

    @Option(names = "--timeout", paramLabel = "DURATION", description = "Stop the run after this long: 90s, 30m, 2h, 1h30m.")
    String timeout;

    @Option(names = "--selector", paramLabel = "LABEL=VALUE", description = "Only workers with this label (repeatable).")
    List<String> selector;

    @Option(names = "--env", paramLabel = "NAME=VALUE", description = "An environment variable for the script (repeatable).")
    List<String> env;

    @Option(names = "--max-attempts", paramLabel = "N", description = "Attempts before the run fails.")
    Integer maxAttempts;

    @Option(names = "--owner", paramLabel = "USER", description = "Submit as this owner (admin tokens only).")
    String owner;

    /** The spec for {@code script} and its {@code args}: only the fields given. */
    Map<String, Object> toSpec(String script, List<String> args) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("script", script);
        Map<String, Object> parameters = Values.parameters(params);
        if (!parameters.isEmpty()) {
            spec.put("parameters", parameters);
        }
        if (args != null && !args.isEmpty()) {
            spec.put("args", args);
        }
        Map<String, String> environment = Values.strings(env, "--env");
        if (!environment.isEmpty()) {
            spec.put("env", environment);
        }
        putIf(spec, "gpus", nonNegative(gpus, "--gpus"));
        putIf(spec, "cpuSlots", nonNegative(cpuSlots, "--cpus"));
        if (memory != null) {
            spec.put("memoryBytes", bytes(memory));
        }
        putIf(spec, "priority", priority);
        if (timeout != null) {
            spec.put("timeoutSeconds", Values.seconds(timeout));
        }
        putIf(spec, "maxAttempts", maxAttempts);
        Map<String, String> labels = Values.strings(selector, "--selector");
        if (!labels.isEmpty()) {
            spec.put("selector", labels);
        }
        putIf(spec, "owner", owner);
        return spec;
    }

    private static Integer nonNegative(Integer n, String option) {
        if (n != null && n < 0) {
            throw RlsException.usage(option + " must not be negative");
        }
        return n;
    }

    private static void putIf(Map<String, Object> spec, String key, Object value) {
        if (value != null) {
            spec.put(key, value);
        }
    }

    /** {@code 1024}, {@code 512k}, {@code 512m}, {@code 16g}, {@code 1t} (powers of 1024) as bytes. */
    static long bytes(String raw) {
        String v = raw.trim().toLowerCase(java.util.Locale.ROOT).replaceAll("i?b$", "");
        long unit = 1;
        if (!v.isEmpty()) {
            switch (v.charAt(v.length() - 1)) {
                case 'k': unit = 1L << 10; break;
                case 'm': unit = 1L << 20; break;
                case 'g': unit = 1L << 30; break;
                case 't': unit = 1L << 40; break;
                default: unit = 1;
            }
        }
        String number = unit == 1 ? v : v.substring(0, v.length() - 1);
        try {
            double n = Double.parseDouble(number);
            if (n < 0 || Double.isNaN(n) || Double.isInfinite(n)) {
                throw new NumberFormatException();
            }
            return (long) Math.ceil(n * unit);
        } catch (NumberFormatException e) {
            throw RlsException.usage("not a size: '" + raw + "' (try 512m, 16g)");
        }
    }
}
