package io.rlscheduler.http.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.master.ApiToken;
import io.rlscheduler.master.ApiTokenInfo;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.WorkerUsage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The routes of the lab's views (workers and their GPUs, the queue, owners) and of the caller and its tokens. */
final class LabRoutes {

    /** The most tokens a user makes with their own token; an admin may make more. */
    private static final int MAX_OWN_TOKENS = 20;

    private final SchedulerMaster master;
    private final TokenCache tokens;

    LabRoutes(SchedulerMaster master, TokenCache tokens) {
        this.master = master;
        this.tokens = tokens;
    }

    // --- the lab

    void workers(Exchange ex) {
        List<WorkerInfo> workers = master.listWorkers();
        Map<String, List<WorkerUsage.Gpu>> readings = master.gpuReadings();
        List<String> leased = new ArrayList<>();
        workers.forEach(w -> w.getTasks().forEach(t -> leased.add(t.getTaskId())));
        Map<Integer, String> none = Map.of();
        Map<String, Map<Integer, String>> gpuRuns = new HashMap<>();
        for (int i = 0; i < leased.size(); i += 1000) {
            for (TaskRecord r : master.getTasks(leased.subList(i, Math.min(leased.size(), i + 1000)))) {
                if (r.getWorkerId() != null) {
                    r.getGpuIds().forEach(g -> gpuRuns.computeIfAbsent(r.getWorkerId(), k -> new HashMap<>()).put(g, r.getTaskId()));
                }
            }
        }
        ObjectNode o = Views.object();
        ArrayNode list = o.putArray("workers");
        for (WorkerInfo w : workers) {
            ObjectNode n = list.addObject();
            n.put("id", w.getWorkerId());
            n.put("state", w.getState().name());
            n.set("labels", Views.value(w.getLabels()));
            n.put("cpuSlots", w.getCpuSlots());
            n.put("freeCpuSlots", w.getFreeCpuSlots());
            n.put("memoryBytes", w.getMemoryBytes());
            n.put("freeMemoryBytes", w.getFreeMemoryBytes());
            n.put("lastHeartbeat", w.getLastHeartbeatMillis());
            ArrayNode runs = n.putArray("runs");
            w.getTasks().stream().map(TaskLease::getTaskId).forEach(runs::add);
            List<WorkerUsage.Gpu> read = readings.getOrDefault(w.getWorkerId(), List.of());
            Map<Integer, String> held = gpuRuns.getOrDefault(w.getWorkerId(), none);
            ArrayNode gpus = n.putArray("gpus");
            for (Integer index : w.getGpuIds()) {
                ObjectNode g = gpus.addObject();
                g.put("index", index);
                Optional<WorkerUsage.Gpu> measured = read.stream().filter(x -> x.getIndex() == index).findFirst();
                Views.putText(g, "uuid", measured.map(WorkerUsage.Gpu::getUuid).orElse(null));
                Views.putText(g, "name", measured.map(WorkerUsage.Gpu::getName).orElse(null));
                if (measured.isPresent()) {
                    g.put("memoryTotalBytes", measured.get().getMemoryTotalBytes());
                    g.put("memoryUsedBytes", measured.get().getMemoryUsedBytes());
                    g.put("utilizationPercent", measured.get().getUtilizationPercent());
                } else {
                    g.putNull("memoryTotalBytes");
                    g.putNull("memoryUsedBytes");
                    g.putNull("utilizationPercent");
                }
                g.put("free", w.getFreeGpuIds().contains(index));
                Views.putText(g, "run", held.get(index));
            }
        }
        ex.ok(o);
    }

    void queue(Exchange ex) {
        int limit = ex.intQuery("limit", 50, 1, 200);
        TaskPage page = master.listTasks(TaskState.QUEUED, 0, limit);
        Map<String, String> sweeps = master.sweepsOf(page.getTasks().stream().map(TaskRecord::getTaskId).toList());
        ObjectNode o = Views.object();
        o.put("total", page.getTotal());
        ArrayNode runs = o.putArray("runs");
        for (TaskRecord r : page.getTasks()) {
            ObjectNode run = Routes.runView(ex, r, sweeps.get(r.getTaskId()));
            try {
                run.set("why", Views.why(master.whyPending(r.getTaskId())));
            } catch (TaskNotFoundException e) {
                continue; // removed since the page was read
            }
            runs.add(run);
        }
        ex.ok(o);
    }

    void owners(Exchange ex) {
        ObjectNode o = Views.object();
        ArrayNode owners = o.putArray("owners");
        master.sharing().shares().forEach(s -> owners.add(Views.share(s)));
        ArrayNode reservations = o.putArray("reservations");
        master.sharing().reservations().forEach(r -> reservations.add(Views.reservation(r)));
        o.set("defaults", Views.limits(master.sharing().getDefaults()));
        o.put("halfLifeSeconds", master.sharing().getHalfLife().toSeconds());
        o.put("reserveAfterSeconds", master.sharing().getReserveAfter().toSeconds());
        ex.ok(o);
    }

    // --- tokens, the caller, the documents

    void me(Exchange ex) {
        ex.ok(Views.object().put("user", ex.user()).put("admin", ex.isAdmin()));
    }

    void createToken(Exchange ex) {
        JsonNode body = ex.request.content().readableBytes() == 0 ? Views.object() : ex.jsonBody();
        String user = body.hasNonNull("user") ? body.get("user").asText() : ex.user();
        boolean admin = body.path("admin").asBoolean(false);
        if (!ex.isAdmin() && (!user.equals(ex.user()) || admin)) {
            throw ApiException.forbidden(admin ? "only an admin may make admin tokens" : "only an admin may make tokens for another user");
        }
        if (!TaskIds.isValid(user)) {
            throw ApiException.badRequest("not a valid user name: '" + user + "'");
        }
        if (!ex.isAdmin() && master.apiTokens().list().stream().filter(t -> t.user().equals(user)).count() >= MAX_OWN_TOKENS) {
            throw new ApiException(HttpResponseStatus.CONFLICT, "CONFLICT", "user " + user + " has " + MAX_OWN_TOKENS
                    + " tokens, the most a user makes alone; revoke one first (an admin may make more)");
        }
        ApiToken token = master.apiTokens().create(user, admin);
        ObjectNode o = Views.token(token.getInfo());
        o.put("token", token.getSecret());
        ex.json(HttpResponseStatus.CREATED, o);
    }

    void listTokens(Exchange ex) {
        ObjectNode o = Views.object();
        ArrayNode list = o.putArray("tokens");
        master.apiTokens().list().stream().filter(t -> ex.isAdmin() || t.user().equals(ex.user()))
                .forEach(t -> list.add(Views.token(t)));
        ex.ok(o);
    }

    void revokeToken(Exchange ex) {
        String id = ex.pathParam("id");
        ApiTokenInfo token = master.apiTokens().list().stream().filter(t -> t.id().equals(id)).findFirst()
                .orElseThrow(() -> ApiException.notFound("no token " + id));
        if (!ex.isAdmin() && !token.user().equals(ex.user())) {
            throw ApiException.forbidden("token " + id + " is another user's");
        }
        master.apiTokens().revoke(id);
        tokens.revoked(id);
        ex.answered = HttpResponseStatus.NO_CONTENT;
        Responses.bytes(ex.channel, ex.keepAlive, HttpResponseStatus.NO_CONTENT, "application/json", Unpooled.EMPTY_BUFFER, null);
    }

}
