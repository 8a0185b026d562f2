package io.rlscheduler.master;

import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.internal.ArtifactRecords;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.ArtifactStores;
import io.rlscheduler.store.StoreUnavailableException;
import java.net.URI;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A master's artifact store: opened at start from {@link MasterOptions#getArtifactStore()} (or the
 * host application's own, which the host closes), published in Redis for the namespace's workers,
 * and closed at shutdown if the master opened it.
 */
final class MasterStore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MasterStore.class);

    private final ArtifactStore store;
    private final boolean owned;

    private MasterStore(ArtifactStore store, boolean owned) {
        this.store = store;
        this.owned = owned;
    }

    /**
     * Opens the master's store: {@code given} if not null (the host's, not closed here), else the
     * one its options name.
     *
     * @throws SchedulerException if the store cannot be opened, saying which and why (retryable
     *                            when it could not be reached, not when the URI or a setting is wrong)
     */
    static MasterStore open(MasterOptions options, ArtifactStore given, String masterId) {
        if (given != null) {
            return new MasterStore(given, false);
        }
        URI uri = options.getArtifactStore();
        try {
            return new MasterStore(ArtifactStores.open(uri, options.getArtifactStoreSettings()), true);
        } catch (StoreUnavailableException e) {
            throw new SchedulerException("master " + masterId + " cannot open its artifact store " + uri + ": "
                    + e.getMessage(), true, e);
        } catch (IllegalArgumentException e) {
            throw new SchedulerException("master " + masterId + " cannot open its artifact store " + uri + ": "
                    + e.getMessage(), false, e);
        }
    }

    /** Returns the store. */
    ArtifactStore get() {
        return store;
    }

    /**
     * Publishes the store's URI for the workers of the namespace, warning when another one was
     * published before: the masters of one namespace must share one store, or each serves only the
     * logs it uploaded and workers write where only some masters look.
     *
     * @param await waits for Redis's answer within the API timeout
     */
    void publish(ArtifactRecords records, MasterHealth.Await await, String masterId) {
        String uri = store.getUri().toString();
        String before = await.await(records.publishStore(uri));
        if (before != null && !before.equals(uri)) {
            log.warn("master {}: artifact store {} published, replacing {}, which another master of this namespace"
                    + " published: the masters of one namespace must share one store", masterId, uri, before);
        } else {
            log.info("master {}: artifact store {}", masterId, uri);
        }
    }

    /** Closes the store if the master opened it; a host's store is left to the host. */
    @Override
    public void close() {
        if (owned) {
            try {
                store.close();
            } catch (RuntimeException e) {
                log.warn("closing the artifact store {} failed: {}", store.getUri(), e.toString());
            }
        }
    }

    @Override
    public String toString() {
        return "MasterStore[" + Objects.toString(store.getUri()) + (owned ? "" : ", the host's") + "]";
    }
}
