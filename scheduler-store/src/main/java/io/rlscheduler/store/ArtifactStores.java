package io.rlscheduler.store;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * Opens an {@link ArtifactStore} from its URI: {@code file:/path} (or a plain path) is a
 * {@link DirectoryStore}; any other scheme is opened by the {@link ArtifactStoreProvider} of that
 * scheme found on the classpath ({@code s3://bucket/prefix} by scheduler-store-s3).
 *
 * <p>Settings come from the URI's query ({@code s3://runs/lab?endpoint=http://minio:9000&path-style=true})
 * and from the caller's map, the map winning; credentials belong in the map or the machine's own
 * configuration (the AWS chain for S3), never in a URI that masters hand to workers.
 */
public final class ArtifactStores {

    /** The {@link DirectoryStore} setting that turns forcing to disk off: {@value} ({@code true} or {@code false}, default true). */
    public static final String FSYNC = "fsync";

    private ArtifactStores() {
    }

    /**
     * Opens a store.
     *
     * @param uri      the store's URI
     * @param settings extra settings (see the store's provider); may be empty
     * @return the store; the caller closes it
     * @throws IllegalArgumentException if no store of that scheme is on the classpath, or the URI
     *                                  or a setting is invalid
     * @throws StoreUnavailableException if the store cannot be reached
     */
    public static ArtifactStore open(URI uri, Map<String, String> settings) {
        Objects.requireNonNull(uri, "uri");
        Map<String, String> all = new LinkedHashMap<>(query(uri));
        all.putAll(Objects.requireNonNull(settings, "settings"));
        String scheme = uri.getScheme() == null ? "file" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (scheme.equals("file")) {
            return directory(uri, all);
        }
        for (ArtifactStoreProvider provider : ServiceLoader.load(ArtifactStoreProvider.class)) {
            if (provider.getScheme().equals(scheme)) {
                return provider.open(uri, all);
            }
        }
        throw new IllegalArgumentException("no artifact store for '" + scheme + ":' URIs on the classpath"
                + (scheme.equals("s3") ? " (add the scheduler-store-s3 module)" : "") + ": " + uri);
    }

    /** Opens a store from a URI given as text; a path without a scheme is a directory. */
    public static ArtifactStore open(String uri, Map<String, String> settings) {
        return open(parse(uri), settings);
    }

    /**
     * Parses a store URI as a user writes it: {@code s3://bucket/prefix}, {@code file:/srv/runs},
     * or a plain path (made absolute).
     *
     * @throws IllegalArgumentException if it is neither
     */
    public static URI parse(String uri) {
        Objects.requireNonNull(uri, "uri");
        if (uri.isBlank()) {
            throw new IllegalArgumentException("an artifact store URI must not be empty");
        }
        if (!uri.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
            return Path.of(uri).toAbsolutePath().normalize().toUri();
        }
        try {
            return new URI(uri);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("invalid artifact store URI '" + uri + "': " + e.getMessage(), e);
        }
    }

    private static DirectoryStore directory(URI uri, Map<String, String> settings) {
        for (String name : settings.keySet()) {
            if (!name.equals(FSYNC)) {
                throw new IllegalArgumentException("unknown setting '" + name + "' for a directory store (known: " + FSYNC + ")");
            }
        }
        String fsync = settings.getOrDefault(FSYNC, "true");
        if (!fsync.equals("true") && !fsync.equals("false")) {
            throw new IllegalArgumentException(FSYNC + " must be true or false, was '" + fsync + "'");
        }
        if (uri.getPath() == null || uri.getPath().isEmpty()) {
            throw new IllegalArgumentException("a file: store URI needs an absolute path, as file:/srv/runs: " + uri);
        }
        return new DirectoryStore(Path.of(uri.getPath()), Boolean.parseBoolean(fsync));
    }

    /** The URI's query as settings; a setting without a value is "true". */
    static Map<String, String> query(URI uri) {
        Map<String, String> out = new LinkedHashMap<>();
        String q = uri.getRawQuery();
        if (q == null || q.isEmpty()) {
            return out;
        }
        for (String pair : q.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "true" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(name, value);
        }
        return out;
    }
}
