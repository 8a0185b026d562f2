package io.rlscheduler.master;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.testkit.RedisNamespace;
import java.util.ArrayList;
import java.util.List;

/** Reads every value a namespace holds in Redis, as text, for tests that look for what must not be there. */
public final class RedisValues {

    private RedisValues() {
    }

    /**
     * Returns every value of every key of the namespace: strings, hash fields with their values,
     * list, set and sorted-set members, stream entries.
     */
    public static List<String> of(RedisClient client, RedisNamespace ns) {
        List<String> out = new ArrayList<>();
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> sync = connection.sync();
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = sync.scan(cursor, ScanArgs.Builder.matches("{" + ns.name() + "}*").limit(500));
                for (String key : page.getKeys()) {
                    switch (sync.type(key)) {
                        case "string" -> out.add(sync.get(key));
                        case "hash" -> sync.hgetall(key).forEach((field, value) -> out.add(field + "=" + value));
                        case "list" -> out.addAll(sync.lrange(key, 0, -1));
                        case "set" -> out.addAll(sync.smembers(key));
                        case "zset" -> out.addAll(sync.zrange(key, 0, -1));
                        case "stream" -> sync.xrange(key, Range.create("-", "+")).forEach(m -> out.add(m.getBody().toString()));
                        default -> out.add(key);
                    }
                }
                cursor = page;
            } while (!cursor.isFinished());
        }
        return out;
    }
}
