package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One benchmark's figure and its baseline, as written to {@code bench-results/<name>.json}:
 *
 * <pre>{@code
 * {"name": ..., "unit": ..., "value": ..., "baseline": {"name": ..., "value": ...},
 *  "ratio": value / baseline value, "params": {...}}
 * }</pre>
 *
 * The baseline is in the same unit as the value. {@code params} holds the parameters the run used
 * and any further figures (percentiles, counts, settings). Immutable.
 */
public final class BenchResult {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final String name;
    private final String unit;
    private final double value;
    private final String baselineName;
    private final double baselineValue;
    private final Map<String, Object> params;

    /**
     * @param name          the benchmark's name
     * @param unit          the unit of value and baseline (e.g. "tasks/s", "ms", "ops/s")
     * @param value         the figure
     * @param baselineName  what the baseline is
     * @param baselineValue the baseline's figure, in the same unit
     * @param params        parameters and extra figures (copied, order kept)
     */
    public BenchResult(String name, String unit, double value, String baselineName, double baselineValue,
                       Map<String, Object> params) {
        this.name = Objects.requireNonNull(name, "name");
        this.unit = Objects.requireNonNull(unit, "unit");
        this.value = value;
        this.baselineName = Objects.requireNonNull(baselineName, "baselineName");
        this.baselineValue = baselineValue;
        this.params = new LinkedHashMap<>(params);
    }

    public String getName() { return name; }
    public String getUnit() { return unit; }
    public double getValue() { return value; }
    public String getBaselineName() { return baselineName; }
    public double getBaselineValue() { return baselineValue; }
    public Map<String, Object> getParams() { return params; }

    /** Returns value / baseline value, rounded to 3 decimals (NaN without a baseline figure). */
    public double getRatio() {
        return baselineValue == 0 ? Double.NaN : Stats.round3(value / baselineValue);
    }

    /** Returns the result as a JSON object in the documented shape. */
    public ObjectNode toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("name", name);
        root.put("unit", unit);
        root.put("value", value);
        ObjectNode baseline = root.putObject("baseline");
        baseline.put("name", baselineName);
        baseline.put("value", baselineValue);
        double ratio = getRatio();
        if (Double.isNaN(ratio)) {
            root.putNull("ratio");
        } else {
            root.put("ratio", ratio);
        }
        root.set("params", JSON.valueToTree(params));
        return root;
    }

    /** Writes {@code <directory>/<name>.json}, creating the directory; returns the file. */
    public Path write(Path directory) throws IOException {
        Files.createDirectories(directory);
        Path file = directory.resolve(name + ".json");
        Path temp = directory.resolve(name + ".json.tmp");
        JSON.writeValue(temp.toFile(), toJson());
        Files.move(temp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return file;
    }

    /** Reads a result written by {@link #write}. */
    @SuppressWarnings("unchecked")
    public static BenchResult read(Path file) throws IOException {
        JsonNode root = JSON.readTree(file.toFile());
        Map<String, Object> params = root.has("params")
                ? JSON.convertValue(root.get("params"), LinkedHashMap.class) : Map.of();
        return new BenchResult(root.path("name").asText(), root.path("unit").asText(), root.path("value").asDouble(),
                root.path("baseline").path("name").asText(), root.path("baseline").path("value").asDouble(), params);
    }

    /** Formats a figure with thousands separators and up to 3 significant decimals. */
    public static String format(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double abs = Math.abs(v);
        String pattern = abs >= 1000 ? "%,.0f" : abs >= 100 ? "%,.1f" : abs >= 1 ? "%,.2f" : "%,.3f";
        return String.format(Locale.ROOT, pattern, v);
    }

    /** Returns a text table of the results: name | value unit | baseline | ratio. */
    public static String table(List<BenchResult> results) {
        List<String[]> rows = new java.util.ArrayList<>();
        rows.add(new String[] {"name", "value", "baseline", "ratio"});
        for (BenchResult r : results) {
            rows.add(new String[] {r.name, format(r.value) + " " + r.unit,
                    r.baselineName + ": " + format(r.baselineValue) + " " + r.unit, format(r.getRatio())});
        }
        int[] width = new int[4];
        for (String[] row : rows) {
            for (int i = 0; i < 4; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            String[] row = rows.get(r);
            out.append(String.format(Locale.ROOT, "%-" + width[0] + "s | %" + width[1] + "s | %-" + width[2] + "s | %"
                    + width[3] + "s%n", row[0], row[1], row[2], row[3]));
            if (r == 0) {
                out.append("-".repeat(width[0])).append("-|-").append("-".repeat(width[1])).append("-|-")
                        .append("-".repeat(width[2])).append("-|-").append("-".repeat(width[3])).append('\n');
            }
        }
        return out.toString();
    }
}
