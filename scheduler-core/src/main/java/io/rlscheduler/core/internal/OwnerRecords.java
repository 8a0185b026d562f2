package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lettuce.core.Range;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import io.rlscheduler.core.TaskRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * Owners' limits, shares and usage in Redis (lib.lua, "Sharing between owners"): setting limits
 * (owner_limits.lua), the fair-share settings (fair_settings.lua) and the snapshot of every
 * owner's share (shares.lua). The counters and usage themselves are kept by the scripts that move
 * tasks. Made by {@link LeaseCore}, sharing its connection; asynchronous and thread-safe as the
 * core is.
 */
public final class OwnerRecords {

    static final LuaScript OWNER_LIMITS = LuaScript.load("owner_limits");
    static final LuaScript FAIR_SETTINGS = LuaScript.load("fair_settings");
    static final LuaScript SHARES = LuaScript.load("shares");
    static final LuaScript REPAIR = LuaScript.load("owners_repair");

    /** Owner names as TaskDefinition takes them. */
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9._@-]{1,64}");
    /** The field of the lab's defaults in the limits hash. */
    static final String DEFAULTS = "*";

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;
    private final String eventsMax;

    OwnerRecords(RedisAsyncCommands<String, String> redis, Keys keys, String eventsMax) {
        this.redis = redis;
        this.keys = keys;
        this.eventsMax = eventsMax;
    }

    /**
     * Sets an owner's own limits (replacing all it had; {@link OwnerLimits#none()} clears them), in
     * force from the next claim and submission.
     *
     * @throws IllegalArgumentException (immediately) if {@code owner} is not a valid owner name
     */
    public CompletableFuture<Void> setLimits(String owner, OwnerLimits limits) {
        return store(requireOwner(owner), limits);
    }

    /** Sets the lab's defaults: each limit an owner does not set itself. */
    public CompletableFuture<Void> setDefaults(OwnerLimits limits) {
        return store(DEFAULTS, limits);
    }

    private CompletableFuture<Void> store(String field, OwnerLimits limits) {
        String json = toJson(Objects.requireNonNull(limits, "limits"));
        return OWNER_LIMITS.run(redis, keys.core(), field, json.equals("{}") ? "" : json, eventsMax).thenApply(r -> null);
    }

    /** Returns an owner's own limits (not the defaults'); none set when it has none. */
    public CompletableFuture<OwnerLimits> limits(String owner) {
        return read(requireOwner(owner));
    }

    /** Returns the lab's defaults. */
    public CompletableFuture<OwnerLimits> defaults() {
        return read(DEFAULTS);
    }

    private CompletableFuture<OwnerLimits> read(String field) {
        return RedisFailures.translated(redis.hget(keys.limits(), field), redis.getStatefulConnection().getTimeout())
                .thenApply(json -> json == null ? OwnerLimits.none() : fromJson(Replies.parse(json)));
    }

    /**
     * Sets how fast usage decays (its half-life) and the least an attempt is charged at its start,
     * either null to keep it. Usage charged so far keeps what it has decayed to.
     */
    public CompletableFuture<Void> setFairShare(Duration halfLife, Duration minimumCharge) {
        return setFairShare(halfLife, minimumCharge, null);
    }

    /**
     * As {@link #setFairShare(Duration, Duration)}, and how long a task needing 2 or more GPUs waits
     * before a worker is reserved for it ({@link Duration#ZERO}: never, and the reservations there
     * are end); each null to keep it.
     */
    public CompletableFuture<Void> setFairShare(Duration halfLife, Duration minimumCharge, Duration reserveAfter) {
        if (reserveAfter != null && (reserveAfter.isNegative() || reserveAfter.toDays() > 365)) {
            throw new IllegalArgumentException("reserveAfter must be 0 (never) to 365 days, was " + reserveAfter);
        }
        if (halfLife != null && (halfLife.toMillis() < 1000 || halfLife.toDays() > 3650)) {
            throw new IllegalArgumentException("halfLife must be 1 s to 3650 days, was " + halfLife);
        }
        if (minimumCharge != null && (minimumCharge.isNegative() || minimumCharge.toHours() > 24)) {
            throw new IllegalArgumentException("minimumCharge must be 0 to 24 hours, was " + minimumCharge);
        }
        return FAIR_SETTINGS.run(redis, keys.core(), halfLife == null ? "" : Long.toString(halfLife.toMillis()),
                minimumCharge == null ? "" : Long.toString(minimumCharge.toMillis()),
                reserveAfter == null ? "" : Long.toString(reserveAfter.toMillis())).thenApply(r -> null);
    }

    /** Returns every owner that ever submitted, by name, with its share and usage now. */
    public CompletableFuture<Shares> shares() {
        return SHARES.run(redis, keys.core()).thenApply(reply -> {
            JsonNode r = Replies.parse(reply);
            OwnerLimits defaults = r.path("defaults").asText("").isEmpty() ? OwnerLimits.none()
                    : fromJson(Replies.parse(r.path("defaults").asText()));
            List<OwnerShare> owners = new ArrayList<>();
            for (JsonNode o : r.path("owners")) {
                String own = o.path("limits").asText("");
                OwnerLimits limits = (own.isEmpty() ? OwnerLimits.none() : fromJson(Replies.parse(own))).orElse(defaults);
                owners.add(new OwnerShare(o.path("owner").asText(), limits, o.path("usage").asDouble(),
                        o.path("gpus").asInt(), o.path("running").asInt(), o.path("queued").asInt()));
            }
            List<io.rlscheduler.core.Reservation> reservations = new ArrayList<>();
            for (JsonNode v : r.path("reservations")) {
                reservations.add(new io.rlscheduler.core.Reservation(v.path("task").asText(), v.path("owner").asText(),
                        v.path("worker").asText(), v.path("gpus").asInt(), java.time.Instant.ofEpochMilli(v.path("since").asLong())));
            }
            return new Shares(Duration.ofMillis(r.path("halflife_ms").asLong()), Duration.ofMillis(r.path("min_charge_ms").asLong()),
                    Duration.ofMillis(r.path("reserve_after_ms").asLong()), defaults, owners, reservations);
        });
    }

    /**
     * Returns how many of its owner's claimable tasks are ahead of a queued task in the order claims
     * read them (lib.lua, "Sharing between owners": the owner's tasks that need GPUs and those that
     * need none, merged by queue score); -1 when it is not among them (not queued, or parked).
     *
     * @param task the task's record
     */
    public CompletableFuture<Long> queuePosition(TaskRecord task) {
        String own = keys.ownerQueue(task.getOwner(), task.getGpus() > 0);
        String other = keys.ownerQueue(task.getOwner(), task.getGpus() == 0);
        Duration timeout = redis.getStatefulConnection().getTimeout();
        return RedisFailures.translated(redis.zscore(own, task.getTaskId()), timeout).thenCompose(score -> score == null
                ? CompletableFuture.completedFuture(-1L)
                : RedisFailures.translated(redis.zrank(own, task.getTaskId()), timeout).thenCombine(
                        RedisFailures.translated(redis.zcount(other,
                                Range.from(Range.Boundary.unbounded(), Range.Boundary.excluding(score))), timeout),
                        (rank, before) -> rank == null ? -1L : rank + before));
    }

    /**
     * Rebuilds the owners' counters, owner queues, fair sets and reservations from the task records
     * where they disagree (owners_repair.lua), and returns what it corrected. What workers hold is
     * always checked; what waits only while the queue holds at most {@code maxQueue} tasks (one
     * script run reads them all, and Redis serves nobody else meanwhile).
     */
    public CompletableFuture<Repair> repair(int maxQueue) {
        return REPAIR.run(redis, keys.core(), Integer.toString(maxQueue), eventsMax).thenApply(reply -> {
            JsonNode r = Replies.parse(reply);
            List<io.rlscheduler.core.SharingCorrection> fixed = new ArrayList<>();
            for (JsonNode f : r.path("fixed")) {
                fixed.add(new io.rlscheduler.core.SharingCorrection(f.path("owner").asText(), f.path("field").asText(),
                        f.path("was").asText(), f.path("now").asText()));
            }
            return new Repair(fixed, r.path("queue_checked").asBoolean(), r.path("tasks_checked").asLong());
        });
    }

    /**
     * What a repair pass did.
     *
     * @param corrections  what disagreed with the task records, now corrected
     * @param queueChecked whether the queue's side was checked (the queue was not longer than asked)
     * @param tasksChecked how many task records were read
     */
    public record Repair(List<io.rlscheduler.core.SharingCorrection> corrections, boolean queueChecked, long tasksChecked) {
    }

    /** Every owner's share, with the settings they were figured with. */
    public static final class Shares {
        private final Duration halfLife;
        private final Duration minimumCharge;
        private final Duration reserveAfter;
        private final OwnerLimits defaults;
        private final List<OwnerShare> owners;
        private final List<io.rlscheduler.core.Reservation> reservations;

        Shares(Duration halfLife, Duration minimumCharge, Duration reserveAfter, OwnerLimits defaults,
               List<OwnerShare> owners, List<io.rlscheduler.core.Reservation> reservations) {
            this.halfLife = halfLife;
            this.minimumCharge = minimumCharge;
            this.reserveAfter = reserveAfter;
            this.defaults = defaults;
            this.owners = List.copyOf(owners);
            this.reservations = List.copyOf(reservations);
        }

        public Duration getHalfLife() { return halfLife; }
        public Duration getMinimumCharge() { return minimumCharge; }
        public OwnerLimits getDefaults() { return defaults; }
        public List<OwnerShare> getOwners() { return owners; }
        /** Returns how long a big task waits before a worker is reserved for it; zero: never. */
        public Duration getReserveAfter() { return reserveAfter; }
        /** Returns the reservations now, oldest first. */
        public List<io.rlscheduler.core.Reservation> getReservations() { return reservations; }
    }

    static String requireOwner(String owner) {
        if (owner == null || !OWNER.matcher(owner).matches()) {
            throw new IllegalArgumentException("owner must be 1 to 64 of [A-Za-z0-9._@-], was '" + owner + "'");
        }
        return owner;
    }

    static String toJson(OwnerLimits l) {
        ObjectNode o = Replies.JSON.createObjectNode();
        l.getMaxGpus().ifPresent(v -> o.put("max_gpus", v));
        l.getMaxRunning().ifPresent(v -> o.put("max_running", v));
        l.getMaxQueued().ifPresent(v -> o.put("max_queued", v));
        l.getMaxGpusPerTask().ifPresent(v -> o.put("max_gpus_per_task", v));
        l.getRate().ifPresent(v -> o.put("rate", v));
        l.getBurst().ifPresent(v -> o.put("burst", v));
        l.getWeight().ifPresent(v -> o.put("weight", v));
        return o.toString();
    }

    static OwnerLimits fromJson(JsonNode o) {
        return OwnerLimits.builder()
                .maxGpus(o.has("max_gpus") ? o.get("max_gpus").asInt() : null)
                .maxRunning(o.has("max_running") ? o.get("max_running").asInt() : null)
                .maxQueued(o.has("max_queued") ? o.get("max_queued").asInt() : null)
                .maxGpusPerTask(o.has("max_gpus_per_task") ? o.get("max_gpus_per_task").asInt() : null)
                .rate(o.has("rate") ? o.get("rate").asDouble() : null)
                .burst(o.has("burst") ? o.get("burst").asInt() : null)
                .weight(o.has("weight") ? o.get("weight").asDouble() : null)
                .build();
    }
}
