package io.rlscheduler.store.s3;

import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.ArtifactStoreProvider;
import java.net.URI;
import java.util.Map;

/**
 * Opens {@code s3://bucket/prefix} stores for {@code ArtifactStores.open}: registered as a service,
 * found whenever this module is on the classpath. The settings are those of
 * {@link S3StoreOptions}; an unknown one is refused. Thread-safe.
 */
public final class S3StoreProvider implements ArtifactStoreProvider {

    /** The scheme this provider opens: {@value}. */
    public static final String SCHEME = "s3";

    @Override
    public String getScheme() {
        return SCHEME;
    }

    @Override
    public ArtifactStore open(URI uri, Map<String, String> settings) {
        return S3Store.open(S3StoreOptions.parse(uri, settings));
    }
}
