package io.rlscheduler.core.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;

/**
 * Reads the metric lines a script prints, {@code RLS_METRIC {json object}}: the one parser of
 * them, for the worker's final metrics and the master's live metric points alike. A line whose
 * rest is not a JSON object (NaN and Infinity, Python's {@code json.dumps} default for them, are
 * not JSON) is no metric line.
 */
public final class MetricLines {

    /** The prefix of a metric line. */
    public static final String PREFIX = "RLS_METRIC ";

    private MetricLines() {
    }

    /** Returns whether the line starts as a metric line does (its JSON is not checked). */
    public static boolean isMetricLine(String line) {
        return line.startsWith(PREFIX);
    }

    /** Returns the line's metrics with their numbers exactly as printed, or null if it is no metric line. */
    public static ObjectNode parse(String line) {
        if (!isMetricLine(line)) {
            return null;
        }
        try {
            JsonNode node = Json.exactTree(line.substring(PREFIX.length()));
            return node != null && node.isObject() ? (ObjectNode) node : null;
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** Returns the line's metrics in key order, fractions as doubles, or null if it is no metric line. */
    public static LinkedHashMap<String, Object> parseValues(String line) {
        if (!isMetricLine(line)) {
            return null;
        }
        try {
            return Json.map(line.substring(PREFIX.length()));
        } catch (JsonProcessingException e) {
            return null;
        }
    }
}
