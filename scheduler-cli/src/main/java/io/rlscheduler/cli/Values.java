package io.rlscheduler.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The values of {@code -p name=value}, {@code -g name=v1,v2}, {@code --selector k=v} and durations.
 *
 * <p>A parameter value becomes a JSON value: {@code true}/{@code false} a boolean, a number (JSON's
 * grammar, or a leading-dot decimal like {@code .5}) a number, a value that starts with {@code [}
 * or {@code {} and parses as JSON that JSON, a value in double quotes the string inside them, and
 * anything else the string itself ({@code 007} and {@code 1e} stay strings).
 */
final class Values {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]*)");
    private static final Pattern DECIMAL =
            Pattern.compile("-?((0|[1-9][0-9]*)(\\.[0-9]+)?|\\.[0-9]+)([eE][+-]?[0-9]+)?");
    private static final Pattern DURATION_PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|d|h|m|s)");

    private Values() {
    }

    /** One parameter value as a JSON-ready Java value (Boolean, Long/BigInteger, Double/BigDecimal, String, JsonNode). */
    static Object parse(String raw) {
        String v = raw.trim();
        if (v.equals("true")) {
            return Boolean.TRUE;
        }
        if (v.equals("false")) {
            return Boolean.FALSE;
        }
        if (INTEGER.matcher(v).matches()) {
            BigInteger big = new BigInteger(v);
            return big.bitLength() < 64 ? (Object) big.longValue() : big;
        }
        if (DECIMAL.matcher(v).matches()) {
            double d = Double.parseDouble(v);
            return Double.isFinite(d) ? (Object) d : new BigDecimal(v);
        }
        if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
            return v.substring(1, v.length() - 1);
        }
        if (v.startsWith("[") || v.startsWith("{")) {
            try {
                return JSON.readTree(v);
            } catch (JsonProcessingException e) {
                return raw;
            }
        }
        return raw;
    }

    /** Splits {@code name=value} at its first {@code =}; {@code what} names the option in errors. */
    static String[] keyValue(String pair, String what) {
        int eq = pair.indexOf('=');
        if (eq <= 0) {
            throw RlsException.usage(what + " wants name=value, got '" + pair + "'");
        }
        return new String[] {pair.substring(0, eq).trim(), pair.substring(eq + 1)};
    }

    /** {@code -p} pairs as typed parameters, in the order given (a later one overrides an earlier one). */
    static Map<String, Object> parameters(List<String> pairs) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (pairs != null) {
            for (String pair : pairs) {
                String[] kv = keyValue(pair, "-p");
                out.put(kv[0], parse(kv[1]));
            }
        }
        return out;
    }

    /** {@code K=V} pairs kept as strings ({@code --env}, {@code --selector}). */
    static Map<String, String> strings(List<String> pairs, String what) {
        Map<String, String> out = new LinkedHashMap<>();
        if (pairs != null) {
            for (String pair : pairs) {
                String[] kv = keyValue(pair, what);
                out.put(kv[0], kv[1]);
            }
        }
        return out;
    }

    /**
     * {@code -g name=v1,v2,...} options as the sweep's grid, parameters in the order given. A value
     * list may also be a JSON array ({@code -g layers=[[64,64],[128]]}).
     */
    static Map<String, List<Object>> grid(List<String> pairs) {
        Map<String, List<Object>> out = new LinkedHashMap<>();
        if (pairs != null) {
            for (String pair : pairs) {
                String[] kv = keyValue(pair, "-g");
                List<Object> values = list(kv[1], "-g " + kv[0]);
                if (out.containsKey(kv[0])) {
                    throw RlsException.usage("-g " + kv[0] + " is given twice");
                }
                out.put(kv[0], values);
            }
        }
        return out;
    }

    /** A comma-separated list (or a JSON array) of typed values, none empty. */
    static List<Object> list(String raw, String what) {
        String v = raw.trim();
        List<Object> values = new ArrayList<>();
        if (v.startsWith("[")) {
            try {
                JsonNode node = JSON.readTree(v);
                if (node.isArray()) {
                    node.forEach(values::add);
                    if (values.isEmpty()) {
                        throw RlsException.usage(what + " has no values");
                    }
                    return values;
                }
            } catch (JsonProcessingException e) {
                // not JSON: split on commas below
            }
        }
        for (String part : v.split(",", -1)) {
            if (part.trim().isEmpty()) {
                throw RlsException.usage(what + " has an empty value in '" + raw + "'");
            }
            values.add(parse(part));
        }
        return values;
    }

    /**
     * A duration in seconds: {@code 90} (seconds), {@code 90s}, {@code 30m}, {@code 2h}, {@code 1d},
     * combinations such as {@code 1h30m}, or ISO-8601 {@code PT2H}.
     */
    static long seconds(String raw) {
        String v = raw.trim().toLowerCase(java.util.Locale.ROOT);
        if (v.matches("[0-9]+")) {
            return Long.parseLong(v);
        }
        if (v.startsWith("pt") || v.startsWith("p")) {
            try {
                return java.time.Duration.parse(v.toUpperCase(java.util.Locale.ROOT)).getSeconds();
            } catch (java.time.format.DateTimeParseException e) {
                throw RlsException.usage("not a duration: '" + raw + "' (try 90s, 30m, 2h, 1h30m)");
            }
        }
        Matcher m = DURATION_PART.matcher(v);
        double total = 0;
        int end = 0;
        while (m.find()) {
            if (m.start() != end) {
                break;
            }
            double n = Double.parseDouble(m.group(1));
            switch (m.group(2)) {
                case "d":
                    total += n * 86400;
                    break;
                case "h":
                    total += n * 3600;
                    break;
                case "m":
                    total += n * 60;
                    break;
                case "ms":
                    total += n / 1000;
                    break;
                default:
                    total += n;
            }
            end = m.end();
        }
        if (end == 0 || end != v.length()) {
            throw RlsException.usage("not a duration: '" + raw + "' (try 90s, 30m, 2h, 1h30m)");
        }
        return (long) Math.ceil(total);
    }
}
