package io.rlscheduler.http.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.rlscheduler.master.SweepSpec;
import io.rlscheduler.master.TaskSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a run's spec and a sweep from their JSON (docs/http.md). Strict: an unknown field, a value
 * of the wrong type or out of range is an {@code INVALID_SPEC} naming it, and nothing is submitted.
 * The owner is the caller's user; another owner only for an admin ({@code FORBIDDEN}).
 */
final class Specs {

    private static final Set<String> SPEC_FIELDS = Set.of("script", "parameters", "args", "env", "gpus", "cpuSlots",
            "memoryBytes", "priority", "timeoutSeconds", "maxAttempts", "selector", "taskId", "owner", "checkpointsKept",
            "maxCheckpointBytes");
    private static final Set<String> SWEEP_FIELDS = Set.of("base", "grid", "seeds", "seedParameter", "name", "id");

    private Specs() {
    }

    static TaskSpec run(JsonNode body, String user, boolean admin) {
        return builder(body, user, admin, "").build();
    }

    static SweepSpec sweep(JsonNode body, String user, boolean admin) {
        unknown(body, SWEEP_FIELDS, "");
        JsonNode base = body.get("base");
        if (base == null || !base.isObject()) {
            throw ApiException.invalidSpec("base: required, the runs' spec as an object");
        }
        if (base.has("taskId")) {
            throw ApiException.invalidSpec("base.taskId: a sweep's runs get their ids from the sweep's");
        }
        try {
            SweepSpec.Builder b = SweepSpec.of(builder(base, user, admin, "base.").build());
            JsonNode grid = body.get("grid");
            if (grid != null && !grid.isNull()) {
                if (!grid.isObject()) {
                    throw ApiException.invalidSpec("grid: must be an object of parameter name to a list of values");
                }
                Iterator<Map.Entry<String, JsonNode>> axes = grid.fields();
                while (axes.hasNext()) {
                    Map.Entry<String, JsonNode> axis = axes.next();
                    if (!axis.getValue().isArray()) {
                        throw ApiException.invalidSpec("grid." + axis.getKey() + ": must be a list of values");
                    }
                    List<Object> values = new ArrayList<>();
                    for (JsonNode v : axis.getValue()) {
                        values.add(scalar(v, "grid." + axis.getKey()));
                    }
                    b.grid(axis.getKey(), values);
                }
            }
            JsonNode seeds = body.get("seeds");
            if (seeds != null && !seeds.isNull()) {
                if (!seeds.isArray()) {
                    throw ApiException.invalidSpec("seeds: must be a list of whole numbers");
                }
                List<Long> list = new ArrayList<>();
                for (JsonNode s : seeds) {
                    if (!s.isIntegralNumber() || !s.canConvertToLong()) {
                        throw ApiException.invalidSpec("seeds: must be whole numbers, found " + s);
                    }
                    list.add(s.asLong());
                }
                b.seeds(list);
            }
            if (body.hasNonNull("seedParameter")) {
                b.seedParameter(text(body, "seedParameter", ""));
            }
            if (body.hasNonNull("name")) {
                b.name(text(body, "name", ""));
            }
            if (body.hasNonNull("id")) {
                b.id(text(body, "id", ""));
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            throw ApiException.invalidSpec(e.getMessage());
        }
    }

    private static TaskSpec.Builder builder(JsonNode spec, String user, boolean admin, String prefix) {
        unknown(spec, SPEC_FIELDS, prefix);
        String field = "script";
        try {
            TaskSpec.Builder b = TaskSpec.python(text(spec, "script", prefix));
            field = "parameters";
            JsonNode params = spec.get("parameters");
            if (params != null && !params.isNull()) {
                if (!params.isObject()) {
                    throw ApiException.invalidSpec(prefix + "parameters: must be an object");
                }
                Iterator<Map.Entry<String, JsonNode>> it = params.fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> p = it.next();
                    field = "parameters." + p.getKey();
                    param(b, p.getKey(), scalar(p.getValue(), prefix + field));
                }
            }
            field = "args";
            JsonNode args = spec.get("args");
            if (args != null && !args.isNull()) {
                if (!args.isArray()) {
                    throw ApiException.invalidSpec(prefix + "args: must be a list of strings");
                }
                for (JsonNode a : args) {
                    if (!a.isTextual()) {
                        throw ApiException.invalidSpec(prefix + "args: must be strings, found " + a);
                    }
                    b.arg(a.asText());
                }
            }
            field = "env";
            for (Map.Entry<String, String> e : stringMap(spec, "env", prefix).entrySet()) {
                b.env(e.getKey(), e.getValue());
            }
            field = "selector";
            for (Map.Entry<String, String> e : stringMap(spec, "selector", prefix).entrySet()) {
                b.selector(e.getKey(), e.getValue());
            }
            field = "gpus";
            if (spec.has("gpus")) {
                b.gpus(integer(spec, "gpus", prefix));
            }
            field = "cpuSlots";
            if (spec.has("cpuSlots")) {
                b.cpuSlots(integer(spec, "cpuSlots", prefix));
            }
            field = "memoryBytes";
            if (spec.has("memoryBytes")) {
                b.memoryBytes(whole(spec, "memoryBytes", prefix));
            }
            field = "priority";
            if (spec.has("priority")) {
                b.priority(integer(spec, "priority", prefix));
            }
            field = "timeoutSeconds";
            if (spec.has("timeoutSeconds") && !spec.get("timeoutSeconds").isNull()) {
                b.timeout(Duration.ofSeconds(whole(spec, "timeoutSeconds", prefix)));
            }
            field = "maxAttempts";
            if (spec.has("maxAttempts")) {
                b.maxAttempts(integer(spec, "maxAttempts", prefix));
            }
            field = "checkpointsKept";
            if (spec.has("checkpointsKept")) {
                b.checkpointsKept(integer(spec, "checkpointsKept", prefix));
            }
            field = "maxCheckpointBytes";
            if (spec.has("maxCheckpointBytes")) {
                b.maxCheckpointBytes(whole(spec, "maxCheckpointBytes", prefix));
            }
            field = "taskId";
            if (spec.hasNonNull("taskId")) {
                b.taskId(text(spec, "taskId", prefix));
            }
            field = "owner";
            String owner = spec.hasNonNull("owner") ? text(spec, "owner", prefix) : user;
            if (owner == null) {
                throw ApiException.forbidden("submitting needs a token");
            }
            if (!owner.equals(user) && !admin) {
                throw ApiException.forbidden("only an admin may submit for another owner (" + owner + "); your user is " + user);
            }
            b.owner(owner);
            return b;
        } catch (IllegalArgumentException e) {
            throw ApiException.invalidSpec(prefix + field + ": " + e.getMessage());
        }
    }

