package io.rlscheduler.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A checkpoint's manifest ({@link RunLayout#checkpointManifest}), stored after its files and
 * before the pointer in Redis moves to it, so that whoever reads a committed checkpoint (a
 * resuming worker, a master listing a run's artifacts) knows every file and can check it:
 * which task, epoch, attempt and number it is, and each file's path (relative to the checkpoint
 * directory), size and SHA-256. A resume checks every file it fetches against it.
 *
 * @param taskId  the task
 * @param id      the checkpoint's id, {@code e<epoch>-<number>}
 * @param epoch   the epoch of the attempt that made it
 * @param attempt that attempt's number
 * @param number  its number within the attempt
 * @param files   the files, in path order
 */
public record CheckpointManifest(String taskId, String id, long epoch, int attempt, int number, List<File> files) {

    /** The manifest's format name: {@value}. */
    public static final String FORMAT = "rls-checkpoint/1";

    /** One file of a checkpoint. */
    public record File(String path, long size, String sha256) {
    }

    /** Returns the files' total size. */
    public long bytes() {
        long n = 0;
        for (File f : files) {
            n += f.size();
        }
        return n;
    }

    /** Returns the manifest as JSON bytes. */
    public byte[] toJson() {
        ObjectNode o = Json.object();
        o.put("format", FORMAT).put("task", taskId).put("id", id).put("epoch", Long.toString(epoch))
                .put("attempt", attempt).put("number", number).put("bytes", bytes());
        ArrayNode list = o.putArray("files");
        for (File f : files) {
            list.addObject().put("path", f.path()).put("size", f.size()).put("sha256", f.sha256());
        }
        return o.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a manifest.
     *
     * @throws IOException if it is not a manifest of this format, or names a path that would leave
     *                     the checkpoint directory
     */
    public static CheckpointManifest parse(byte[] json) throws IOException {
        JsonNode o = Json.tree(new String(json, StandardCharsets.UTF_8));
        if (!FORMAT.equals(o.path("format").asText())) {
            throw new IOException("not a " + FORMAT + " manifest");
        }
        List<File> files = new ArrayList<>();
        for (JsonNode f : o.path("files")) {
            String path = f.path("path").asText("");
            if (!StoreKeys.isValid(path) || path.startsWith(".")) {
                throw new IOException("a manifest entry names an invalid path: " + path);
            }
            String sha = f.path("sha256").asText("");
            if (!sha.matches("[0-9a-f]{64}") || f.path("size").asLong(-1) < 0) {
                throw new IOException("a manifest entry has no valid size or SHA-256: " + path);
            }
            files.add(new File(path, f.get("size").asLong(), sha));
        }
        return new CheckpointManifest(o.path("task").asText(), o.path("id").asText(), Long.parseLong(o.path("epoch").asText("0")),
                o.path("attempt").asInt(), o.path("number").asInt(), List.copyOf(files));
    }
}
