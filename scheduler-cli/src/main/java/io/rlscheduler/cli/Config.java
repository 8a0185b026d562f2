package io.rlscheduler.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * Where rls finds the server and the token. Each one, separately, from the first of: the flag
 * ({@code --server}, {@code --token}), the environment ({@code RLS_SERVER}, {@code RLS_TOKEN}), the
 * config file ({@code RLS_CONFIG}, else {@code ~/.config/rls/config.properties}, keys
 * {@code server} and {@code token}); the server defaults to {@value #DEFAULT_SERVER}, the token to
 * none.
 */
final class Config {
    static final String DEFAULT_SERVER = "http://127.0.0.1:8080";

    private final String server;
    private final String token;
    private final String tokenSource;

    private Config(String server, String token, String tokenSource) {
        this.server = server;
        this.token = token;
        this.tokenSource = tokenSource;
    }

    /** The server's base URL, without a trailing slash. */
    String server() {
        return server;
    }

    /** The bearer token, or null. */
    String token() {
        return token;
    }

    /** Where the token came from ("--token", "RLS_TOKEN", the file's path), or null when none. */
    String tokenSource() {
        return tokenSource;
    }

    /**
     * Resolves the server and the token.
     *
     * @param flagServer {@code --server}, or null
     * @param flagToken  {@code --token}, or null
     * @param env        the environment
     * @param home       the user's home directory (for the default config file)
     */
    static Config resolve(String flagServer, String flagToken, Map<String, String> env, Path home) {
        Path file = configFile(env, home);
        Properties props = null;
        String server = nonEmpty(flagServer);
        if (server == null) {
            server = nonEmpty(env.get("RLS_SERVER"));
        }
        String token = nonEmpty(flagToken);
        String tokenSource = token != null ? "--token" : null;
        if (token == null) {
            token = nonEmpty(env.get("RLS_TOKEN"));
            tokenSource = token != null ? "RLS_TOKEN" : null;
        }
        if (server == null || token == null) {
            props = read(file, env.get("RLS_CONFIG") != null);
            if (server == null) {
                server = nonEmpty(props.getProperty("server"));
            }
            if (token == null) {
                token = nonEmpty(props.getProperty("token"));
                tokenSource = token != null ? file.toString() : null;
            }
        }
        if (server == null) {
            server = DEFAULT_SERVER;
        }
        return new Config(normalize(server), token, tokenSource);
    }

    /** {@code RLS_CONFIG}, else {@code <home>/.config/rls/config.properties}. */
    static Path configFile(Map<String, String> env, Path home) {
        String named = nonEmpty(env.get("RLS_CONFIG"));
        if (named != null) {
            return Path.of(named);
        }
        return home.resolve(".config").resolve("rls").resolve("config.properties");
    }

    private static Properties read(Path file, boolean named) {
        Properties props = new Properties();
        if (!Files.isRegularFile(file)) {
            if (named) {
                throw RlsException.usage("RLS_CONFIG names " + file + ", which is not a file");
            }
            return props;
        }
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(reader);
        } catch (IOException | IllegalArgumentException e) {
            throw RlsException.usage("cannot read the config file " + file + ": " + e.getMessage());
        }
        return props;
    }

    /** Adds {@code http://} when no scheme is given and drops trailing slashes. */
    static String normalize(String server) {
        String s = server.trim();
        if (!s.contains("://")) {
            s = "http://" + s;
        }
        if (!s.startsWith("http://") && !s.startsWith("https://")) {
            throw RlsException.usage("the server must be an http:// or https:// URL: " + server);
        }
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }

    private static String nonEmpty(String s) {
        return s == null || s.trim().isEmpty() ? null : s.trim();
    }
}
