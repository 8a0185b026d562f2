package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.TaskIds;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Worker keys in Redis: their verifiers (worker_key.lua: issue, rotate), revocations
 * (revoke_worker.lua, which also fences the worker's session and takes its tasks back), the
 * listing, and the read a master makes at every hello (hello.lua). Redis never holds a private
 * key. Made by {@link LeaseCore}, sharing its connection; asynchronous and thread-safe as the
 * core is.
 */
public final class WorkerKeyRecords {

    static final LuaScript WORKER_KEY = LuaScript.load("worker_key");
    static final LuaScript REVOKE_WORKER = LuaScript.load("revoke_worker");
    static final LuaScript HELLO = LuaScript.load("hello");

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;
    private final String eventsMax;

    WorkerKeyRecords(RedisAsyncCommands<String, String> redis, Keys keys, String eventsMax) {
        this.redis = redis;
        this.keys = keys;
        this.eventsMax = eventsMax;
    }

    /**
     * Stores the first key of a worker id (or a new one for a revoked id, lifting the revocation);
     * refused ({@link WorkerKeyResult.Status#EXISTS}) while the id has a key that is not revoked.
     *
     * @param publicKey the Ed25519 public key, X.509 encoded, in base64
     * @param acceptKey the accept key, in base64
     * @throws IllegalArgumentException (immediately) if {@code workerId} is not a valid worker id
     */
    public CompletableFuture<WorkerKeyResult> issue(String workerId, String keyId, String publicKey, String acceptKey) {
        return store("issue", workerId, keyId, publicKey, acceptKey);
    }

    /**
     * Replaces the key of a worker id that has one; refused ({@link WorkerKeyResult.Status#NO_KEY},
     * {@link WorkerKeyResult.Status#REVOKED}) otherwise.
     *
     * @throws IllegalArgumentException (immediately) if {@code workerId} is not a valid worker id
     */
    public CompletableFuture<WorkerKeyResult> rotate(String workerId, String keyId, String publicKey, String acceptKey) {
        return store("rotate", workerId, keyId, publicKey, acceptKey);
    }

    private CompletableFuture<WorkerKeyResult> store(String op, String workerId, String keyId, String publicKey,
                                                     String acceptKey) {
        TaskIds.require(workerId, "worker id");
        return WORKER_KEY.run(redis, keys.coreAnd(keys.workerKeys()), op, workerId, Objects.requireNonNull(keyId, "keyId"),
                Objects.requireNonNull(publicKey, "publicKey"), Objects.requireNonNull(acceptKey, "acceptKey"), eventsMax)
                .thenApply(reply -> {
                    JsonNode r = Replies.parse(reply);
                    return new WorkerKeyResult(WorkerKeyResult.Status.valueOf(r.get("r").asText()), record(r.get("key")));
                });
    }

    /**
     * Revokes a worker id, with a key or without (see revoke_worker.lua): its hellos and
     * registrations are refused from then on, the tasks its session holds are taken back at once
     * (not counted as lease losses) and its record is removed. Safe to repeat.
     *
     * @throws IllegalArgumentException (immediately) if {@code workerId} is not a valid worker id
     */
    public CompletableFuture<WorkerRevocation> revoke(String workerId) {
        TaskIds.require(workerId, "worker id");
        return REVOKE_WORKER.run(redis, keys.coreAnd(keys.workerKeys()), workerId, eventsMax).thenApply(reply -> {
            JsonNode r = Replies.parse(reply);
            return new WorkerRevocation(record(r.get("key")), r.path("session").asText(""), Replies.requeue(r));
        });
    }

    /** Returns every worker id's key record (keys and revocations), by worker id. */
    public CompletableFuture<List<WorkerKeyRecord>> list() {
        return RedisFailures.translated(redis.hgetall(keys.workerKeys()), redis.getStatefulConnection().getTimeout())
                .thenApply(all -> {
                    List<WorkerKeyRecord> records = new ArrayList<>(all.size());
                    all.values().forEach(json -> records.add(record(Replies.parse(json))));
                    records.sort(Comparator.comparing(WorkerKeyRecord::getWorkerId));
                    return records;
                });
    }

    /**
     * Returns what a master judges a worker's hello by: the registered session, whether it is
     * live, and the id's key record. One read-only script run.
     *
     * @throws IllegalArgumentException (immediately) if {@code workerId} is not a valid worker id
     */
    public CompletableFuture<HelloRecord> helloRecord(String workerId) {
        TaskIds.require(workerId, "worker id");
        return HELLO.run(redis, keys.coreAnd(keys.workerKeys()), workerId).thenApply(reply -> {
            JsonNode r = Replies.parse(reply);
            return new HelloRecord(r.path("session").asText(""), r.path("deadline").asLong(0) > r.path("now").asLong(0),
                    record(r.get("key")));
        });
    }

    /** Reads a key record of worker_key.lua; null for none. */
    private static WorkerKeyRecord record(JsonNode k) {
        if (k == null || !k.isObject()) {
            return null;
        }
        return new WorkerKeyRecord(k.path("worker").asText(), k.path("key_id").asText(""), k.path("public").asText(""),
                k.path("accept").asText(""), k.path("created_at").asLong(0), k.path("rotated_at").asLong(0),
                k.path("revoked_at").asLong(0));
    }
}
