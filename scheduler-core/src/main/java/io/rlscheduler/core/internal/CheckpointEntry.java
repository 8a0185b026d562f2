package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * One committed checkpoint of a task, as checkpoint.lua keeps it: which attempt made it, where its
 * manifest is in the artifact store and the manifest's SHA-256, its size. Immutable.
 *
 * @param id          "e&lt;epoch&gt;-&lt;number&gt;", unique per task
 * @param epoch       the epoch of the attempt that made it
 * @param attempt     that attempt's number
 * @param number      the checkpoint's number within its attempt, from 1
 * @param manifestKey the manifest's key in the artifact store
 * @param sha256      the manifest's SHA-256
 * @param bytes       the files' total size
 * @param files       how many files
 * @param workerId    the worker that committed it
 * @param committedAt when it was committed (Redis's clock)
 */
public record CheckpointEntry(String id, long epoch, int attempt, int number, String manifestKey, String sha256,
                              long bytes, int files, String workerId, Instant committedAt) {

    static CheckpointEntry parse(String json) {
        JsonNode e = Replies.parse(json);
        return new CheckpointEntry(e.get("id").asText(), e.get("epoch").asLong(), e.get("attempt").asInt(),
                e.get("n").asInt(), e.get("manifest").asText(), e.get("sha256").asText(), e.get("bytes").asLong(),
                e.get("files").asInt(), e.path("worker").asText(""), Instant.ofEpochMilli(e.get("at").asLong()));
    }
}