    private static void unknown(JsonNode node, Set<String> known, String prefix) {
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!known.contains(name)) {
                throw ApiException.invalidSpec(prefix + name + ": not a field of " + (prefix.isEmpty() && known == SWEEP_FIELDS
                        ? "a sweep" : "a run's spec") + " (known: " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
            }
        }
    }

    private static void param(TaskSpec.Builder b, String name, Object v) {
        if (v instanceof Boolean x) {
            b.param(name, x);
        } else if (v instanceof Long x) {
            b.param(name, x);
        } else if (v instanceof Double x) {
            b.param(name, x);
        } else {
            b.param(name, (String) v);
        }
    }

    private static Object scalar(JsonNode v, String field) {
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isIntegralNumber()) {
            if (!v.canConvertToLong()) {
                throw ApiException.invalidSpec(field + ": " + v + " does not fit 64 bits");
            }
            return v.asLong();
        }
        if (v.isNumber()) {
            return v.asDouble();
        }
        if (v.isTextual()) {
            return v.asText();
        }
        throw ApiException.invalidSpec(field + ": must be a string, a number or a boolean, found " + v.getNodeType());
    }

    private static String text(JsonNode node, String field, String prefix) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw ApiException.invalidSpec(prefix + field + ": " + (v == null ? "required" : "must be a string"));
        }
        return v.asText();
    }

    private static int integer(JsonNode node, String field, String prefix) {
        JsonNode v = node.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
            throw ApiException.invalidSpec(prefix + field + ": must be a whole number");
        }
        return v.asInt();
    }

    private static long whole(JsonNode node, String field, String prefix) {
        JsonNode v = node.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
            throw ApiException.invalidSpec(prefix + field + ": must be a whole number");
        }
        return v.asLong();
    }

    private static Map<String, String> stringMap(JsonNode node, String field, String prefix) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return Map.of();
        }
        if (!v.isObject()) {
            throw ApiException.invalidSpec(prefix + field + ": must be an object of strings");
        }
        Map<String, String> map = new java.util.LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = v.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw ApiException.invalidSpec(prefix + field + "." + e.getKey() + ": must be a string");
            }
            map.put(e.getKey(), e.getValue().asText());
        }
        return map;
    }
}
