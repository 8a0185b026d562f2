package io.rlscheduler.http.internal;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import io.rlscheduler.core.Reservation;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.master.ApiTokenInfo;
import io.rlscheduler.master.Artifact;
import io.rlscheduler.master.HealthSnapshot;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.MetricPoint;
import io.rlscheduler.master.PendingReason;
import io.rlscheduler.master.RunComparison;
import io.rlscheduler.master.Sweep;
import java.util.Map;

/** The JSON forms of the API's answers (docs/http.md). */
final class Views {

    private Views() {
    }

    static ObjectNode object() {
        return Responses.JSON.createObjectNode();
    }

    static JsonNode value(Object v) {
        return Responses.JSON.valueToTree(v);
    }

    static ObjectNode run(TaskRecord r, String sweepId) {
        return run(r, sweepId, true);
    }

    /** A run; with {@code showEnv} false its environment's values are null and {@code envHidden} true. */
    static ObjectNode run(TaskRecord r, String sweepId, boolean showEnv) {
        ObjectNode o = object();
        o.put("id", r.getTaskId());
        o.put("state", r.getState().name());
        o.put("owner", r.getOwner());
        JsonNode spec = spec(r);
        o.put("script", spec.path("script").asText(null));
        o.set("parameters", spec.path("parameters").isObject() ? spec.get("parameters") : object());
        if (sweepId != null) {
            o.put("sweep", sweepId);
        } else {
            o.putNull("sweep");
        }
        o.put("gpus", r.getGpus());
        o.put("cpuSlots", r.getCpuSlots());
        o.put("memoryBytes", r.getMemoryBytes());
        o.put("priority", r.getPriority());
        o.set("selector", value(r.getSelector()));
        o.put("attempt", r.getAttempt());
        o.put("maxAttempts", r.getMaxAttempts());
        o.put("epoch", r.getEpoch());
        putText(o, "workerId", r.getWorkerId());
        o.set("gpuIds", value(r.getGpuIds()));
        if (r.getExitCode() == null) {
            o.putNull("exitCode");
        } else {
            o.put("exitCode", r.getExitCode());
        }
        putText(o, "error", r.getError());
        putText(o, "reason", r.getReason());
        putText(o, "artifactError", r.getArtifactError());
        o.set("finalMetrics", finalMetrics(r));
        o.put("createdAt", r.getCreatedAtMillis());
        o.put("updatedAt", r.getUpdatedAtMillis());
        o.put("logLines", r.getLogLines());
        o.put("logCut", r.isLogCut());
        o.put("cancelRequested", r.isCancelRequested());
        o.put("timeoutMs", spec.path("timeoutMs").asLong(0));
        o.set("args", spec.path("arguments").isArray() ? spec.get("arguments") : Responses.JSON.createArrayNode());
        ObjectNode env = object();
        spec.path("environment").fields().forEachRemaining(e -> {
            if (showEnv) {
                env.set(e.getKey(), e.getValue());
            } else {
                env.putNull(e.getKey());
            }
        });
        o.set("env", env);
        o.put("envHidden", !showEnv && env.size() > 0);
        ArrayNode history = o.putArray("history");
        for (TaskTransition t : r.getHistory()) {
            ObjectNode h = history.addObject();
            h.put("at", t.getAtMillis());
            h.put("from", t.getFrom() == null ? null : t.getFrom().name());
            h.put("to", t.getTo() == null ? null : t.getTo().name());
            h.put("epoch", t.getEpoch());
            putText(h, "workerId", t.getWorkerId());
            putText(h, "reason", t.getReason());
        }
        return o;
    }

    /** A run just submitted under a new id, from its spec: QUEUED, no attempt yet. */
    static ObjectNode submitted(io.rlscheduler.master.TaskSpec spec) {
        ObjectNode o = object();
        o.put("id", spec.getTaskId());
        o.put("state", "QUEUED");
        o.put("owner", spec.getOwner());
        o.put("script", spec.getScript());
        ObjectNode params = o.putObject("parameters");
        spec.getParameters().forEach((k, v) -> {
            if (v instanceof Long l) {
                params.put(k, l);
            } else if (v instanceof Double d) {
                params.put(k, d);
            } else if (v instanceof Boolean b) {
                params.put(k, b);
            } else {
                params.put(k, String.valueOf(v));
            }
        });
        o.putNull("sweep");
        o.put("gpus", spec.getGpus());
        o.put("cpuSlots", spec.getCpuSlots());
        o.put("memoryBytes", spec.getMemoryBytes());
        o.put("priority", spec.getPriority());
        ObjectNode selector = o.putObject("selector");
        spec.getSelector().forEach(selector::put);
        o.put("attempt", 0);
        o.put("timeoutMs", spec.getTimeout() == null ? 0 : spec.getTimeout().toMillis());
        spec.getArguments().forEach(o.putArray("args")::add);
        ObjectNode env = o.putObject("env");
        spec.getEnvironment().forEach(env::put);
        return o;
    }

