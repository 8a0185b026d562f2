package io.rlscheduler.http.internal;

import io.rlscheduler.master.ApiTokenInfo;
import io.rlscheduler.master.ApiTokens;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tokens this API verified in the last {@code ttl}: a request within it costs no Redis round
 * trip. Unknown tokens are never kept (a guess costs its own read). A token revoked through this
 * API is dropped at once; one revoked elsewhere (another process, the Java API of another master)
 * is refused within the ttl. A ttl of 0 reads Redis for every request.
 */
final class TokenCache {

    private static final int MAX_ENTRIES = 10_000;

    private record Entry(ApiTokenInfo info, long expiresNanos) {
    }

    private final ApiTokens tokens;
    private final long ttlNanos;
    private final Map<String, Entry> verified = new ConcurrentHashMap<>();

    TokenCache(ApiTokens tokens, long ttlNanos) {
        this.tokens = tokens;
        this.ttlNanos = ttlNanos;
    }

    Optional<ApiTokenInfo> verify(String secret) {
        if (ttlNanos == 0) {
            return tokens.verify(secret);
        }
        long now = System.nanoTime();
        Entry e = verified.get(secret);
        if (e != null && now - e.expiresNanos() < 0) {
            return Optional.of(e.info());
        }
        Optional<ApiTokenInfo> info = tokens.verify(secret);
        if (info.isPresent()) {
            if (verified.size() >= MAX_ENTRIES) {
                verified.entrySet().removeIf(x -> now - x.getValue().expiresNanos() >= 0);
                if (verified.size() >= MAX_ENTRIES) {
                    verified.clear();
                }
            }
            verified.put(secret, new Entry(info.get(), now + ttlNanos));
        } else {
            verified.remove(secret);
        }
        return info;
    }

    /** Drops a token revoked through this API, whatever its secret. */
    void revoked(String tokenId) {
        verified.values().removeIf(e -> e.info().id().equals(tokenId));
    }
}
