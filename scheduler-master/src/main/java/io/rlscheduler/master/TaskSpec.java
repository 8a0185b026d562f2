package io.rlscheduler.master;

import io.rlscheduler.core.internal.Json;
import io.rlscheduler.core.internal.ReservedEnvironment;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.internal.TaskDefinition;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * A training run to submit: a Python script (relative to the workers' script roots), its
 * parameters, the resources it needs and how to treat it. Built with {@link #python(String)};
 * every setter validates at once, so a bad spec fails in the caller's code with a clear message
 * and nothing is written anywhere. Immutable and thread-safe.
 *
 * <pre>{@code
 * TaskSpec spec = TaskSpec.python("train.py")
 *     .param("algo", "q-learning").param("lr", 0.1).param("episodes", 500)
 *     .gpus(1).owner("alice").timeout(Duration.ofHours(2))
 *     .build();
 * }</pre>
 *
 * <p>Parameters reach the script twice: as {@code --name value} arguments, in the order given,
 * and as a JSON file named by the {@code RLS_PARAMS_FILE} environment variable. A spec holds at
 * most {@value #MAX_SPEC_BYTES} bytes in all (its JSON form, UTF-8): the arguments it becomes
 * must fit the operating system's limit for starting a process, and the task must fit one frame.
 */
public final class TaskSpec {

    private static final Pattern SCRIPT = Pattern.compile("[A-Za-z0-9._/-]{1,256}");
    private static final Pattern PARAM = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,63}");
    private static final Pattern ENV = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
    private static final int MAX_TEXT = 4096;
    /** The largest spec, in bytes of its JSON form (UTF-8). */
    public static final int MAX_SPEC_BYTES = 256 * 1024;
    /** The longest timeout of an attempt. */
    private static final Duration MAX_TIMEOUT = Duration.ofDays(365);

    private final String script;
    private final Map<String, Object> parameters;
    private final List<String> arguments;
    private final Map<String, String> environment;
    private final Duration timeout;
    private final int checkpointsKept;
    private final long maxCheckpointBytes;
    private final TaskDefinition definition;

    private TaskSpec(Builder b, TaskDefinition definition) {
        this.script = b.script;
        this.parameters = Collections.unmodifiableMap(new LinkedHashMap<>(b.parameters));
        this.arguments = List.copyOf(b.arguments);
        this.environment = Collections.unmodifiableMap(new LinkedHashMap<>(b.environment));
        this.timeout = b.timeout;
        this.checkpointsKept = b.checkpointsKept;
        this.maxCheckpointBytes = b.maxCheckpointBytes;
        this.definition = definition;
    }

    /**
     * Starts a spec for a Python script.
     *
     * @param script path of the script relative to the workers' script roots, e.g. "train.py" or
     *               "rl/ppo.py": letters, digits, '.', '_', '-' and '/', no ".." segment, not absolute
     * @return a builder
     * @throws IllegalArgumentException if the path is not acceptable
     */
    public static Builder python(String script) {
        return new Builder(requireScript(script));
    }

    /** Returns the script path, relative to a script root. */
    public String getScript() { return script; }
    /** Returns the parameters (String, Number or Boolean values) in the order given; unmodifiable. */
    public Map<String, Object> getParameters() { return parameters; }
    /** Returns the extra arguments passed after the parameters; unmodifiable. */
    public List<String> getArguments() { return arguments; }
    /** Returns the extra environment variables; unmodifiable. */
    public Map<String, String> getEnvironment() { return environment; }
    /** Returns the timeout of each attempt, or null for none. */
    public Duration getTimeout() { return timeout; }
    /** Returns the task id. */
    public String getTaskId() { return definition.getTaskId(); }
    /** Returns the trace id. */
    public String getTraceId() { return definition.getTraceId(); }
    /** Returns the owner. */
    public String getOwner() { return definition.getOwner(); }
    /** Returns the GPUs requested. */
    public int getGpus() { return definition.getGpus(); }

    /**
     * Says how an existing task differs from this spec, as a resubmission under its id would
     * change it: null when they are the same task, else the differences,
     * {@code "field: existing X, submitted Y"}, parameters and environment variables each named
     * ({@code parameters.lr}). Not compared: the trace id (random by default), the parameters'
     * order (a script reads them by name), and a limit the spec leaves to the master's default
     * (masters may differ in it, and a repeated submission may reach another master).
     *
     * @param existing the existing task's record
     */
    String differenceFrom(io.rlscheduler.core.TaskRecord existing) {
        List<String> differences = new ArrayList<>();
        compare(differences, "priority", existing.getPriority(), definition.getPriority());
        compare(differences, "gpus", existing.getGpus(), definition.getGpus());
        compare(differences, "cpuSlots", existing.getCpuSlots(), definition.getCpuSlots());
        compare(differences, "memoryBytes", existing.getMemoryBytes(), definition.getMemoryBytes());
        compare(differences, "selector", existing.getSelector(), definition.getSelector());
        compare(differences, "owner", existing.getOwner(), definition.getOwner());
        if (definition.getMaxAttempts() > 0) {
            compare(differences, "maxAttempts", existing.getMaxAttempts(), definition.getMaxAttempts());
        }
        try {
            ObjectNode had = existing.getSpecJson() == null ? Json.object()
                    : (ObjectNode) Json.tree(existing.getSpecJson());
            ObjectNode has = (ObjectNode) Json.tree(definition.getSpecJson());
            for (String notCompared : List.of("traceId", "owner")) { // the owner: compared above
                had.remove(notCompared);
                has.remove(notCompared);
            }
            compareJson(differences, "", had, has);
        } catch (IOException | ClassCastException e) {
            differences.add("spec: the existing one is not readable (" + e.getMessage() + ")");
        }
        return differences.isEmpty() ? null : String.join("; ", differences);
    }

    private static void compare(List<String> differences, String field, Object existing, Object submitted) {
        if (!Objects.equals(existing, submitted)) {
            differences.add(field + ": existing " + existing + ", submitted " + submitted);
        }
    }

    /** Compares two spec objects field by field, and the fields of their object fields (parameters, environment). */
    private static void compareJson(List<String> differences, String prefix, ObjectNode had, ObjectNode has) {
        java.util.Set<String> names = new java.util.LinkedHashSet<>();
        had.fieldNames().forEachRemaining(names::add);
        has.fieldNames().forEachRemaining(names::add);
        for (String name : names) {
            com.fasterxml.jackson.databind.JsonNode a = had.get(name);
            com.fasterxml.jackson.databind.JsonNode b = has.get(name);
            if (prefix.isEmpty() && a instanceof ObjectNode ao && b instanceof ObjectNode bo) {
                compareJson(differences, name + ".", ao, bo);
            } else if (!Objects.equals(a, b)) {
                differences.add(prefix + name + ": existing " + (a == null ? "none" : a) + ", submitted " + (b == null ? "none" : b));
            }
        }
    }

    /** Returns the definition handed to the lease core, with this spec as its JSON. */
    /**
     * Returns a builder holding every setting of this spec but its task id and trace id (a new
     * random one each when built): to make runs like this one, as a sweep does.
     */
    public Builder toBuilder() {
        Builder b = new Builder(script);
        b.parameters.putAll(parameters);
        b.arguments.addAll(arguments);
        b.environment.putAll(environment);
        b.timeout = timeout;
        b.checkpointsKept = checkpointsKept;
        b.maxCheckpointBytes = maxCheckpointBytes;
        b.core.priority(definition.getPriority()).gpus(definition.getGpus()).cpuSlots(definition.getCpuSlots())
                .memoryBytes(definition.getMemoryBytes()).owner(definition.getOwner());
        definition.getSelector().forEach(b.core::selector);
        if (definition.getMaxAttempts() > 0) {
            b.core.maxAttempts(definition.getMaxAttempts());
        }
        return b;
    }

    /** Returns the priority, higher first. */
    public int getPriority() { return definition.getPriority(); }

    /** Returns the CPU slots it needs. */
    public int getCpuSlots() { return definition.getCpuSlots(); }

    /** Returns the memory it needs, in bytes (0: not stated). */
    public long getMemoryBytes() { return definition.getMemoryBytes(); }

    /** Returns the labels a worker must have. */
    public Map<String, String> getSelector() { return definition.getSelector(); }

    TaskDefinition toDefinition() {
        return definition;
    }

    private static String requireScript(String script) {
        if (script == null || !SCRIPT.matcher(script).matches() || script.startsWith("/")
                || ("/" + script + "/").contains("/../") || ("/" + script + "/").contains("/./") || script.endsWith("/")) {
            throw new IllegalArgumentException("script must be a relative path of [A-Za-z0-9._/-] without '..' or '.' "
                    + "segments, such as 'train.py'; was " + (script == null ? "null" : "'" + script + "'"));
        }
        return script;
    }

    /** Builds a {@link TaskSpec}. Not thread-safe. */
    public static final class Builder {
        private final String script;
        private final Map<String, Object> parameters = new LinkedHashMap<>();
        private final List<String> arguments = new ArrayList<>();
        private final Map<String, String> environment = new LinkedHashMap<>();
        private Duration timeout;
        private int checkpointsKept;
        private long maxCheckpointBytes;
        private String taskId;
        private String traceId;
        private final TaskDefinition.Builder core;

        private Builder(String script) {
            this.script = script;
            this.core = TaskDefinition.builder("pending");
        }

        /**
         * Sets the task id (see {@link TaskIds}); default a random one. With an id of your own a
         * submission can be repeated safely: the same spec again gets the existing task, a
         * different one fails with {@link io.rlscheduler.core.TaskIdConflictException}.
         */
        public Builder taskId(String id) {
            this.taskId = TaskIds.require(id, "task id");
            return this;
        }

        /**
         * Adds a string parameter: name 1 to 64 of [A-Za-z0-9_-] starting with a letter; value at
         * most 4096 characters, one line. A name given again (by any {@code param}) replaces its
         * value and keeps its place: a script gets each parameter once.
         */
        public Builder param(String name, String value) {
            requireText(value, "value of parameter " + name);
            parameters.put(requireParam(name), value);
            return this;
        }

        /** Adds a numeric parameter; must be finite. */
        public Builder param(String name, double value) {
            if (!Double.isFinite(value)) {
                throw new IllegalArgumentException("parameter " + name + " must be a finite number, was " + value);
            }
            parameters.put(requireParam(name), value);
            return this;
        }

        /** Adds an integer parameter. */
        public Builder param(String name, long value) {
            parameters.put(requireParam(name), value);
            return this;
        }

        /** Adds a boolean parameter (passed as "true" or "false"). */
        public Builder param(String name, boolean value) {
            parameters.put(requireParam(name), value);
            return this;
        }

        /** Adds an extra argument passed after the parameters: at most 4096 characters, one line. */
        public Builder arg(String argument) {
            arguments.add(requireText(argument, "argument"));
            return this;
        }

        /**
         * Adds an environment variable; the name must not start with RLS_ nor be
         * CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER (the worker sets them, and refuses a task that
         * would: the same rule as the worker's). A name given again replaces its value.
         */
        public Builder env(String name, String value) {
            if (name == null || !ENV.matcher(name).matches() || ReservedEnvironment.isReserved(name)) {
                throw new IllegalArgumentException("environment variable name must match [A-Za-z_][A-Za-z0-9_]*, "
                        + "not start with RLS_ and not be CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER; was '" + name + "'");
            }
            environment.put(name, requireText(value, "value of " + name));
            return this;
        }

        /** Sets the GPUs needed, 0 (default) to 64. */
        public Builder gpus(int gpus) {
            core.gpus(gpus);
            return this;
        }

        /** Sets the CPU slots needed, 1 (default) to 4096. */
        public Builder cpuSlots(int slots) {
            core.cpuSlots(slots);
            return this;
        }

        /** Sets the memory needed, in bytes; 0 (default) leaves it unspecified. */
        public Builder memoryBytes(long bytes) {
            core.memoryBytes(bytes);
            return this;
        }

        /** Sets the priority, 0 (default) to 999; higher goes first. */
        public Builder priority(int priority) {
            core.priority(priority);
            return this;
        }

        /** Requires a worker label with this value (placement). */
        public Builder selector(String key, String value) {
            core.selector(key, value);
            return this;
        }

        /** Sets the owner (user); default "anonymous". */
        public Builder owner(String owner) {
            core.owner(owner);
            return this;
        }

        /** Sets the trace id; default a random UUID. */
        public Builder traceId(String traceId) {
            core.traceId(traceId);
            this.traceId = traceId;
            return this;
        }

        /** Sets the timeout of each attempt, 1 s to 365 days. Default none. */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofSeconds(1)) < 0 || timeout.compareTo(MAX_TIMEOUT) > 0) {
                throw new IllegalArgumentException("timeout must be 1 s to 365 days, was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * Sets how many of the task's committed checkpoints are kept in the artifact store, 1 to
         * 1000; default the worker's {@code checkpointsKept} (2).
         */
        public Builder checkpointsKept(int kept) {
            if (kept < 1 || kept > 1000) {
                throw new IllegalArgumentException("checkpointsKept must be between 1 and 1000, was " + kept);
            }
            this.checkpointsKept = kept;
            return this;
        }

        /**
         * Sets the most bytes the task's kept checkpoints may hold together in the artifact store,
         * 1 to 2^50; a checkpoint that would exceed it is not committed and the task record says
         * why. Default the worker's {@code maxCheckpointBytes} (256 GiB).
         */
        public Builder maxCheckpointBytes(long bytes) {
            if (bytes < 1 || bytes > 1L << 50) {
                throw new IllegalArgumentException("maxCheckpointBytes must be between 1 and 2^50, was " + bytes);
            }
            this.maxCheckpointBytes = bytes;
            return this;
        }

        /** Sets how many times the task may be assigned, 1 to 1000; default the master's. */
        public Builder maxAttempts(int attempts) {
            core.maxAttempts(attempts);
            return this;
        }

        /**
         * Returns the spec.
         *
         * @throws IllegalArgumentException if it holds more than {@value TaskSpec#MAX_SPEC_BYTES} bytes
         */
        public TaskSpec build() {
            String id = taskId != null ? taskId : TaskIds.random();
            String trace = traceId != null ? traceId : UUID.randomUUID().toString();
            TaskDefinition probe = core.build();
            TaskDefinition.Builder def = TaskDefinition.builder(id)
                    .priority(probe.getPriority()).gpus(probe.getGpus()).cpuSlots(probe.getCpuSlots())
                    .memoryBytes(probe.getMemoryBytes()).owner(probe.getOwner()).traceId(trace);
            probe.getSelector().forEach(def::selector);
            if (probe.getMaxAttempts() > 0) {
                def.maxAttempts(probe.getMaxAttempts());
            }
            String json = specJson(trace);
            // Each part is bounded on its own, their number is not: a spec too large to start as a
            // process or to send in one frame would otherwise be accepted, then fail at every attempt.
            int bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (bytes > MAX_SPEC_BYTES) {
                throw new IllegalArgumentException("the spec of task " + id + " is " + bytes + " bytes (parameters, arguments"
                        + " and environment); at most " + MAX_SPEC_BYTES + " are allowed");
            }
            def.specJson(json);
            return new TaskSpec(this, def.build());
        }

        private String specJson(String trace) {
            ObjectNode spec = Json.object();
            spec.put("script", script);
            ObjectNode params = spec.putObject("parameters");
            parameters.forEach((k, v) -> {
                if (v instanceof Boolean b) {
                    params.put(k, b);
                } else if (v instanceof Long l) {
                    params.put(k, l);
                } else if (v instanceof Double d) {
                    params.put(k, BigDecimal.valueOf(d));
                } else {
                    params.put(k, (String) v);
                }
            });
            ArrayNode args = spec.putArray("arguments");
            arguments.forEach(args::add);
            ObjectNode env = spec.putObject("environment");
            environment.forEach(env::put);
            spec.put("timeoutMs", timeout == null ? 0 : timeout.toMillis());
            if (checkpointsKept > 0) {
                spec.put("checkpointsKept", checkpointsKept);
            }
            if (maxCheckpointBytes > 0) {
                spec.put("maxCheckpointBytes", maxCheckpointBytes);
            }
            spec.put("traceId", trace);
            spec.put("owner", core.build().getOwner());
            return spec.toString();
        }

        private static String requireParam(String name) {
            if (name == null || !PARAM.matcher(name).matches()) {
                throw new IllegalArgumentException("parameter name must be 1 to 64 of [A-Za-z0-9_-] starting with a letter, was '"
                        + name + "'");
            }
            return name;
        }

        private static String requireText(String value, String what) {
            if (value == null || value.length() > MAX_TEXT || value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0
                    || value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException(what + " must be at most " + MAX_TEXT
                        + " characters on one line without NUL");
            }
            return value;
        }
    }
}
