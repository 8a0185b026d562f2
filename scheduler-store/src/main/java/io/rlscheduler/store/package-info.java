/**
 * The artifact store: where a run's checkpoints, outputs and logs outlive the machine that made
 * them. {@link io.rlscheduler.store.ArtifactStore} is the interface (objects under keys, each
 * written whole or not at all); {@link io.rlscheduler.store.DirectoryStore} the store in a
 * directory; {@link io.rlscheduler.store.ArtifactStores} opens one by URI, finding other schemes
 * through {@link io.rlscheduler.store.ArtifactStoreProvider} services (scheduler-store-s3 for
 * {@code s3:}). The layout of a run's objects in a store is described in docs/architecture.md.
 */
package io.rlscheduler.store;
