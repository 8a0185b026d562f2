package io.rlscheduler.worker.internal;

import io.rlscheduler.core.internal.Json;
import com.fasterxml.jackson.core.JsonProcessingException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Checks task parameters and turns them into command-line text and JSON, so that the arguments a
 * script receives and its {@code params.json} agree: a number is written as its JSON text
 * ({@code 0.1}, {@code 500}), a boolean as {@code true}/{@code false}, a string as is.
 */
public final class TaskParameters {

    /** What {@link #toJson} writes for no parameters, by the same mapper: written once, copied per call. */
    private static final byte[] EMPTY_JSON;

    static {
        try {
            EMPTY_JSON = Json.pretty().writeValueAsBytes(Map.of());
        } catch (JsonProcessingException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private TaskParameters() {
    }

    /**
     * Checks a parameter name: not empty, not starting with '-' (it becomes {@code --name}), no
     * whitespace, '=' or NUL.
     *
     * @throws IllegalArgumentException if it is not acceptable
     */
    public static String checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("parameter name must not be empty");
        }
        if (name.charAt(0) == '-') {
            throw new IllegalArgumentException("parameter name must not start with '-': '" + name + "'");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '=' || c == '\0' || Character.isWhitespace(c)) {
                throw new IllegalArgumentException("parameter name must not contain whitespace, '=' or NUL: '"
                        + name.replace("\0", "\\0") + "'");
            }
        }
        return name;
    }

    /**
     * Returns a parameter value as command-line text.
     *
     * @param name  the parameter's name, for messages
     * @param value a String, Boolean or finite Number
     * @throws IllegalArgumentException for null, another type, NaN or an infinity, or a NUL character
     */
    public static String format(String name, Object value) {
        String text;
        if (value instanceof String) {
            text = (String) value;
        } else if (value instanceof Boolean) {
            text = value.toString();
        } else if (value instanceof Number) {
            checkFinite(name, (Number) value);
            try {
                text = Json.pretty().writeValueAsString(value);
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException("parameter '" + name + "' cannot be written as JSON: " + e.getMessage(), e);
            }
        } else {
            throw new IllegalArgumentException("parameter '" + name + "' must be a string, number or boolean, was "
                    + (value == null ? "null" : value.getClass().getName()));
        }
        checkNoNul("parameter '" + name + "'", text);
        return text;
    }

    /**
     * Returns the script's arguments: {@code --name value} for each parameter in order, then the
     * extra arguments as they are.
     *
     * @throws IllegalArgumentException if a name or value is not acceptable
     */
    public static List<String> scriptArguments(Map<String, Object> parameters, List<String> extra) {
        List<String> args = new ArrayList<>(parameters.size() * 2 + extra.size());
        for (Map.Entry<String, Object> e : parameters.entrySet()) {
            args.add("--" + checkName(e.getKey()));
            args.add(format(e.getKey(), e.getValue()));
        }
        for (String arg : extra) {
            checkNoNul("extra argument", arg);
            args.add(arg);
        }
        return args;
    }

    /**
     * Returns the parameters as a JSON object, keys in order, in UTF-8.
     *
     * @throws IllegalArgumentException if a name or value is not acceptable
     */
    public static byte[] toJson(Map<String, Object> parameters) {
        if (parameters.isEmpty()) {
            return EMPTY_JSON.clone();
        }
        for (Map.Entry<String, Object> e : parameters.entrySet()) {
            format(checkName(e.getKey()), e.getValue());
        }
        try {
            return Json.pretty().writeValueAsBytes(parameters);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("parameters cannot be written as JSON: " + e.getMessage(), e);
        }
    }

    private static void checkFinite(String name, Number value) {
        if ((value instanceof Double && !Double.isFinite((Double) value))
                || (value instanceof Float && !Float.isFinite((Float) value))) {
            throw new IllegalArgumentException("parameter '" + name + "' must be a finite number, was " + value);
        }
    }

    static void checkNoNul(String what, String text) {
        if (text.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(what + " must not contain a NUL character");
        }
    }
}
