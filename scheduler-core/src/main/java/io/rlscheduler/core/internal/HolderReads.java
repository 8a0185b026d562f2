package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskState;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Reads who holds a task's current attempt, from the task's record: the few fields a master
 * checks a worker's task-scoped frame against, without the record's history or spec. Made by
 * {@link LeaseCore}, sharing its connection. Asynchronous and thread-safe as the core is.
 */
public final class HolderReads {

    /**
     * A task's current attempt and its holder, as the record says.
     *
     * @param epoch     the current epoch (0 before the first claim)
     * @param attempt   the current attempt number (0 before the first claim)
     * @param workerId  the worker that holds or held it; empty when the attempt was taken back
     * @param sessionId that worker's session; empty when the attempt was taken back
     * @param state     the task's state
     */
    public record Holder(long epoch, int attempt, String workerId, String sessionId, TaskState state) {

        public Holder {
            Objects.requireNonNull(workerId, "workerId");
            Objects.requireNonNull(sessionId, "sessionId");
            Objects.requireNonNull(state, "state");
        }
    }

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;
    private final Duration timeout;

    HolderReads(RedisAsyncCommands<String, String> redis, Keys keys, Duration timeout) {
        this.redis = redis;
        this.keys = keys;
        this.timeout = timeout;
    }

    /**
     * Returns the holder of a task's current attempt, or empty for a task that does not exist.
     *
     * @throws IllegalArgumentException (immediately) if {@code taskId} is not a valid task id
     */
    public CompletableFuture<Optional<Holder>> of(String taskId) {
        TaskIds.require(taskId, "task id");
        return RedisFailures.translated(redis.hget(keys.tasks(), taskId), timeout)
                .thenApply(stored -> stored == null ? Optional.empty() : Optional.of(parse(stored)));
    }

    static Holder parse(String stored) {
        int nl = stored.indexOf('\n');
        if (nl < 0) {
            throw new SchedulerException("unreadable task record: no history line", false, null);
        }
        JsonNode st = Replies.parse(stored.substring(0, nl));
        return new Holder(Replies.epoch(st.get("epoch")), st.path("attempt").asInt(), st.path("worker").asText(""),
                st.path("session").asText(""), Replies.state(st.get("state")));
    }
}
