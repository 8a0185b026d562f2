package io.rlscheduler.master;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A submitted sweep, as recorded in Redis: its id, name and owner, when it was made, the script
 * and base parameters, the grid and seeds, and its runs' task ids in run order. Read its runs
 * with {@link SchedulerMaster#getTasks}, compare them with {@link SchedulerMaster#compare}.
 * Immutable and thread-safe.
 */
public final class Sweep {

    /** A page of sweeps, newest first, and how many there are in all. */
    public record Page(List<Sweep> sweeps, long total) {
    }

    private final String id;
    private final String name;
    private final String owner;
    private final long createdAtMillis;
    private final String script;
    private final Map<String, Object> parameters;
    private final Map<String, List<Object>> grid;
    private final List<Long> seeds;
    private final String seedParameter;
    private final List<String> runIds;

    Sweep(String id, String name, String owner, long createdAtMillis, String script, Map<String, Object> parameters,
          Map<String, List<Object>> grid, List<Long> seeds, String seedParameter, List<String> runIds) {
        this.id = id;
        this.name = name;
        this.owner = owner;
        this.createdAtMillis = createdAtMillis;
        this.script = script;
        this.parameters = Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
        Map<String, List<Object>> g = new LinkedHashMap<>();
        grid.forEach((k, v) -> g.put(k, Collections.unmodifiableList(new ArrayList<>(v))));
        this.grid = Collections.unmodifiableMap(g);
        this.seeds = List.copyOf(seeds);
        this.seedParameter = seedParameter;
        this.runIds = List.copyOf(runIds);
    }

    static Sweep of(String id, SweepSpec spec, long createdAtMillis) {
        List<String> runIds = new ArrayList<>();
        for (int i = 0; i < spec.size(); i++) {
            runIds.add(SweepSpec.runId(id, i));
        }
        return new Sweep(id, spec.getName(), spec.getBase().getOwner(), createdAtMillis, spec.getBase().getScript(),
                spec.getBase().getParameters(), spec.getGrid(), spec.getSeeds(), spec.getSeedParameter(), runIds);
    }

    /** Returns the sweep id. */
    public String getId() { return id; }

    /** Returns its name, or null. */
    public String getName() { return name; }

    /** Returns the owner of its runs. */
    public String getOwner() { return owner; }

    /** Returns when it was submitted, ms since the epoch (the submitting master's clock). */
    public long getCreatedAtMillis() { return createdAtMillis; }

    /** Returns the script its runs run. */
    public String getScript() { return script; }

    /** Returns the base parameters, before the grid's and the seed's. */
    public Map<String, Object> getParameters() { return parameters; }

    /** Returns the grid: parameter to values. */
    public Map<String, List<Object>> getGrid() { return grid; }

    /** Returns the seeds, empty for none. */
    public List<Long> getSeeds() { return seeds; }

    /** Returns the parameter the seeds are given as. */
    public String getSeedParameter() { return seedParameter; }

    /** Returns its runs' task ids, in run order. */
    public List<String> getRunIds() { return runIds; }

    /** The record as stored in Redis. */
    String toJson() {
        ObjectNode o = Json.object();
        o.put("id", id);
        if (name != null) {
            o.put("name", name);
        }
        o.put("owner", owner);
        o.put("createdAt", createdAtMillis);
        o.put("script", script);
        o.set("parameters", Json.mapper().valueToTree(parameters));
        o.set("grid", Json.mapper().valueToTree(grid));
        ArrayNode s = o.putArray("seeds");
        seeds.forEach(s::add);
        o.put("seedParameter", seedParameter);
        ArrayNode r = o.putArray("runIds");
        runIds.forEach(r::add);
        return o.toString();
    }

    static Sweep fromJson(String json) {
        try {
            JsonNode o = Json.tree(json);
            Map<String, Object> parameters = new LinkedHashMap<>();
            o.path("parameters").fields().forEachRemaining(e -> parameters.put(e.getKey(), value(e.getValue())));
            Map<String, List<Object>> grid = new LinkedHashMap<>();
            o.path("grid").fields().forEachRemaining(e -> {
                List<Object> values = new ArrayList<>();
                e.getValue().forEach(v -> values.add(value(v)));
                grid.put(e.getKey(), values);
            });
            List<Long> seeds = new ArrayList<>();
            o.path("seeds").forEach(v -> seeds.add(v.asLong()));
            List<String> runIds = new ArrayList<>();
            o.path("runIds").forEach(v -> runIds.add(v.asText()));
            return new Sweep(o.path("id").asText(), o.hasNonNull("name") ? o.get("name").asText() : null, o.path("owner").asText(),
                    o.path("createdAt").asLong(), o.path("script").asText(), parameters, grid, seeds,
                    o.path("seedParameter").asText("seed"), runIds);
        } catch (IOException e) {
            throw new UncheckedIOException("a sweep record in Redis is not readable", e);
        }
    }

    private static Object value(JsonNode v) {
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isIntegralNumber()) {
            return v.asLong();
        }
        if (v.isNumber()) {
            return v.asDouble();
        }
        return v.asText();
    }

    /** Whether {@code other} (a sweep recorded before under this id) is the same sweep. */
    String differenceFrom(Sweep other) {
        List<String> d = new ArrayList<>();
        if (!script.equals(other.script)) {
            d.add("script: existing " + other.script + ", submitted " + script);
        }
        if (!parameters.equals(other.parameters)) {
            d.add("parameters: existing " + other.parameters + ", submitted " + parameters);
        }
        if (!seedParameter.equals(other.seedParameter)) {
            d.add("seedParameter: existing " + other.seedParameter + ", submitted " + seedParameter);
        }
        if (!grid.equals(other.grid)) {
            d.add("grid: existing " + other.grid + ", submitted " + grid);
        }
        if (!seeds.equals(other.seeds)) {
            d.add("seeds: existing " + other.seeds + ", submitted " + seeds);
        }
        if (!owner.equals(other.owner)) {
            d.add("owner: existing " + other.owner + ", submitted " + owner);
        }
        return d.isEmpty() ? null : String.join("; ", d);
    }

    @Override
    public String toString() {
        return "Sweep{" + id + (name == null ? "" : " '" + name + "'") + ", " + runIds.size() + " runs of " + script + '}';
    }
}
