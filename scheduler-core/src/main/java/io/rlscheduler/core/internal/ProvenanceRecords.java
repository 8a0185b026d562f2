package io.rlscheduler.core.internal;

import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskIds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The provenance of attempts in Redis: what each attempt ran (provenance.lua, fenced by the
 * attempt's epoch), and the read of a task's. Made by {@link LeaseCore}, sharing its connection;
 * writes of concurrent attempts share script runs ({@link ScriptBatcher}). Asynchronous and
 * thread-safe as the core is.
 */
public final class ProvenanceRecords {

    static final LuaScript PROVENANCE = LuaScript.load("provenance");

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;
    private final ScriptBatcher<String[]> provenances;

    ProvenanceRecords(RedisAsyncCommands<String, String> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
        this.provenances = new ScriptBatcher<>("provenance", LeaseCore.WRITE_BATCH, LeaseCore.WRITE_RUNS_IN_FLIGHT,
                this::runProvenances, Replies::parse);
    }

    /**
     * Stores the provenance of an attempt, for the attempt that holds the task only: fenced by its
     * epoch, worker ({@link AttemptProvenance#getWorkerId()}) and session as {@link LeaseCore#acknowledge}
     * is, so a stale or foreign attempt's write changes nothing and answers {@link WriteStatus#STALE}
     * (or {@link WriteStatus#WRONG_SESSION}). It is kept in a hash of the task's own
     * ({@link Keys#provenance}), under the attempt number the task record holds, not in the record.
     * Accepted after the attempt ended too, as long as no other attempt took the task. Repeating a
     * write answers {@link WriteStatus#DUPLICATE}.
     *
     * @param provenance the attempt's provenance
     * @param sessionId  the worker's session
     * @return the result
     */
    public CompletableFuture<WriteResult> record(AttemptProvenance provenance, String sessionId) {
        TaskIds.require(provenance.getTaskId(), "task id");
        return provenances.call(new String[] {keys.provenance(provenance.getTaskId()), provenance.getTaskId(),
                        Long.toString(provenance.getEpoch()), provenance.getWorkerId(),
                        Objects.requireNonNull(sessionId, "sessionId"), ProvenanceFormat.encode(provenance)})
                .thenApply(Replies::write);
    }

    /** One run of provenance.lua: call[0] is the task's provenance key, call[1..5] the write's arguments. */
    private CompletableFuture<String> runProvenances(List<String[]> calls) {
        String[] provenanceKeys = new String[calls.size()];
        List<String> args = new ArrayList<>(5 * calls.size());
        for (int i = 0; i < calls.size(); i++) {
            String[] call = calls.get(i);
            provenanceKeys[i] = call[0];
            args.addAll(Arrays.asList(call).subList(1, call.length));
        }
        return PROVENANCE.run(redis, keys.coreAnd(provenanceKeys), args.toArray(new String[0]));
    }

    /**
     * Returns the provenance of a task's attempts, by attempt number (an attempt that stored none
     * is left out; empty for a task that does not exist).
     *
     * @throws IllegalArgumentException (immediately) if {@code taskId} is not a valid task id
     */
    public CompletableFuture<List<AttemptProvenance>> of(String taskId) {
        TaskIds.require(taskId, "task id");
        return RedisFailures.translated(redis.hgetall(keys.provenance(taskId)), redis.getStatefulConnection().getTimeout()).thenApply(stored -> {
            List<AttemptProvenance> attempts = new ArrayList<>(stored.size());
            stored.forEach((attempt, json) -> attempts.add(ProvenanceFormat.decode(taskId, Integer.parseInt(attempt), json)));
            attempts.sort(java.util.Comparator.comparingInt(AttemptProvenance::getAttempt));
            return attempts;
        });
    }
}
