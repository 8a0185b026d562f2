package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.OutputsState;
import java.util.List;
import java.util.Objects;

/**
 * What a worker records of an attempt's outputs ({@link ArtifactRecords#recordOutputs}); Redis adds
 * the epoch, worker and time, and {@link ArtifactRecords#outputs} reads it back as
 * {@link AttemptOutputs}. Immutable.
 *
 * @param attempt      the attempt's number, from 1
 * @param state        where the upload stands
 * @param manifestKey  the manifest's key in the store
 * @param files        files stored (while pending: to be stored)
 * @param bytes        their total size
 * @param error        why incomplete, or why it waits; "" for neither
 * @param skipped      entries left out, {@code "path: why"}, in path order; the first
 *                     {@link AttemptOutputs#MAX_LISTED} are kept
 * @param skippedCount how many entries were left out in all
 */
public record OutputsNote(int attempt, OutputsState state, String manifestKey, int files, long bytes, String error,
                          List<String> skipped, int skippedCount) {

    public OutputsNote {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(manifestKey, "manifestKey");
        Objects.requireNonNull(error, "error");
        if (attempt < 1 || files < 0 || bytes < 0 || skippedCount < skipped.size()) {
            throw new IllegalArgumentException("attempt must be 1 or more, files and bytes 0 or more, skippedCount"
                    + " at least the entries listed");
        }
        skipped = List.copyOf(skipped.subList(0, Math.min(skipped.size(), AttemptOutputs.MAX_LISTED)));
    }

    /** Returns the worker's fields as outputs.lua takes them (bytes as decimal text: Lua's numbers are doubles). */
    String toJson() {
        ObjectNode o = Json.object();
        o.put("manifest", manifestKey).put("files", files).put("bytes", Long.toString(bytes)).put("error", error)
                .put("skipped_count", skippedCount);
        ArrayNode list = o.putArray("skipped");
        skipped.forEach(list::add);
        return o.toString();
    }
}
