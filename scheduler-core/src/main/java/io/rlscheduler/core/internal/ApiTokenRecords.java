package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The HTTP API's bearer tokens in Redis (api_token.lua): each token's record under the SHA-256 of
 * the token, never the token itself, and an index by token id for revocation and listing. Made
 * by {@link LeaseCore}, sharing its connection; asynchronous and thread-safe as the core is.
 */
public final class ApiTokenRecords {

    static final LuaScript API_TOKEN = LuaScript.load("api_token");

    /** A stored token: its id, user, whether it is an admin's, and when it was made (ms). */
    public record Stored(String id, String user, boolean admin, long createdAtMillis) {
    }

    /** What a create or revoke did. */
    public enum Status { OK, EXISTS, NONE }

    /** The answer of a create or revoke: its status and the record it made or removed (null for none). */
    public record Result(Status status, Stored token) {
    }

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;

    ApiTokenRecords(RedisAsyncCommands<String, String> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    private String[] scriptKeys() {
        return keys.coreAnd(keys.apiTokens(), keys.apiTokenIds());
    }

    /** Stores a new token's record under {@code sha256Hex}; EXISTS if the id or the hash is taken. */
    public CompletableFuture<Result> create(String id, String sha256Hex, String user, boolean admin) {
        return API_TOKEN.run(redis, scriptKeys(), "create", Objects.requireNonNull(id, "id"),
                Objects.requireNonNull(sha256Hex, "sha256Hex"), Objects.requireNonNull(user, "user"), admin ? "1" : "0")
                .thenApply(ApiTokenRecords::result);
    }

    /** Removes a token by its id; NONE if there is none. */
    public CompletableFuture<Result> revoke(String id) {
        return API_TOKEN.run(redis, scriptKeys(), "revoke", Objects.requireNonNull(id, "id")).thenApply(ApiTokenRecords::result);
    }

    /** Returns the record stored under a token's SHA-256, if any: one HGET. */
    public CompletableFuture<Optional<Stored>> find(String sha256Hex) {
        return RedisFailures.translated(redis.hget(keys.apiTokens(), sha256Hex), redis.getStatefulConnection().getTimeout())
                .thenApply(json -> json == null ? Optional.empty() : Optional.of(stored(Replies.parse(json))));
    }

    /** Returns every token's record, oldest first. */
    public CompletableFuture<List<Stored>> list() {
        return RedisFailures.translated(redis.hgetall(keys.apiTokens()), redis.getStatefulConnection().getTimeout())
                .thenApply(all -> {
                    List<Stored> tokens = new ArrayList<>(all.size());
                    all.values().forEach(json -> tokens.add(stored(Replies.parse(json))));
                    tokens.sort(Comparator.comparingLong(Stored::createdAtMillis).thenComparing(Stored::id));
                    return tokens;
                });
    }

    private static Result result(String reply) {
        JsonNode r = Replies.parse(reply);
        JsonNode token = r.get("token");
        return new Result(Status.valueOf(r.get("r").asText()), token == null ? null : stored(token));
    }

    private static Stored stored(JsonNode t) {
        return new Stored(t.path("id").asText(), t.path("user").asText(), t.path("admin").asBoolean(false),
                t.path("created_at").asLong(0));
    }
}
