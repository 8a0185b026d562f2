package io.rlscheduler.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The result files' shape, the JMH conversions and the parameter handling, without running a benchmark. */
class BenchResultTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void writesTheDocumentedShape(@TempDir Path dir) throws Exception {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("tasks", 50_000L);
        params.put("p99_ms", 4.5);
        BenchResult result = new BenchResult("dispatch-throughput", "tasks/s", 21_000.5, "redis-list", 42_001.0, params);

        Path file = result.write(dir);

        assertThat(file).isEqualTo(dir.resolve("dispatch-throughput.json"));
        JsonNode root = JSON.readTree(file.toFile());
        assertThat(root.fieldNames()).toIterable()
                .containsExactly("name", "unit", "value", "baseline", "ratio", "params");
        assertThat(root.get("baseline").fieldNames()).toIterable().containsExactly("name", "value");
        assertThat(root.get("name").asText()).isEqualTo("dispatch-throughput");
        assertThat(root.get("unit").asText()).isEqualTo("tasks/s");
        assertThat(root.get("value").asDouble()).isEqualTo(21_000.5);
        assertThat(root.get("baseline").get("value").asDouble()).isEqualTo(42_001.0);
        assertThat(root.get("ratio").asDouble()).isEqualTo(0.5);
        assertThat(root.get("params").get("tasks").asLong()).isEqualTo(50_000L);

        BenchResult read = BenchResult.read(file);
        assertThat(read.getRatio()).isEqualTo(0.5);
        assertThat(BenchResult.table(List.of(read)))
                .contains("dispatch-throughput").contains("21,001 tasks/s").contains("redis-list: 42,001 tasks/s");
    }

    @Test
    void convertsJmhReports(@TempDir Path dir) throws Exception {
        Path codec = dir.resolve("codec-jmh.json");
        Files.writeString(codec, "[" + run("CodecBenchmark.roundTrip", "{\"payload\":\"heartbeat\",\"codec\":\"ours\"}", 400_000)
                + "," + run("CodecBenchmark.roundTrip", "{\"payload\":\"heartbeat\",\"codec\":\"stock\"}", 380_000)
                + "," + run("CodecBenchmark.roundTrip", "{\"payload\":\"log64k\",\"codec\":\"ours\"}", 10_000)
                + "," + run("CodecBenchmark.roundTrip", "{\"payload\":\"log64k\",\"codec\":\"stock\"}", 8_000) + "]");
        BenchResult c = JmhReport.convert("codec", codec);
        assertThat(c.getValue()).isEqualTo(400_000);
        assertThat(c.getBaselineValue()).isEqualTo(380_000);
        assertThat(c.getParams()).containsEntry("log64k_ratio", 1.25);

        Path lease = dir.resolve("lease-jmh.json");
        Files.writeString(lease, "[" + run("LeaseScriptBenchmark.claim", "{\"aof\":\"off\"}", 6_000)
                + "," + run("LeaseScriptBenchmark.setRoundTrip", "{\"aof\":\"off\"}", 30_000)
                + "," + run("LeaseScriptBenchmark.submit", "{\"aof\":\"off\"}", 7_000) + "]");
        BenchResult l = JmhReport.convert("lease-scripts", lease);
        assertThat(l.getValue()).isEqualTo(6_000);
        assertThat(l.getBaselineValue()).isEqualTo(30_000);
        assertThat(l.getRatio()).isEqualTo(0.2);
        assertThat(l.getParams()).containsKey("submit").containsEntry("aof", "off");

        assertThatThrownBy(() -> JmhReport.convert("codec", lease)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void paramsTakeDefaultsAndRejectUnknownNames() {
        List<EndToEndBenchmark.Param> declared = List.of(new EndToEndBenchmark.Param("tasks", "50000", ""),
                new EndToEndBenchmark.Param("aof", "off", ""));
        BenchParams p = new BenchParams("b", declared, Map.of("tasks", "5_000"));
        assertThat(p.getInt("tasks", 1)).isEqualTo(5000);
        assertThat(p.get("aof")).isEqualTo("off");
        assertThat(p.asMap()).containsEntry("tasks", 5000L).containsEntry("aof", "off");
        assertThatThrownBy(() -> new BenchParams("b", declared, Map.of("task", "1")))
                .hasMessageContaining("no parameter 'task'");
        assertThatThrownBy(() -> p.getInt("aof", 1)).hasMessageContaining("integer");
    }

    @Test
    void percentilesAreNearestRank() {
        long[] samples = new long[100];
        for (int i = 0; i < 100; i++) {
            samples[i] = (100 - i) * 1_000_000L; // 100 ms down to 1 ms
        }
        Stats s = new Stats(samples);
        assertThat(s.percentileMillis(50)).isEqualTo(50.0);
        assertThat(s.percentileMillis(99)).isEqualTo(99.0);
        assertThat(s.maxMillis()).isEqualTo(100.0);
    }

    @Test
    void everyRegisteredBenchmarkHasAUniqueNameAndDefaults() {
        assertThat(Benchmarks.ALL).extracting(EndToEndBenchmark::name).doesNotHaveDuplicates()
                .contains("dispatch-throughput", "dispatch-latency");
        for (EndToEndBenchmark b : Benchmarks.ALL) {
            BenchParams defaults = new BenchParams(b.name(), b.parameters(), Map.of());
            assertThat(defaults.asMap()).hasSameSizeAs(b.parameters());
        }
    }

    private static String run(String benchmark, String params, double score) {
        return "{\"benchmark\":\"io.rlscheduler.bench." + benchmark + "\",\"mode\":\"thrpt\",\"forks\":1,"
                + "\"warmupIterations\":2,\"warmupTime\":\"2 s\",\"measurementIterations\":3,\"measurementTime\":\"2 s\","
                + "\"params\":" + params + ",\"primaryMetric\":{\"score\":" + score + ",\"scoreError\":\"NaN\","
                + "\"scoreUnit\":\"ops/s\"}}";
    }
}