    static JsonNode spec(TaskRecord r) {
        try {
            return r.getSpecJson() == null ? object() : Responses.JSON.readTree(r.getSpecJson());
        } catch (java.io.IOException e) {
            return object();
        }
    }

    static JsonNode finalMetrics(TaskRecord r) {
        String json = r.getFinalMetricsJson();
        if (json == null || json.isEmpty()) {
            return object();
        }
        try {
            JsonNode n = Responses.JSON.readTree(json);
            return n != null && n.isObject() ? n : object();
        } catch (java.io.IOException e) {
            return object();
        }
    }

    static void putText(ObjectNode o, String field, String value) {
        if (value == null || value.isEmpty()) {
            o.putNull(field);
        } else {
            o.put(field, value);
        }
    }

    static ObjectNode why(PendingReason p) {
        ObjectNode o = object();
        o.put("code", p.getCode().name());
        o.put("message", p.getMessage());
        o.put("position", p.getQueuePosition());
        ArrayNode reasons = o.putArray("reasons");
        for (PendingReason.Reason reason : p.getReasons()) {
            reasons.addObject().put("code", reason.code().name()).put("message", reason.message());
        }
        return o;
    }

    static ObjectNode provenance(AttemptProvenance p) {
        ObjectNode o = object();
        o.put("attempt", p.getAttempt());
        o.put("epoch", p.getEpoch());
        putText(o, "workerId", p.getWorkerId());
        putText(o, "hostname", p.getHostname());
        putText(o, "scriptFile", p.getScriptFile());
        putText(o, "scriptSha256", p.getScriptSha256());
        putText(o, "gitCommit", p.getGitCommit());
        o.put("gitDirty", p.isGitDirty());
        putText(o, "interpreter", p.getInterpreter());
        putText(o, "interpreterVersion", p.getInterpreterVersion());
        ArrayNode gpus = o.putArray("gpus");
        p.getGpus().forEach(g -> gpus.addObject().put("index", g.getIndex()).put("uuid", g.getUuid()));
        return o;
    }

    static ObjectNode artifact(Artifact a) {
        ObjectNode o = object();
        o.put("kind", a.getKind().name());
        o.put("attempt", a.getAttempt());
        putText(o, "checkpointId", a.getCheckpointId());
        o.put("path", a.getPath());
        o.put("key", a.getKey());
        o.put("size", a.getSize());
        putText(o, "sha256", a.getSha256());
        return o;
    }

    static String lineId(LogRecord r) {
        return r.getAttempt() + ":" + r.getSequence();
    }

    static ObjectNode line(LogRecord r) {
        ObjectNode o = object();
        o.put("id", lineId(r));
        o.put("attempt", r.getAttempt());
        o.put("seq", r.getSequence());
        o.put("stream", r.getStream().name());
        o.put("text", r.getText());
        return o;
    }

    /** A line as a whole {@code line} event, appended to {@code b}: the live log's hot path (the data as {@link #line}). */
    static void lineEvent(LogRecord r, StringBuilder b) {
        b.append("id: ").append(r.getAttempt()).append(':').append(r.getSequence()).append("\nevent: line\ndata: ");
        b.append("{\"id\":\"").append(r.getAttempt()).append(':').append(r.getSequence())
                .append("\",\"attempt\":").append(r.getAttempt()).append(",\"seq\":").append(r.getSequence())
                .append(",\"stream\":\"").append(r.getStream().name()).append("\",\"text\":\"");
        quote(r.getText(), b);
        b.append("\"}\n\n");
    }

