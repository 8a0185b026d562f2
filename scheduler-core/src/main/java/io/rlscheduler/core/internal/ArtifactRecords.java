package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.OutputsState;
import io.rlscheduler.core.TaskLease;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * The Redis side of run artifacts: where the artifact store is (published by the masters, read by
 * workers that have no store of their own), the fenced move of a task's "latest checkpoint"
 * pointer (checkpoint.lua), the list of committed checkpoints, the notes of what each attempt
 * resumed from, the fenced records of what each attempt left in its run directory (outputs.lua),
 * and the note that a task's log was cut at its size limit (log_cut.lua).
 * Made by {@link LeaseCore}, sharing its connection; asynchronous and thread-safe
 * as it is.
 */
public final class ArtifactRecords {

    static final LuaScript CHECKPOINT = LuaScript.load("checkpoint");
    static final LuaScript OUTPUTS = LuaScript.load("outputs");
    static final LuaScript LOG_CUT = LuaScript.load("log_cut");

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;

    ArtifactRecords(RedisAsyncCommands<String, String> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** The field of the namespace's config hash naming the artifact store's URI. */
    static final String STORE_FIELD = "artifact_store";

    /**
     * Publishes the artifact store's URI (no credentials in it) for the workers of this namespace;
     * returns the URI published before, or null for none. The masters publish theirs at start.
     */
    public CompletableFuture<String> publishStore(String uri) {
        Objects.requireNonNull(uri, "uri");
        CompletableFuture<String> before = RedisFailures.translated(redis.hget(keys.config(), STORE_FIELD),
                redis.getStatefulConnection().getTimeout());
        return before.thenCompose(old -> RedisFailures.translated(redis.hset(keys.config(), STORE_FIELD, uri),
                redis.getStatefulConnection().getTimeout()).thenApply(ignored -> old));
    }

    /** Returns the artifact store's URI the masters published, or null when none did. */
    public CompletableFuture<String> publishedStore() {
        return RedisFailures.translated(redis.hget(keys.config(), STORE_FIELD), redis.getStatefulConnection().getTimeout());
    }

    /**
     * Moves the task's latest-checkpoint pointer to a checkpoint whose files and manifest are
     * stored, if the attempt holds the task at {@code lease}'s epoch and the checkpoint is newer
     * than the latest; keeps the newest {@code keep} and returns the ones dropped.
     *
     * @param attempt     the attempt's number
     * @param number      the checkpoint's number within the attempt, from 1
     * @param manifestKey the manifest's key in the store
     * @param sha256      the manifest's SHA-256
     * @param bytes       the files' total size
     * @param files       how many files
     * @param keep        how many committed checkpoints to keep, at least 1
     * @param maxBytes    the most bytes the kept checkpoints may hold together, 0 for no limit
     */
    public CompletableFuture<CheckpointCommit> commit(TaskLease lease, String workerId, String sessionId, int attempt,
                                                      int number, String manifestKey, String sha256, long bytes,
                                                      int files, int keep, long maxBytes) {
        if (number < 1 || keep < 1 || bytes < 0 || files < 0 || maxBytes < 0) {
            throw new IllegalArgumentException("number and keep must be 1 or more, bytes and files 0 or more");
        }
        return CHECKPOINT.run(redis, keysOf(lease.getTaskId()), "commit", lease.getTaskId(), Long.toString(lease.getEpoch()),
                Objects.requireNonNull(workerId, "workerId"), Objects.requireNonNull(sessionId, "sessionId"),
                Integer.toString(attempt), Integer.toString(number), manifestKey, sha256, Long.toString(bytes),
                Integer.toString(files), Integer.toString(keep), Long.toString(maxBytes)).thenApply(ArtifactRecords::commitResult);
    }

    private static CheckpointCommit commitResult(String reply) {
        JsonNode r = Replies.parse(reply);
        String code = r.get("r").asText();
        List<CheckpointEntry> evicted = new ArrayList<>();
        for (JsonNode e : r.path("evicted")) {
            evicted.add(CheckpointEntry.parse(e.asText()));
        }
        CheckpointCommit.Status status = switch (code) {
            case "OK" -> CheckpointCommit.Status.COMMITTED;
            default -> CheckpointCommit.Status.valueOf(code);
        };
        String id = r.has("id") ? r.get("id").asText() : r.path("latest").asText("");
        return new CheckpointCommit(status, id, List.copyOf(evicted), Replies.epoch(r.get("epoch")));
    }

    /** Returns the task's committed checkpoints, newest first (empty for none or an unknown task). */
    public CompletableFuture<List<CheckpointEntry>> committed(String taskId) {
        return RedisFailures.translated(redis.lrange(keys.checkpoints(taskId), 0, -1), redis.getStatefulConnection().getTimeout())
                .thenApply(list -> list.stream().map(CheckpointEntry::parse).toList());
    }

    /**
     * Notes what an attempt resumed from (a JSON object: the checkpoint, and the ones skipped and
     * why), fenced as a commit is.
     *
     * @return whether it was written (false: the attempt does not hold the task)
     */
    public CompletableFuture<Boolean> noteRestore(TaskLease lease, String workerId, String sessionId, int attempt,
                                                  String noteJson) {
        Replies.parse(noteJson);
        return CHECKPOINT.run(redis, keysOf(lease.getTaskId()), "restored", lease.getTaskId(),
                        Long.toString(lease.getEpoch()), workerId, sessionId, Integer.toString(attempt), noteJson)
                .thenApply(reply -> "OK".equals(Replies.parse(reply).get("r").asText()));
    }

    /**
     * Says in the task record why a checkpoint could not be committed ({@code TaskRecord#getArtifactError}),
     * fenced as a commit is; the next checkpoint committed clears it.
     *
     * @return whether it was written (false: the attempt does not hold the task)
     */
    public CompletableFuture<Boolean> noteError(TaskLease lease, String workerId, String sessionId, String message) {
        return CHECKPOINT.run(redis, keysOf(lease.getTaskId()), "error", lease.getTaskId(),
                        Long.toString(lease.getEpoch()), workerId, sessionId, Objects.requireNonNull(message, "message"))
                .thenApply(reply -> "OK".equals(Replies.parse(reply).get("r").asText()));
    }

    /** Returns the notes of what each attempt resumed from: attempt number to JSON object text, ascending. */
    public CompletableFuture<Map<Integer, String>> restores(String taskId) {
        return RedisFailures.translated(redis.hgetall(keys.restores(taskId)), redis.getStatefulConnection().getTimeout())
                .thenApply(all -> {
                    Map<Integer, String> out = new TreeMap<>();
                    all.forEach((k, v) -> out.put(Integer.parseInt(k), v));
                    return out;
                });
    }

    /**
     * Records an attempt's outputs, if the attempt holds the task at {@code lease}'s epoch (while
     * it runs or after its end) and the record's state may move to {@code note}'s
     * ({@link OutputsState}). Returns {@link WriteStatus#APPLIED}; {@link WriteStatus#DUPLICATE}
     * when that final state is recorded already; {@link WriteStatus#WRONG_STATE} when another is;
     * {@link WriteStatus#STALE}, {@link WriteStatus#WRONG_SESSION} or {@link WriteStatus#UNKNOWN_TASK}
     * when the attempt does not hold the task (nothing is written).
     */
    public CompletableFuture<WriteResult> recordOutputs(TaskLease lease, String workerId, String sessionId, OutputsNote note) {
        return OUTPUTS.run(redis, keys.coreAnd(keys.outputs(lease.getTaskId())), lease.getTaskId(),
                        Long.toString(lease.getEpoch()), Objects.requireNonNull(workerId, "workerId"),
                        Objects.requireNonNull(sessionId, "sessionId"), Integer.toString(note.attempt()),
                        note.state().name(), note.toJson())
                .thenApply(reply -> Replies.write(Replies.parse(reply)));
    }

    /** Returns the outputs records of every attempt of the task that has one, by attempt number (empty for none or an unknown task). */
    public CompletableFuture<List<AttemptOutputs>> outputs(String taskId) {
        return RedisFailures.translated(redis.hgetall(keys.outputs(taskId)), redis.getStatefulConnection().getTimeout())
                .thenApply(all -> {
                    Map<Integer, AttemptOutputs> out = new TreeMap<>();
                    all.forEach((k, v) -> out.put(Integer.parseInt(k), attemptOutputs(Replies.parse(v))));
                    return List.copyOf(out.values());
                });
    }

    private static AttemptOutputs attemptOutputs(JsonNode r) {
        return ValueFactory.get().attemptOutputs(r.get("attempt").asInt(), Replies.epoch(r.get("epoch")),
                r.path("worker").asText(""), OutputsState.valueOf(r.get("state").asText()), r.path("manifest").asText(""),
                r.path("files").asInt(), r.path("bytes").asLong(), r.path("error").asText(""),
                Replies.strings(r.get("skipped")), r.path("skipped_count").asInt(), r.path("at").asLong());
    }

    /**
     * Notes in the task record that a master cut the task's log at its size limit, keeping
     * {@code bytes} ({@code TaskRecord#isLogCut}). Written once: a task whose cut is noted keeps
     * that note. Not fenced: the cut is a fact about the log file, whichever attempt ran.
     *
     * @return whether this call wrote it (false: noted before, or no such task)
     */
    public CompletableFuture<Boolean> noteLogCut(String taskId, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must not be negative, was " + bytes);
        }
        return LOG_CUT.run(redis, keys.core(), Objects.requireNonNull(taskId, "taskId"), Long.toString(bytes))
                .thenApply(reply -> "OK".equals(Replies.parse(reply).get("r").asText()));
    }

    private String[] keysOf(String taskId) {
        return keys.coreAnd(keys.checkpoints(taskId), keys.restores(taskId));
    }
}
