package io.rlscheduler.worker.internal.artifacts;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.internal.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * An attempt's outputs manifest, stored after its files and before the record in Redis says the
 * upload is over: which task, attempt and epoch, whether it is complete and if not why, each file
 * stored (path relative to the run directory, size, SHA-256 of the bytes stored), and the entries
 * left out with why (the first {@link OutputSelection#MAX_LISTED} in path order, and how many in all).
 *
 * <pre>
 * {"format": "rls-outputs/1", "task": "t", "attempt": 1, "epoch": "42", "complete": false,
 *  "error": "1 file with a name that cannot be stored ... not stored", "bytes": 1234,
 *  "files": [{"path": "plots/reward.png", "size": 1234, "sha256": "..."}],
 *  "skipped": [{"path": "etc", "reason": "SYMBOLIC_LINK", "why": "a symbolic link, not followed"}],
 *  "skipped_count": 1}
 * </pre>
 *
 * @param taskId       the task
 * @param attempt      the attempt's number
 * @param epoch        the epoch it ran under
 * @param complete     whether every regular file of the run directory is stored
 * @param error        why not, or ""
 * @param files        the files stored, in path order
 * @param skipped      entries left out, in path order (at most {@link OutputSelection#MAX_LISTED})
 * @param skippedCount how many were left out in all
 */
record OutputsManifest(String taskId, int attempt, long epoch, boolean complete, String error, List<File> files,
                       List<OutputSelection.Left> skipped, int skippedCount) {

    /** The manifest's format name: {@value}. */
    static final String FORMAT = "rls-outputs/1";

    /** One file stored. */
    record File(String path, long size, String sha256) {
    }

    /** Returns the files' total size. */
    long bytes() {
        return files.stream().mapToLong(File::size).sum();
    }

    /** Returns the manifest as JSON bytes. */
    byte[] toJson() {
        ObjectNode o = Json.object().put("format", FORMAT).put("task", taskId).put("attempt", attempt)
                .put("epoch", Long.toString(epoch)).put("complete", complete).put("error", error).put("bytes", bytes());
        ArrayNode stored = o.putArray("files");
        files.forEach(f -> stored.addObject().put("path", f.path()).put("size", f.size()).put("sha256", f.sha256()));
        ArrayNode left = o.putArray("skipped");
        skipped.forEach(l -> left.addObject().put("path", l.path()).put("reason", l.reason().name()).put("why", l.why()));
        return o.put("skipped_count", skippedCount).toString().getBytes(StandardCharsets.UTF_8);
    }
}
