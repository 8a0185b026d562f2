package io.rlscheduler.core;

import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Rules for task and worker ids. An id is 1 to 128 characters of letters, digits, '.', '_' and '-',
 * starting with a letter or digit: safe as a file name (no '/', never '.' or '..') and as part of a
 * Redis key.
 */
public final class TaskIds {

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    private TaskIds() {
    }

    /** Returns whether {@code id} is a valid task or worker id. */
    public static boolean isValid(String id) {
        // The rule of ID, checked by hand: ids are checked several times per task, and the
        // matcher allocated and cost more than the loop.
        if (id == null || id.isEmpty() || id.length() > 128) {
            return false;
        }
        char first = id.charAt(0);
        if (first == '.' || first == '_' || first == '-') {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** The rule as a pattern: the documentation of {@link #isValid}, and what its tests compare against. */
    static boolean matchesPattern(String id) {
        return id != null && ID.matcher(id).matches();
    }

    /**
     * Checks an id.
     *
     * @param id   the id
     * @param what what it names, for the message ("task id", "worker id")
     * @return the id
     * @throws IllegalArgumentException if it is not valid
     */
    public static String require(String id, String what) {
        if (!isValid(id)) {
            throw new IllegalArgumentException(what + " must be 1 to 128 of [A-Za-z0-9._-], starting with a letter or"
                    + " digit, was " + (id == null ? "null" : "'" + id + "'"));
        }
        return id;
    }

    /** Returns a new random id ("t-" and a UUID). */
    public static String random() {
        return "t-" + UUID.randomUUID();
    }
}
