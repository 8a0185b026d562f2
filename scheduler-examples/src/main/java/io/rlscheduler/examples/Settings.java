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

    String require(String name) {
        String value = get(name, null);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing setting: pass --" + name + " or set RLS_"
                    + name.toUpperCase().replace('-', '_'));
        }
        return value;
    }
}
