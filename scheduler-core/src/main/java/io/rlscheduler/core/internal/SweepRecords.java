package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.KeyValue;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Sweeps in Redis (sweep.lua): each sweep's record, as the master made it, under its id; indexes
 * of sweeps by creation time, all and per owner; and which sweep each run belongs to. Made by
 * {@link LeaseCore}, sharing its connection; asynchronous and thread-safe as the core is.
 */
public final class SweepRecords {

    static final LuaScript SWEEP = LuaScript.load("sweep");

    /**
     * The answer of {@link #create}: the record stored before, when the sweep existed; or, when a
     * run's id was already a task outside the sweep, that id (nothing written).
     */
    public record Created(boolean created, String existingJson, String takenRunId) {
    }

    /** A page of sweeps' records, newest first, and how many there are in all. */
    public record Page(List<String> records, long total) {
    }

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;

    SweepRecords(RedisAsyncCommands<String, String> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /**
     * Records a sweep and its runs' ids, unless a sweep of that id exists (then its record is
     * returned and nothing is written) or one of the run ids is already a task (then that id is
     * returned and nothing is written).
     */
    public CompletableFuture<Created> create(String sweepId, String owner, String json, long createdAtMillis, List<String> runIds) {
        List<String> args = new ArrayList<>(runIds.size() + 3);
        args.add(sweepId);
        args.add(Objects.requireNonNull(json, "json"));
        args.add(Long.toString(createdAtMillis));
        args.addAll(runIds);
        return SWEEP.run(redis, keys.coreAnd(keys.sweep(sweepId), keys.sweeps(), keys.ownerSweeps(owner), keys.sweepOf()),
                args.toArray(new String[0])).thenApply(reply -> {
                    JsonNode r = Replies.parse(reply);
                    return switch (r.path("r").asText()) {
                        case "OK" -> new Created(true, null, null);
                        case "TAKEN" -> new Created(false, null, r.path("run").asText());
                        default -> new Created(false, r.path("sweep").asText(), null);
                    };
                });
    }

    /** Returns a sweep's record, if it exists. */
    public CompletableFuture<Optional<String>> get(String sweepId) {
        return read(redis.get(keys.sweep(sweepId))).thenApply(Optional::ofNullable);
    }

    /** Lists sweeps' records newest first: all of them, or one owner's ({@code owner} not null). */
    public CompletableFuture<Page> list(String owner, int offset, int limit) {
        if (offset < 0 || limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("offset must be >= 0 and limit 1 to 1000, were " + offset + ", " + limit);
        }
        String index = owner == null ? keys.sweeps() : keys.ownerSweeps(owner);
        CompletableFuture<Long> total = read(redis.zcard(index));
        return read(redis.zrevrange(index, offset, offset + limit - 1L)).thenCompose(ids -> {
            if (ids.isEmpty()) {
                return total.thenApply(n -> new Page(List.of(), n));
            }
            String[] sweepKeys = ids.stream().map(keys::sweep).toArray(String[]::new);
            return read(redis.mget(sweepKeys)).thenCombine(total, (values, n) -> {
                List<String> records = new ArrayList<>(values.size());
                values.stream().filter(KeyValue::hasValue).forEach(kv -> records.add(kv.getValue()));
                return new Page(records, n);
            });
        });
    }

    /** Returns the sweep of each of {@code taskIds} that belongs to one, by task id. */
    public CompletableFuture<Map<String, String>> sweepsOf(List<String> taskIds) {
        if (taskIds.isEmpty()) {
            return CompletableFuture.completedFuture(Map.of());
        }
        return read(redis.hmget(keys.sweepOf(), taskIds.toArray(new String[0]))).thenApply(values -> {
            Map<String, String> of = new LinkedHashMap<>();
            values.stream().filter(KeyValue::hasValue).forEach(kv -> of.put(kv.getKey(), kv.getValue()));
            return of;
        });
    }

    private <T> CompletableFuture<T> read(CompletionStage<T> call) {
        Duration timeout = redis.getStatefulConnection().getTimeout();
        return RedisFailures.translated(call, timeout);
    }
}
