package io.rlscheduler.worker.internal.artifacts;

import com.fasterxml.jackson.databind.JsonNode;
import io.rlscheduler.core.internal.Json;
import io.rlscheduler.store.StoreKeys;

/**
 * The line a script prints to say a checkpoint is complete, as {@code RLS_METRIC} lines say a
 * metric: {@code RLS_CHECKPOINT} alone or followed by {@code {}} marks the whole checkpoint
 * directory; {@code RLS_CHECKPOINT {"path": "ckpt-000120"}} marks one entry of it (a sub
 * directory or a file), the safe way for checkpoints of several files, since the script then
 * never changes a marked checkpoint while it is copied. scripts/rls_checkpoint.py prints them.
 */
public final class CheckpointLine {

    /** The line's prefix: {@value}. */
    public static final String PREFIX = "RLS_CHECKPOINT";

    private CheckpointLine() {
    }

    /** Returns whether {@code line} is a checkpoint line (well formed or not). */
    public static boolean is(String line) {
        return line.startsWith(PREFIX) && (line.length() == PREFIX.length() || line.charAt(PREFIX.length()) == ' ');
    }

    /** Returns the line marking {@code path} ("" for the whole directory). */
    public static String of(String path) {
        return path.isEmpty() ? PREFIX + " {}" : PREFIX + " " + Json.object().put("path", path);
    }

    /**
     * Returns the path a checkpoint line marks, relative to the checkpoint directory ("" for all
     * of it).
     *
     * @throws IllegalArgumentException saying what is wrong with a malformed line
     */
    public static String path(String line) {
        String rest = line.substring(PREFIX.length()).trim();
        if (rest.isEmpty() || rest.equals("{}")) {
            return "";
        }
        JsonNode node;
        try {
            node = Json.tree(rest);
        } catch (Exception e) {
            throw new IllegalArgumentException("not a JSON object after " + PREFIX + ": " + abbreviate(rest));
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("not a JSON object after " + PREFIX + ": " + abbreviate(rest));
        }
        JsonNode path = node.get("path");
        if (path == null || path.isNull()) {
            return "";
        }
        if (!path.isTextual()) {
            throw new IllegalArgumentException("\"path\" must be a string, was " + abbreviate(path.toString()));
        }
        String p = path.asText();
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.isEmpty() || p.equals(".")) {
            return "";
        }
        if (p.startsWith("/") || !StoreKeys.isValid(p) || p.startsWith(".")) {
            throw new IllegalArgumentException("\"path\" must name an entry inside the checkpoint directory"
                    + " (relative, no '..', not hidden), was '" + abbreviate(p) + "'");
        }
        return p;
    }

    private static String abbreviate(String s) {
        return s.length() <= 120 ? s : s.substring(0, 120) + "...";
    }
}
