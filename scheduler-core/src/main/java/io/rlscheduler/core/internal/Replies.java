package io.rlscheduler.core.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.IllegalTaskStateException;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the JSON replies of the Lua scripts into the core's types. */
final class Replies {

    static final ObjectMapper JSON = io.rlscheduler.core.internal.Json.mapper();

    private Replies() {
    }

    static JsonNode parse(String reply) {
        try {
            return JSON.readTree(reply);
        } catch (JsonProcessingException e) {
            throw new SchedulerException("unreadable reply from a lease script: " + e.getOriginalMessage(), false, e);
        }
    }

    /** Returns a JSON list; cjson writes an empty Lua table as {}, which reads as an empty list here. */
    static List<JsonNode> list(JsonNode node) {
        List<JsonNode> out = new ArrayList<>();
        if (node != null && node.isArray()) {
            node.forEach(out::add);
        }
        return out;
    }

    static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : list(node)) {
            out.add(n.asText());
        }
        return out;
    }

    static Map<String, String> map(JsonNode node) {
        if (node == null || !node.isObject()) {
            return Collections.emptyMap();
        }
        Map<String, String> out = new LinkedHashMap<>();
        node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    static List<Integer> ids(String csv) {
        List<Integer> out = new ArrayList<>();
        if (csv != null && !csv.isEmpty()) {
            for (String part : csv.split(",")) {
                out.add(Integer.parseInt(part));
            }
        }
        return out;
    }

    static String csv(List<Integer> ids) {
        StringBuilder sb = new StringBuilder();
        for (Integer id : ids) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(id);
        }
        return sb.toString();
    }

    static long epoch(JsonNode node) {
        return node == null || node.isNull() || node.asText().isEmpty() ? 0 : Long.parseLong(node.asText());
    }

    static TaskState state(JsonNode node) {
        return node == null || node.isNull() || node.asText().isEmpty() ? null : TaskState.valueOf(node.asText());
    }

    /**
     * Reads a task's value in the tasks hash. The scripts write it as two lines, the record as a
     * JSON object without its history, a newline, then the history as a JSON array (lib.lua,
     * save_task); every number in it is a decimal string, which {@link JsonNode#asLong()} reads.
     */
    static TaskRecord storedTask(String stored, String specJson) {
        int nl = stored.indexOf('\n');
        if (nl < 0) {
            throw new SchedulerException("unreadable task record: no history line", false, null);
        }
        return task(parse(stored.substring(0, nl)), parse(stored.substring(nl + 1)), specJson);
    }

    private static TaskRecord task(JsonNode st, JsonNode historyArray, String specJson) {
        List<TaskTransition> history = new ArrayList<>();
        for (JsonNode h : list(historyArray)) {
            history.add(ValueFactory.get().taskTransition(h.get("at").asLong(), state(h.get("from")), state(h.get("to")),
                    epoch(h.get("epoch")), h.path("worker").asText(), h.path("reason").asText()));
        }
        boolean hasExit = st.path("has_exit_code").asBoolean(false);
        return ValueFactory.get().taskRecord(
                st.get("id").asText(), state(st.get("state")), st.get("priority").asInt(), st.get("seq").asLong(),
                st.get("gpus").asInt(), st.get("cpu").asInt(), st.get("mem").asLong(), map(st.get("selector")),
                st.get("owner").asText(), st.get("trace").asText(), st.get("max_attempts").asInt(),
                st.get("max_lease_losses").asInt(), st.get("attempt").asInt(), st.get("lease_losses").asInt(),
                epoch(st.get("epoch")), st.path("worker").asText(), ids(st.path("gpu_ids").asText()),
                st.path("cancel_requested").asBoolean(false), hasExit ? st.get("exit_code").asInt() : null,
                st.path("error").asText(), st.path("metrics").asText(), st.path("reason").asText(),
                st.get("created_at").asLong(), st.get("updated_at").asLong(), st.path("deadline").asLong(),
                history, specJson == null ? "{}" : specJson, st.path("run_dir").asText(""),
                st.path("log_lines").asLong(-1), st.path("artifact_error").asText(""),
                st.path("log_cut").asLong(-1));
    }

    /**
     * The record submit.lua writes for a new task, built from the submission and the two values
     * only Redis knows (submit sequence and creation time), so the script need not encode it again
     * for the reply. Must match submit.lua's initial record (LeaseScriptsIT compares them).
     */
    static TaskRecord queued(TaskDefinition task, long seq, long at, int maxAttempts, int maxLeaseLosses) {
        return ValueFactory.get().taskRecord(task.getTaskId(), TaskState.QUEUED, task.getPriority(), seq, task.getGpus(),
                task.getCpuSlots(), task.getMemoryBytes(), task.getSelector(), task.getOwner(), task.getTraceId(),
                maxAttempts, maxLeaseLosses, 0, 0, 0L, "", List.of(), false, null, "", "", "submitted", at, at, 0L,
                List.of(ValueFactory.get().taskTransition(at, null, TaskState.QUEUED, 0L, "", "submitted")), task.getSpecJson(), "", -1, "", -1);
    }

    /**
     * Reads one answer of ack.lua or finish.lua; {@code r="ERROR"} throws: a move the transition
     * table refused as {@link IllegalTaskStateException}, an argument the script refused as
     * {@link IllegalArgumentException} ({@link RedisFailures#itemError}).
     */
    static WriteResult write(JsonNode r) {
        String code = r.get("r").asText();
        if ("ERROR".equals(code)) {
            throw RedisFailures.itemError(r.path("error").asText());
        }
        WriteStatus status = "OK".equals(code) ? WriteStatus.APPLIED : WriteStatus.valueOf(code);
        return new WriteResult(status, epoch(r.get("epoch")), state(r.get("state")));
    }

    static RequeueResult requeue(JsonNode r) {
        return new RequeueResult(strings(r.get("requeued")), strings(r.get("failed")), strings(r.get("cancelled")),
                r.path("more").asBoolean(false));
    }

    static LeaderStatus leader(JsonNode r) {
        return new LeaderStatus(r.path("leader").asText(""), epoch(r.get("epoch")), r.path("address").asText(""),
                r.path("self").asBoolean(false), r.path("deadline").asLong(0));
    }

    static WorkerInfo worker(JsonNode w) {
        List<TaskLease> tasks = new ArrayList<>();
        for (JsonNode t : list(w.get("tasks"))) {
            tasks.add(new TaskLease(t.get("id").asText(), epoch(t.get("epoch"))));
        }
        return ValueFactory.get().workerInfo(w.get("id").asText(), w.get("session").asText(), map(w.get("labels")),
                WorkerState.valueOf(w.get("state").asText()), w.get("cpu").asInt(), w.get("mem").asLong(),
                ids(w.get("gpus").asText()), w.get("free_cpu").asInt(), w.get("free_mem").asLong(),
                ids(w.get("free_gpus").asText()), tasks, w.get("heartbeat_at").asLong(),
                w.get("liveness_deadline").asLong());
    }
}
