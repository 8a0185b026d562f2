package io.rlscheduler.store;

import java.net.URI;
import java.util.Map;

/**
 * Opens the stores of one URI scheme: a service ({@link java.util.ServiceLoader}) that a store's
 * module registers in {@code META-INF/services/io.rlscheduler.store.ArtifactStoreProvider}, so that
 * {@link ArtifactStores#open} finds it when the module is on the classpath and nothing of it is
 * loaded otherwise.
 */
public interface ArtifactStoreProvider {

    /** Returns the URI scheme this provider opens, in lower case ({@code "s3"}). */
    String getScheme();

    /**
     * Opens a store.
     *
     * @param uri      the store's URI, of this provider's scheme
     * @param settings the store's settings, the URI's query parameters merged with the caller's
     *                 (the caller's win); each provider documents its own
     * @return the store
     * @throws IllegalArgumentException if the URI or a setting is invalid (unknown settings included)
     * @throws StoreUnavailableException if the store cannot be reached
     */
    ArtifactStore open(URI uri, Map<String, String> settings);
}
