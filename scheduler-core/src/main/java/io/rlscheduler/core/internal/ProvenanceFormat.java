package io.rlscheduler.core.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.SchedulerException;
import java.util.ArrayList;
import java.util.List;

/**
 * The stored form of an {@link AttemptProvenance}: one JSON object per attempt, the value of the
 * attempt number's field in the task's provenance hash ({@link Keys#provenance}). The task id and
 * the attempt number are the key and the field, not repeated inside. provenance.lua stores the
 * object as given and never parses it.
 *
 * <pre>
 *   epoch                decimal text (epochs exceed a double's exact range)
 *   worker               worker id
 *   host                 hostname                        absent when unknown
 *   script               script file, absolute           absent for an executor that runs no file
 *   sha256               the script's SHA-256, hex       absent when no file or unreadable
 *   git_commit           40 hex digits                   absent when not in a work tree
 *   git_dirty            true                            absent when clean or not in a work tree
 *   interpreter          e.g. python3                    absent when none
 *   interpreter_version  e.g. Python 3.11.7              absent when unknown
 *   gpus                 [{"index": 0, "uuid": "GPU-..."}, {"index": 1}]   uuid absent when unknown
 * </pre>
 */
public final class ProvenanceFormat {

    private ProvenanceFormat() {
    }

    /**
     * Returns a provenance of these values (see the getters of {@link AttemptProvenance}; null
     * where one is not known).
     *
     * @param gpuIds   the GPU ids the attempt was given, ascending
     * @param gpuUuids for each of them its UUID, or null when not known; as many as {@code gpuIds}
     * @throws IllegalArgumentException if the two GPU lists differ in length
     */
    public static AttemptProvenance of(String taskId, int attempt, long epoch, String workerId, String hostname,
                                       String scriptFile, String scriptSha256, String gitCommit, boolean gitDirty,
                                       String interpreter, String interpreterVersion, List<Integer> gpuIds,
                                       List<String> gpuUuids) {
        return ValueFactory.get().attemptProvenance(taskId, attempt, epoch, workerId, hostname, scriptFile, scriptSha256,
                gitCommit, gitDirty, interpreter, interpreterVersion, gpuIds, gpuUuids);
    }

    /** Returns the stored JSON of {@code p}. */
    static String encode(AttemptProvenance p) {
        ObjectNode o = Json.object();
        o.put("epoch", Long.toString(p.getEpoch()));
        o.put("worker", p.getWorkerId());
        putIfKnown(o, "host", p.getHostname());
        putIfKnown(o, "script", p.getScriptFile());
        putIfKnown(o, "sha256", p.getScriptSha256());
        putIfKnown(o, "git_commit", p.getGitCommit());
        if (p.isGitDirty()) {
            o.put("git_dirty", true);
        }
        putIfKnown(o, "interpreter", p.getInterpreter());
        putIfKnown(o, "interpreter_version", p.getInterpreterVersion());
        ArrayNode gpus = o.putArray("gpus");
        for (AttemptProvenance.Gpu gpu : p.getGpus()) {
            ObjectNode g = gpus.addObject().put("index", gpu.getIndex());
            putIfKnown(g, "uuid", gpu.getUuid());
        }
        return o.toString();
    }

    private static void putIfKnown(ObjectNode o, String name, String value) {
        if (value != null) {
            o.put(name, value);
        }
    }

    /**
     * Reads the stored JSON of attempt {@code attempt} of {@code taskId}.
     *
     * @throws SchedulerException (not retryable) if it is not such an object (edited by hand)
     */
    static AttemptProvenance decode(String taskId, int attempt, String json) {
        JsonNode o;
        try {
            o = Json.tree(json);
        } catch (JsonProcessingException e) {
            throw unreadable(taskId, attempt, e.getOriginalMessage(), e);
        }
        if (o == null || !o.isObject() || !o.path("epoch").isTextual() || !o.path("worker").isTextual()) {
            throw unreadable(taskId, attempt, "not a provenance object", null);
        }
        List<Integer> ids = new ArrayList<>();
        List<String> uuids = new ArrayList<>();
        for (JsonNode g : Replies.list(o.get("gpus"))) {
            ids.add(g.path("index").asInt());
            uuids.add(text(g, "uuid"));
        }
        long epoch;
        try {
            epoch = Long.parseLong(o.get("epoch").asText());
        } catch (NumberFormatException e) {
            throw unreadable(taskId, attempt, "epoch is not a number", e);
        }
        return of(taskId, attempt, epoch, o.get("worker").asText(), text(o, "host"), text(o, "script"),
                text(o, "sha256"), text(o, "git_commit"), o.path("git_dirty").asBoolean(false), text(o, "interpreter"),
                text(o, "interpreter_version"), ids, uuids);
    }

    private static String text(JsonNode o, String name) {
        JsonNode v = o.get(name);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static SchedulerException unreadable(String taskId, int attempt, String why, Exception cause) {
        return new SchedulerException("task " + taskId + " attempt " + attempt + ": its stored provenance is not readable: "
                + why, false, cause);
    }
}
