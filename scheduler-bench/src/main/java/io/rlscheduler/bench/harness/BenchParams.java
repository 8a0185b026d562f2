package io.rlscheduler.bench.harness;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parameters of one benchmark run: each declared {@link EndToEndBenchmark.Param}'s default,
 * overridden by the values given on the command line. Remembers the value of every parameter, so
 * that the result records exactly what ran.
 */
public final class BenchParams {

    private final String benchmark;
    private final Map<String, String> values = new LinkedHashMap<>();

    /**
     * @param benchmark the benchmark's name, for messages
     * @param declared  its parameters
     * @param given     values from the command line, only of declared parameters
     */
    public BenchParams(String benchmark, List<EndToEndBenchmark.Param> declared, Map<String, String> given) {
        this.benchmark = benchmark;
        for (EndToEndBenchmark.Param p : declared) {
            values.put(p.name(), given.getOrDefault(p.name(), p.defaultValue()));
        }
        for (String key : given.keySet()) {
            if (!values.containsKey(key)) {
                throw new IllegalArgumentException(benchmark + " has no parameter '" + key + "'");
            }
        }
    }

    /** Returns a parameter's value. */
    public String get(String name) {
        String v = values.get(name);
        if (v == null) {
            throw new IllegalArgumentException(benchmark + " declares no parameter '" + name + "'");
        }
        return v;
    }

    /** Returns a parameter as an int, at least {@code min}. */
    public int getInt(String name, int min) {
        int v;
        try {
            v = Integer.parseInt(get(name).replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(benchmark + ": " + name + " must be an integer, was '" + get(name) + "'");
        }
        if (v < min) {
            throw new IllegalArgumentException(benchmark + ": " + name + " must be at least " + min + ", was " + v);
        }
        return v;
    }

    /** Returns a parameter as a boolean ("true" or "false"). */
    public boolean getBoolean(String name) {
        String v = get(name);
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException(benchmark + ": " + name + " must be true or false, was '" + v + "'");
        }
        return Boolean.parseBoolean(v);
    }

    /** Returns every parameter with its value, numbers as numbers, in declaration order. */
    public Map<String, Object> asMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        values.forEach((k, v) -> {
            Object typed = v;
            if (v.matches("-?[0-9][0-9_]*")) {
                typed = Long.parseLong(v.replace("_", ""));
            } else if (v.equals("true") || v.equals("false")) {
                typed = Boolean.parseBoolean(v);
            }
            out.put(k, typed);
        });
        return out;
    }
}
