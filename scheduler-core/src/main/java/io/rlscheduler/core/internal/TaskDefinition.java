package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskIds;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * What the lease core needs to know to queue and place a task: its id, priority, resources,
 * placement selector, owner, trace id, retry limits, and an opaque spec (JSON) that the layers
 * above define (script, parameters, ...) and the core stores unchanged. Immutable and thread-safe.
 */
public final class TaskDefinition {

    /** Highest priority; tasks with higher priority are dispatched first. */
    public static final int MAX_PRIORITY = 999;
    /**
     * Largest memory figure, in bytes, for tasks and workers: 2^46 (64 TiB). Lua scripts hold
     * numbers as doubles and their JSON encoder keeps 14 significant digits, so larger byte
     * counts would be rounded silently.
     */
    public static final long MAX_MEMORY_BYTES = 1L << 46;

    /** Most GPUs one task may ask for. */
    public static final int MAX_GPUS = 64;

    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9._/-]{1,63}");

    /**
     * Returns whether {@code text} may be a label key or value: of a worker's labels, or of a
     * task's selector that must match them; 1 to 63 of {@code [A-Za-z0-9._/-]}.
     */
    public static boolean isValidLabel(String text) {
        return text != null && LABEL.matcher(text).matches();
    }
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9._@-]{1,64}");

    private final String taskId;
    private final int priority;
    private final int gpus;
    private final int cpuSlots;
    private final long memoryBytes;
    private final Map<String, String> selector;
    private final String owner;
    private final String traceId;
    private final int maxAttempts;
    private final int maxLeaseLosses;
    private final String specJson;

    private TaskDefinition(Builder b) {
        this.taskId = b.taskId;
        this.priority = b.priority;
        this.gpus = b.gpus;
        this.cpuSlots = b.cpuSlots;
        this.memoryBytes = b.memoryBytes;
        this.selector = Collections.unmodifiableMap(new LinkedHashMap<>(b.selector));
        this.owner = b.owner;
        this.traceId = b.traceId != null ? b.traceId : UUID.randomUUID().toString();
        this.maxAttempts = b.maxAttempts;
        this.maxLeaseLosses = b.maxLeaseLosses;
        this.specJson = b.specJson;
    }

    /** Returns a builder for a task with the given id (see {@link TaskIds}). */
    public static Builder builder(String taskId) {
        return new Builder(TaskIds.require(taskId, "task id"));
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }
    /** Returns the priority, 0 to {@link #MAX_PRIORITY}; higher goes first. */
    public int getPriority() { return priority; }
    /** Returns the number of GPUs the task needs. */
    public int getGpus() { return gpus; }
    /** Returns the CPU slots the task needs, at least 1. */
    public int getCpuSlots() { return cpuSlots; }
    /** Returns the memory the task needs, in bytes; 0 when it does not say. */
    public long getMemoryBytes() { return memoryBytes; }
    /** Returns the labels a worker must carry, with equal values, to run the task; unmodifiable. */
    public Map<String, String> getSelector() { return selector; }
    /** Returns the owner (user) of the task. */
    public String getOwner() { return owner; }
    /** Returns the trace id that follows the task from submission to its logs. */
    public String getTraceId() { return traceId; }
    /** Returns the task's attempt limit, or 0 for the core's default. */
    public int getMaxAttempts() { return maxAttempts; }
    /** Returns the task's lease-loss limit, or -1 for the core's default. */
    public int getMaxLeaseLosses() { return maxLeaseLosses; }
    /** Returns the opaque spec, a JSON object stored unchanged. */
    public String getSpecJson() { return specJson; }

    /** Builds {@link TaskDefinition}; setters validate at once. Not thread-safe. */
    public static final class Builder {
        private final String taskId;
        private int priority;
        private int gpus;
        private int cpuSlots = 1;
        private long memoryBytes;
        private final Map<String, String> selector = new LinkedHashMap<>();
        private String owner = "anonymous";
        private String traceId;
        private int maxAttempts;
        private int maxLeaseLosses = -1;
        private String specJson = "{}";

        private Builder(String taskId) {
            this.taskId = taskId;
        }

        /** Sets the priority, 0 (default) to {@link #MAX_PRIORITY}; higher goes first. */
        public Builder priority(int priority) {
            if (priority < 0 || priority > MAX_PRIORITY) {
                throw new IllegalArgumentException("priority must be between 0 and " + MAX_PRIORITY + ", was " + priority);
            }
            this.priority = priority;
            return this;
        }

        /** Sets the number of GPUs, 0 (default) to {@link #MAX_GPUS}. */
        public Builder gpus(int gpus) {
            if (gpus < 0 || gpus > MAX_GPUS) {
                throw new IllegalArgumentException("gpus must be between 0 and " + MAX_GPUS + ", was " + gpus);
            }
            this.gpus = gpus;
            return this;
        }

        /** Sets the CPU slots, 1 (default) to 4096. */
        public Builder cpuSlots(int slots) {
            if (slots < 1 || slots > 4096) {
                throw new IllegalArgumentException("cpuSlots must be between 1 and 4096, was " + slots);
            }
            this.cpuSlots = slots;
            return this;
        }

        /** Sets the memory needed in bytes, 0 (default: unspecified) to {@link #MAX_MEMORY_BYTES}. */
        public Builder memoryBytes(long bytes) {
            if (bytes < 0 || bytes > MAX_MEMORY_BYTES) {
                throw new IllegalArgumentException("memoryBytes must be between 0 and " + MAX_MEMORY_BYTES + ", was " + bytes);
            }
            this.memoryBytes = bytes;
            return this;
        }

        /** Requires a worker label {@code key} with value {@code value}; both 1 to 63 of [A-Za-z0-9._/-]. */
        public Builder selector(String key, String value) {
            if (!isValidLabel(key) || !isValidLabel(value)) {
                throw new IllegalArgumentException("selector key and value must be 1 to 63 of [A-Za-z0-9._/-], was '"
                        + key + "'='" + value + "'");
            }
            selector.put(key, value);
            return this;
        }

        /** Sets the owner, 1 to 64 of [A-Za-z0-9._@-]; default "anonymous". */
        public Builder owner(String owner) {
            if (owner == null || !OWNER.matcher(owner).matches()) {
                throw new IllegalArgumentException("owner must be 1 to 64 of [A-Za-z0-9._@-], was '" + owner + "'");
            }
            this.owner = owner;
            return this;
        }

        /** Sets the trace id (1 to 128 characters); default a random UUID. */
        public Builder traceId(String traceId) {
            if (traceId == null || traceId.isEmpty() || traceId.length() > 128 || traceId.chars().anyMatch(c -> c < 0x21 || c > 0x7E)) {
                throw new IllegalArgumentException("traceId must be 1 to 128 printable ASCII characters without spaces");
            }
            this.traceId = traceId;
            return this;
        }

        /** Sets the attempt limit of this task, 1 to 1000; default the core's. */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1 || attempts > 1000) {
                throw new IllegalArgumentException("maxAttempts must be between 1 and 1000, was " + attempts);
            }
            this.maxAttempts = attempts;
            return this;
        }

        /** Sets the lease-loss limit of this task, 0 to 1000; default the core's. */
        public Builder maxLeaseLosses(int losses) {
            if (losses < 0 || losses > 1000) {
                throw new IllegalArgumentException("maxLeaseLosses must be between 0 and 1000, was " + losses);
            }
            this.maxLeaseLosses = losses;
            return this;
        }

        /** Sets the opaque spec, a JSON object (checked when submitted); default "{}". */
        public Builder specJson(String json) {
            this.specJson = Objects.requireNonNull(json, "specJson");
            return this;
        }

        /** Returns the definition. */
        public TaskDefinition build() {
            return new TaskDefinition(this);
        }
    }
}
