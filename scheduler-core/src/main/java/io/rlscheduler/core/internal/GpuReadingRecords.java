package io.rlscheduler.core.internal;

import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The GPU readings (memory, utilisation) of the workers connected to the leader, published by it
 * to one hash so that every master, a standby's HTTP API included, reads them from Redis: worker id
 * to the readings as the master encodes them. The hash expires unless the leader renews it, so
 * readings do not outlive a leader that stopped publishing. Made by {@link LeaseCore}, sharing its
 * connection; asynchronous and thread-safe as the core is.
 */
public final class GpuReadingRecords {

    private final RedisAsyncCommands<String, String> redis;
    private final Keys keys;

    GpuReadingRecords(RedisAsyncCommands<String, String> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /**
     * Publishes changed readings and removes those of workers gone, then renews the hash for
     * {@code ttl}. With {@code replace} the hash is first emptied (a leader's first publication,
     * so that a former leader's readings do not linger). The commands go out in order on one
     * connection; a reader may see a publication half done, never a mix with another leader's.
     *
     * @return whether the hash exists once renewed (false: it had expired or is empty)
     */
    public CompletableFuture<Boolean> publish(Map<String, String> changed, Collection<String> gone, boolean replace, Duration ttl) {
        String key = keys.gpuReadings();
        List<CompletionStage<?>> calls = new ArrayList<>(4);
        if (replace) {
            calls.add(redis.del(key));
        }
        if (!gone.isEmpty()) {
            calls.add(redis.hdel(key, gone.toArray(new String[0])));
        }
        if (!changed.isEmpty()) {
            calls.add(redis.hset(key, Map.copyOf(changed)));
        }
        CompletableFuture<Boolean> renewed = redis.pexpire(key, ttl.toMillis()).toCompletableFuture();
        calls.add(renewed);
        return read(CompletableFuture.allOf(calls.stream().map(CompletionStage::toCompletableFuture)
                .toArray(CompletableFuture[]::new)).thenCompose(done -> renewed));
    }

    /** Returns the readings published: worker id to readings, empty when none are. */
    public CompletableFuture<Map<String, String>> read() {
        return read(redis.hgetall(keys.gpuReadings()));
    }

    private <T> CompletableFuture<T> read(CompletionStage<T> call) {
        Duration timeout = redis.getStatefulConnection().getTimeout();
        return RedisFailures.translated(call, timeout);
    }
}
