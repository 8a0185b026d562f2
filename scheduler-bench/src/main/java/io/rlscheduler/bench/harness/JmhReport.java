package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns a JMH JSON report ({@code -rf json}) of one of the micro-benchmarks into a
 * {@link BenchResult}, the same shape as the end-to-end results:
 * <ul>
 *   <li>{@code codec} (CodecBenchmark): value {@code ours} ops/s for the heartbeat payload, baseline
 *       Netty's stock protobuf pipeline on the same payload; the 64 KiB log batch in params;</li>
 *   <li>{@code lease-scripts} (LeaseScriptBenchmark): value a one-task {@code claim} ops/s,
 *       baseline a plain {@code SET} round trip ({@code setRoundTrip}); every other benchmark of
 *       the report in params.</li>
 * </ul>
 * Each figure in params carries JMH's score and error (99.9% half-width); params also record the
 * JMH settings the report was made with.
 */
public final class JmhReport {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The names of the micro-benchmark results this class can make. */
    public static final java.util.List<String> NAMES = java.util.List.of("codec", "lease-scripts");

    private JmhReport() {
    }

    /** Converts the report {@code file} into the result {@code name} ("codec" or "lease-scripts"). */
    public static BenchResult convert(String name, Path file) throws IOException {
        JsonNode runs = JSON.readTree(file.toFile());
        if (runs == null || !runs.isArray() || runs.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no JMH results");
        }
        return switch (name) {
            case "codec" -> codec(runs, file);
            case "lease-scripts" -> leaseScripts(runs, file);
            default -> throw new IllegalArgumentException("no JMH conversion for '" + name + "'; known: " + NAMES);
        };
    }

    private static BenchResult codec(JsonNode runs, Path file) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("payload", "heartbeat");
        JsonNode ours = null;
        JsonNode stock = null;
        for (JsonNode run : runs) {
            if (!run.path("benchmark").asText().endsWith("CodecBenchmark.roundTrip")) {
                continue;
            }
            String payload = run.path("params").path("payload").asText();
            String codec = run.path("params").path("codec").asText();
            params.put(payload + "_" + codec, figure(run));
            if (payload.equals("heartbeat") && codec.equals("ours")) {
                ours = run;
            } else if (payload.equals("heartbeat") && codec.equals("stock")) {
                stock = run;
            }
        }
        if (ours == null || stock == null) {
            throw new IllegalArgumentException(file + " lacks CodecBenchmark.roundTrip for payload=heartbeat with codec ours and stock");
        }
        Object l64o = params.get("log64k_ours");
        Object l64s = params.get("log64k_stock");
        if (l64o instanceof Map<?, ?> o && l64s instanceof Map<?, ?> s) {
            params.put("log64k_ratio", Stats.round3(((Number) o.get("score")).doubleValue()
                    / ((Number) s.get("score")).doubleValue()));
        }
        params.put("goal", "ours >= 0.9 x stock for each payload");
        params.put("jmh", settings(ours));
        params.put("report", file.toString());
        return new BenchResult("codec", "ops/s", score(ours), "netty stock protobuf codec (heartbeat)", score(stock), params);
    }

    private static BenchResult leaseScripts(JsonNode runs, Path file) {
        Map<String, Object> params = new LinkedHashMap<>();
        JsonNode claim = null;
        JsonNode set = null;
        for (JsonNode run : runs) {
            String benchmark = run.path("benchmark").asText();
            if (!benchmark.contains("LeaseScriptBenchmark.")) {
                continue;
            }
            String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            params.put(method, figure(run));
            if (run.path("params").has("aof")) {
                params.put("aof", run.path("params").path("aof").asText());
            }
            if (method.equals("claim")) {
                claim = run;
            } else if (method.equals("setRoundTrip")) {
                set = run;
            }
        }
        if (claim == null || set == null) {
            throw new IllegalArgumentException(file + " lacks LeaseScriptBenchmark.claim and .setRoundTrip");
        }
        params.put("jmh", settings(claim));
        params.put("report", file.toString());
        return new BenchResult("lease-scripts", "ops/s", score(claim), "redis SET round trip (lettuce sync)", score(set),
                params);
    }

    private static double score(JsonNode run) {
        return Stats.round1(run.path("primaryMetric").path("score").asDouble());
    }

    private static Map<String, Object> figure(JsonNode run) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("score", score(run));
        double error = run.path("primaryMetric").path("scoreError").asDouble();
        f.put("error", Double.isNaN(error) ? null : Stats.round1(error));
        f.put("unit", run.path("primaryMetric").path("scoreUnit").asText());
        return f;
    }

    private static Map<String, Object> settings(JsonNode run) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("forks", run.path("forks").asInt());
        s.put("warmup", run.path("warmupIterations").asInt() + " x " + run.path("warmupTime").asText());
        s.put("measurement", run.path("measurementIterations").asInt() + " x " + run.path("measurementTime").asText());
        s.put("mode", run.path("mode").asText());
        return s;
    }
}
