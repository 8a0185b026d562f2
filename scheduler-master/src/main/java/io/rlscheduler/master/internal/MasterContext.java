package io.rlscheduler.master.internal;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.master.internal.auth.WorkerAuthentication;
import io.rlscheduler.master.internal.log.TaskLogManager;

/** What every worker connection of a master shares. Immutable apart from the components' own state. */
public final class MasterContext {

    final String masterId;
    final byte[] secret;
    final CoreOptions coreOptions;
    final WorkerRegistry registry;
    final Dispatcher dispatcher;
    final TaskLogManager logs;
    final long handshakeTimeoutMillis;
    final java.util.function.Supplier<io.rlscheduler.core.internal.LeaderStatus> leadership;
    final AttemptHolders holders;
    final HolderStats holderStats;
    final WorkerLimits limits;
    final OpenAttemptIndex openAttempts;
    final WorkerAuthentication auth;
    /**
     * Renews an idle worker's liveness lease in Redis for it (worker id, session id): the new
     * deadline, or 0 when not renewed ({@link io.rlscheduler.core.internal.LeaseCore#renewIdle}).
     */
    final java.util.function.BiFunction<String, String, java.util.concurrent.CompletableFuture<Long>> renewIdle;

    public MasterContext(String masterId, byte[] secret, CoreOptions coreOptions, WorkerRegistry registry,
                         Dispatcher dispatcher, TaskLogManager logs, long handshakeTimeoutMillis,
                         java.util.function.Supplier<io.rlscheduler.core.internal.LeaderStatus> leadership,
                         AttemptHolders holders, HolderStats holderStats, WorkerLimits limits, OpenAttemptIndex openAttempts,
                         WorkerAuthentication auth,
                         java.util.function.BiFunction<String, String, java.util.concurrent.CompletableFuture<Long>> renewIdle) {
        this.renewIdle = renewIdle;
        this.leadership = leadership;
        this.auth = auth;
        this.holders = holders;
        this.holderStats = holderStats;
        this.masterId = masterId;
        this.secret = secret.clone();
        this.coreOptions = coreOptions;
        this.registry = registry;
        this.dispatcher = dispatcher;
        this.logs = logs;
        this.handshakeTimeoutMillis = handshakeTimeoutMillis;
        this.limits = limits;
        this.openAttempts = openAttempts;
    }
}
