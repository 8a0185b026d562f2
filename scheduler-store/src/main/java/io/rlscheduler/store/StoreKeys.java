package io.rlscheduler.store;

import java.nio.charset.StandardCharsets;

/**
 * The rule for keys of an {@link ArtifactStore}, the same for every store so that a key valid in
 * one is valid in all: one to 1,024 bytes of UTF-8, segments separated by {@code /}, each segment
 * non-empty, at most 255 bytes, neither {@code .} nor {@code ..}, with no control character and no
 * backslash; the first segment does not start with a dot (stores keep their own files there).
 * A key therefore never leads outside its store, whatever the store maps it onto.
 */
public final class StoreKeys {

    /** The most UTF-8 bytes in a key: {@value}, S3's limit. */
    public static final int MAX_KEY_BYTES = 1024;
    /** The most UTF-8 bytes in one segment: {@value}, a file name's limit on common file systems. */
    public static final int MAX_SEGMENT_BYTES = 255;

    private StoreKeys() {
    }

    /**
     * Returns {@code key} if it is valid.
     *
     * @throws IllegalArgumentException saying what is wrong with it otherwise
     */
    public static String check(String key) {
        String problem = problem(key);
        if (problem != null) {
            throw new IllegalArgumentException("invalid artifact key '" + printable(key) + "': " + problem);
        }
        return key;
    }

    /** Returns whether {@code key} is valid. */
    public static boolean isValid(String key) {
        return problem(key) == null;
    }

    /**
     * Returns whether {@code name} is valid as one segment of a key (a file name inside a key).
     */
    public static boolean isValidSegment(String name) {
        return name != null && !name.contains("/") && segmentProblem(name) == null;
    }

    /**
     * Joins segments or keys with {@code /} and checks the result.
     *
     * @throws IllegalArgumentException if the result is not a valid key
     */
    public static String join(String... parts) {
        return check(String.join("/", parts));
    }

    private static String problem(String key) {
        if (key == null || key.isEmpty()) {
            return "empty";
        }
        if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            return "longer than " + MAX_KEY_BYTES + " bytes";
        }
        if (key.charAt(0) == '.') {
            return "the first segment starts with a dot";
        }
        int start = 0;
        while (true) {
            int slash = key.indexOf('/', start);
            String segment = slash < 0 ? key.substring(start) : key.substring(start, slash);
            String p = segmentProblem(segment);
            if (p != null) {
                return p;
            }
            if (slash < 0) {
                return null;
            }
            start = slash + 1;
        }
    }

    private static String segmentProblem(String segment) {
        if (segment.isEmpty()) {
            return "an empty segment";
        }
        if (segment.equals(".") || segment.equals("..")) {
            return "a '" + segment + "' segment";
        }
        if (segment.getBytes(StandardCharsets.UTF_8).length > MAX_SEGMENT_BYTES) {
            return "a segment longer than " + MAX_SEGMENT_BYTES + " bytes";
        }
        for (int i = 0; i < segment.length(); ) {
            int cp = segment.codePointAt(i);
            if (cp < 0x20 || cp == 0x7f || cp == '\\') {
                return "a control character or backslash";
            }
            if (Character.getType(cp) == Character.SURROGATE) {
                return "an unpaired surrogate";
            }
            i += Character.charCount(cp);
        }
        return null;
    }

    /** The key as it can be shown in a message: control characters escaped, at most 200 characters. */
    static String printable(String key) {
        if (key == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < key.length() && b.length() < 200; i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.length() < key.length() ? b + "..." : b.toString();
    }
}