    /** Appends {@code text} as the inside of a JSON string: plain characters at once, the rest by Jackson's rules. */
    static void quote(String text, StringBuilder b) {
        int n = text.length();
        int from = 0;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == '"' || c == '\\') {
                b.append(text, from, i);
                JsonStringEncoder.getInstance().quoteAsString(text.substring(i, i + 1), b);
                from = i + 1;
            }
        }
        b.append(text, from, n);
    }

    static ObjectNode end(LogRecord r) {
        ObjectNode o = object();
        o.put("state", r.getFinalState() == null ? null : r.getFinalState().name());
        o.put("complete", r.isComplete());
        putText(o, "note", r.getNote());
        o.put("logCut", r.isLogCut());
        return o;
    }

    static ObjectNode point(MetricPoint p) {
        ObjectNode o = object();
        o.put("id", p.getAttempt() + ":" + p.getSequence());
        o.put("attempt", p.getAttempt());
        o.put("seq", p.getSequence());
        o.set("values", value(p.getValues()));
        return o;
    }

    static ObjectNode event(TaskEvent e) {
        ObjectNode o = object();
        o.put("kind", e.getKind().name());
        putText(o, "id", e.getTaskId());
        o.put("from", e.getFrom() == null ? null : e.getFrom().name());
        o.put("to", e.getTo() == null ? null : e.getTo().name());
        o.put("epoch", e.getEpoch());
        o.put("via", e.getVia() == null ? null : e.getVia().name());
        putText(o, "reason", e.getReason());
        return o;
    }

    static ObjectNode sweep(Sweep s) {
        ObjectNode o = object();
        o.put("id", s.getId());
        putText(o, "name", s.getName());
        o.put("owner", s.getOwner());
        o.put("createdAt", s.getCreatedAtMillis());
        o.put("script", s.getScript());
        o.set("parameters", value(s.getParameters()));
        o.set("grid", value(s.getGrid()));
        o.set("seeds", value(s.getSeeds()));
        o.put("seedParameter", s.getSeedParameter());
        o.set("runIds", value(s.getRunIds()));
        return o;
    }

    static ObjectNode comparison(RunComparison c, String metric, boolean higherIsBetter) {
        ObjectNode o = object();
        ArrayNode runs = o.putArray("runs");
        for (RunComparison.Run run : c.getRuns()) {
            ObjectNode r = runs.addObject();
            r.put("id", run.getTaskId());
            r.put("state", run.getState().name());
            r.put("script", run.getScript());
            r.set("parameters", value(run.getParameters()));
            r.set("finalMetrics", value(run.getFinalMetrics()));
            String sha = run.getProvenance().isEmpty() ? null : run.getProvenance().get(run.getProvenance().size() - 1).getScriptSha256();
            putText(r, "codeSha256", sha);
        }
        o.set("varying", value(c.getVaryingParameters()));
        o.put("codeDiffering", c.isCodeDiffering());
        putText(o, "metric", metric);
        o.put("higherIsBetter", higherIsBetter);
        String best = metric == null ? null : c.best(metric, higherIsBetter).map(RunComparison.Run::getTaskId).orElse(null);
        putText(o, "best", best);
        return o;
    }

    static ObjectNode token(ApiTokenInfo t) {
        ObjectNode o = object();
        o.put("id", t.id());
        o.put("user", t.user());
        o.put("admin", t.admin());
        o.put("createdAt", t.createdAtMillis());
        return o;
    }

    static ObjectNode limits(OwnerLimits l) {
        ObjectNode o = object();
        l.getMaxGpus().ifPresent(v -> o.put("maxGpus", v));
        l.getMaxRunning().ifPresent(v -> o.put("maxRunning", v));
        l.getMaxQueued().ifPresent(v -> o.put("maxQueued", v));
        l.getMaxGpusPerTask().ifPresent(v -> o.put("maxGpusPerTask", v));
        l.getRate().ifPresent(v -> o.put("rate", v));
        l.getBurst().ifPresent(v -> o.put("burst", v));
        l.getWeight().ifPresent(v -> o.put("weight", v));
        return o;
    }

    static ObjectNode share(OwnerShare s) {
        ObjectNode o = object();
        o.put("owner", s.getOwner());
        o.put("usage", s.getUsage());
        o.put("weight", s.getWeight());
        o.put("usagePerShare", s.getUsagePerShare());
        o.put("heldGpus", s.getHeldGpus());
        o.put("running", s.getRunning());
        o.put("queued", s.getQueued());
        o.set("limits", limits(s.getLimits()));
        return o;
    }

    static ObjectNode reservation(Reservation r) {
        ObjectNode o = object();
        o.put("taskId", r.getTaskId());
        o.put("owner", r.getOwner());
        o.put("workerId", r.getWorkerId());
        o.put("gpus", r.getGpus());
        o.put("since", r.getSince().toEpochMilli());
        return o;
    }

    static ObjectNode health(HealthSnapshot h) {
        ObjectNode o = object();
        o.put("masterId", h.getMasterId());
        o.put("leader", h.isLeader());
        o.put("transport", h.getTransport());
        o.put("connectedWorkers", h.getConnectedWorkers());
        ObjectNode byState = o.putObject("workersByState");
        h.getWorkersByState().forEach((k, v) -> byState.put(k.name(), v));
        o.put("queueDepth", h.getQueueDepth());
        o.put("parkedTasks", h.getParkedTasks());
        o.put("assignedTasks", h.getAssignedTasks());
        o.put("runningTasks", h.getRunningTasks());
        o.put("dispatchRounds", h.getDispatchRounds());
        o.put("tasksDispatched", h.getTasksDispatched());
        o.put("reaperPasses", h.getReaperPasses());
        o.put("reaperFailures", h.getReaperFailures());
        o.put("eventGaps", h.getEventGaps());
        o.put("openLogFiles", h.getOpenLogFiles());
        o.put("logFollowers", h.getLogFollowers());
        o.put("logUploadsPending", h.getLogUploadsPending());
        o.put("logUploadsRefused", h.getLogUploadsRefused());
        o.put("logsCut", h.getLogsCut());
        o.put("knownAttemptHolders", h.getKnownAttemptHolders());
        return o;
    }

    static Map<String, String> none() {
        return Map.of();
    }
}
