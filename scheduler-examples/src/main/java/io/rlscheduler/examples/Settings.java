package io.rlscheduler.examples;

import java.util.HashMap;
import java.util.Map;

/**
 * Reads the example mains' settings: {@code --name value} arguments first, then the environment
 * variable {@code RLS_NAME} (upper case, '-' as '_'), then the default.
 */
final class Settings {

    private final Map<String, String> args = new HashMap<>();

    Settings(String[] argv) {
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("arguments must be pairs of --name value; unexpected '" + a + "'");
            }
            args.put(a.substring(2), argv[++i]);
        }
    }

    String get(String name, String fallback) {
        String value = args.get(name);
        if (value == null) {
            value = System.getenv("RLS_" + name.toUpperCase().replace('-', '_'));
        }
        return value != null ? value : fallback;
    }

    /** Returns the lease core settings: namespace and the lease durations, each in ms. */
    io.rlscheduler.core.CoreOptions coreOptions() {
        io.rlscheduler.core.CoreOptions d = io.rlscheduler.core.CoreOptions.defaults();
        return io.rlscheduler.core.CoreOptions.builder()
                .namespace(get("namespace", d.getNamespace()))
                .heartbeatInterval(millis("heartbeat-ms", d.getHeartbeatInterval()))
                .livenessLease(millis("liveness-ms", d.getLivenessLease()))
                .taskLease(millis("task-lease-ms", d.getTaskLease()))
                .ackTimeout(millis("ack-timeout-ms", d.getAckTimeout()))
                .build();
    }

    java.time.Duration millis(String name, java.time.Duration fallback) {
        String value = get(name, null);
        return value == null ? fallback : java.time.Duration.ofMillis(Long.parseLong(value));
    }

    String require(String name) {
        String value = get(name, null);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing setting: pass --" + name + " or set RLS_"
                    + name.toUpperCase().replace('-', '_'));
        }
        return value;
    }
}
