package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Iterator;
import java.util.Map;
import java.util.StringJoiner;

/** Small renderings for the human output. */
final class Format {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.systemDefault());

    private Format() {
    }

    /** A JSON value as table text: "-" for null or missing, strings bare, the rest as JSON. */
    static String text(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return "-";
        }
        if (node.isTextual()) {
            return node.asText();
        }
        return node.toString();
    }

    /** An object's fields as {@code k=v k=v}; "-" when empty or absent. */
    static String pairs(JsonNode object) {
        if (object == null || !object.isObject() || object.size() == 0) {
            return "-";
        }
        StringJoiner j = new StringJoiner(" ");
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            j.add(e.getKey() + "=" + text(e.getValue()));
        }
        return j.toString();
    }

    /** An array's items joined by commas; "-" when empty or absent. */
    static String list(JsonNode array) {
        if (array == null || !array.isArray() || array.size() == 0) {
            return "-";
        }
        StringJoiner j = new StringJoiner(",");
        array.forEach(n -> j.add(text(n)));
        return j.toString();
    }

    /** Epoch milliseconds as a local time; "-" for 0 or absent. */
    static String time(JsonNode millis) {
        if (millis == null || !millis.isNumber() || millis.asLong() <= 0) {
            return "-";
        }
        return TIME.format(Instant.ofEpochMilli(millis.asLong()));
    }

    /** How long ago epoch milliseconds were: "12s ago", "3m ago", ... */
    static String ago(JsonNode millis) {
        if (millis == null || !millis.isNumber() || millis.asLong() <= 0) {
            return "-";
        }
        long ms = System.currentTimeMillis() - millis.asLong();
        return (ms < 0 ? "0s" : duration(ms)) + " ago";
    }

    /** A duration: "850ms", "12s", "3m05s", "2h07m", "3d04h". */
    static String duration(long ms) {
        if (ms < 1000) {
            return ms + "ms";
        }
        long s = ms / 1000;
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return String.format("%dm%02ds", s / 60, s % 60);
        }
        if (s < 86400) {
            return String.format("%dh%02dm", s / 3600, (s % 3600) / 60);
        }
        return String.format("%dd%02dh", s / 86400, (s % 86400) / 3600);
    }

    /** Bytes as "512 B", "1.5 GiB", ... */
    static String bytes(JsonNode n) {
        if (n == null || !n.isNumber()) {
            return "-";
        }
        double b = n.asDouble();
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        while (b >= 1024 && u < units.length - 1) {
            b /= 1024;
            u++;
        }
        return u == 0 ? String.format("%.0f %s", b, units[u]) : String.format("%.1f %s", b, units[u]);
    }
}
