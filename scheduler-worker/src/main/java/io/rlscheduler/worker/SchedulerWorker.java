package io.rlscheduler.worker;

import io.rlscheduler.core.internal.DaemonThreads;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.WorkerRevokedException;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.Lifecycle;
import io.rlscheduler.core.internal.RequeueResult;
import io.rlscheduler.core.internal.SharedClientResources;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.protocol.ClientTlsOptions;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.worker.internal.Attempt;
import io.rlscheduler.worker.internal.AttemptRunner;
import io.rlscheduler.worker.internal.Attempts;
import io.rlscheduler.worker.internal.EndRecorder;
import io.rlscheduler.worker.internal.HelloCredential;
import io.rlscheduler.worker.internal.LeaseKeeper;
import io.rlscheduler.worker.internal.LogShipper;
import io.rlscheduler.worker.internal.MasterLink;
import io.rlscheduler.worker.internal.MessageRouter;
import io.rlscheduler.worker.internal.ResourceProbe;
import io.rlscheduler.worker.internal.WorkerRuntime;
import io.rlscheduler.worker.internal.artifacts.WorkerArtifacts;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.ArtifactStores;
import io.rlscheduler.worker.internal.provenance.ProvenanceRecorder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker: one per machine. Registers with Redis, connects to a master, and runs the tasks it is
 * given, each as a supervised attempt with exactly its GPUs.
 *
 * <pre>{@code
 * SchedulerWorker worker = SchedulerWorker.builder()
 *     .masters("gpu-master:9000").redis(RedisURI.create("redis://redis:6379"))
 *     .workerId("gpu-box-1").secret(secret).gpuIds(0, 1).scriptRoots(Path.of("scripts"))
 *     .build();
 * worker.start();
 * }</pre>
 *
 * <p>What it does for every attempt: confirms the assignment in Redis (fenced by its epoch),
 * prepares a run directory per attempt and a checkpoint directory per task, starts the attempt
 * with the {@link TaskExecutor} (by default {@link PythonTaskExecutor}: a python3 process group
 * under a launcher that kills the group if this JVM dies), records its provenance in Redis once it
 * started (the script file's SHA-256, the git commit and state of its work tree, the interpreter's
 * version, the hostname, the GPUs' UUIDs: {@link io.rlscheduler.core.AttemptProvenance}; a file's
 * hashed on a task thread, never holding the start up; stored with the attempt's end when that
 * comes within a second), streams its output lines to the master
 * with sequence numbers (kept until acknowledged, resent after a reconnect), collects its
 * {@code RLS_METRIC} lines, enforces its timeout, stops it on cancel, and records how it ended in
 * Redis, with the number of lines it printed: the masters learn of the end from that record's
 * event, and end the attempt's log once they hold that many lines.
 *
 * <p>Leases: every {@code heartbeatInterval} it renews its liveness and its tasks' leases in Redis
 * directly (not through the master), so losing the master does not stop its work. If it cannot
 * renew a task's lease for the task lease minus a stopping margin (kill grace plus two heartbeats,
 * at most half the lease), it stops that task itself (self-fencing), before the lease can expire
 * and the task run elsewhere. The launcher enforces the same limit on its own through keepalives,
 * so a worker JVM that is frozen and cannot act still loses its task's processes in time.
 *
 * <p>This class holds the wiring and the lifecycle; each mechanism is a class of its own in
 * {@code io.rlscheduler.worker.internal}. Settings come from an immutable {@link WorkerOptions}.
 * Lifecycle as {@link java.util.concurrent.ExecutorService}: {@link #start()}, {@link #shutdown()}
 * (let attempts finish), {@link #shutdownNow()} (stop them), {@link #awaitTermination}, and
 * {@link #close()} (stop them, then a bounded wait). Thread-safe.
 */
public final class SchedulerWorker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SchedulerWorker.class);

    private final WorkerOptions options;
    private final RedisClient client;
    /** The client the worker made itself (on the JVM's shared Lettuce threads); null for a user's client. */
    private final SharedClientResources.OwnedClient ownClient;
    private final String sessionId = "s-" + UUID.randomUUID();
    private final Attempts attempts = new Attempts();
    private final ResourceProbe probe;
    private final TaskExecutor executor;
    private final RunDirectories runDirectories;
    private final Duration fenceAfter;
    private final Lifecycle lifecycle;
    /** Whether {@link #stopAll()} ran; guarded by this worker's monitor. */
    private boolean stopped;
    // Made by start(), under this worker's monitor.
    private LeaseCore core;
    private volatile MasterLink link;
    private EventLoopGroup group;
    private ScheduledThreadPoolExecutor timers;
    private ExecutorService taskThreads;
    private volatile AttemptRunner runner;
    private ProvenanceRecorder provenance;
    private WorkerArtifacts artifacts;
    /** The host application's store, or null; never closed by the worker. */
    private final ArtifactStore userStore;

    private SchedulerWorker(WorkerOptions options, RedisClient userClient, TaskExecutor userExecutor,
                            ArtifactStore userStore) {
        this.options = options;
        this.userStore = userStore;
        this.lifecycle = new Lifecycle("worker " + options.getWorkerId());
        this.ownClient = userClient == null ? ownClient(options.getRedisUri().orElseThrow()) : null;
        this.client = ownClient != null ? ownClient.client() : userClient;
        this.probe = new ResourceProbe(options.getNvidiaSmi());
        this.runDirectories = new RunDirectories(options.getRunRoot());
        this.fenceAfter = LeaseKeeper.fenceAfter(options.getCoreOptions(), options.getKillGrace());
        this.executor = userExecutor != null ? userExecutor : PythonTaskExecutor.builder()
                .scriptRoots(options.getScriptRoots()).stateDirectory(options.getStateDirectory())
                .gracePeriod(options.getKillGrace()).keepaliveTimeout(fenceAfter).build();
    }

    /**
     * Creates the worker's own Redis client. While disconnected it rejects commands at once
     * instead of queueing them: a heartbeat must fail now (and count towards self-fencing), not
     * renew a lease minutes later after the worker has already stopped the task.
     */
    private static SharedClientResources.OwnedClient ownClient(RedisURI uri) {
        SharedClientResources.OwnedClient owned = SharedClientResources.newClient(uri);
        owned.client().setOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
        return owned;
    }

    /** Returns a new builder. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns the worker's settings. */
    public WorkerOptions getOptions() {
        return options;
    }

    /** Returns the worker id. */
    public String getWorkerId() {
        return options.getWorkerId();
    }

    /** Returns the session id of this process start. */
    public String getSessionId() {
        return sessionId;
    }

    /** Returns whether the worker is connected to and authenticated by a master. */
    public boolean isConnected() {
        MasterLink l = link;
        return l != null && l.readyChannel() != null;
    }

    /** Returns the reason the last master gave for rejecting this worker, or the empty string. */
    public String getLastRejection() {
        MasterLink l = link;
        return l == null ? "" : l.getLastRejection();
    }

    /** Returns the ids of the tasks whose attempts are running here. */
    public List<String> getRunningTaskIds() {
        List<String> ids = new ArrayList<>();
        for (Attempt a : attempts.running()) {
            ids.add(a.getLease().getTaskId());
        }
        return ids;
    }

    /** Returns how many attempts this worker still holds: running, or ended with lines a master has not acknowledged. */
    int heldAttempts() {
        return attempts.all().size();
    }

    /**
     * Starts the worker: kills processes left by a previous run of this worker, registers with
     * Redis (taking back tasks a previous session still held), connects to a master. Blocks until
     * registered; the connection is made in the background.
     *
     * @return this worker
     * @throws IllegalStateException if the worker was already started
     * @throws SchedulerException    if Redis cannot be reached (retryable), or the worker key
     *                               file cannot be used (not retryable)
     * @throws WorkerRevokedException if this worker id was revoked
     */
    public synchronized SchedulerWorker start() {
        lifecycle.start();
        String id = options.getWorkerId();
        HelloCredential credential = HelloCredential.of(options);
        boolean credentialChecked = false;
        try {
            credential.check(); // a key file that cannot serve fails the start, not every connection
            credentialChecked = true;
            if (executor instanceof PythonTaskExecutor python) {
                int killed = python.killLeftovers();
                if (killed > 0) {
                    log.warn("killed {} process groups left by a previous run of worker {}", killed, id);
                }
            }
            core = LeaseCore.create(client, options.getCoreOptions());
            List<Integer> gpus = options.getGpuIds().orElseGet(this::detectGpus);
            WorkerRegistration registration = new WorkerRegistration(id, sessionId, options.getLabels(),
                    options.getCpuSlots(), options.getMemoryBytes().orElseGet(ResourceProbe::totalMemoryBytes), gpus);
            RequeueResult taken = core.register(registration).get(30, TimeUnit.SECONDS);
            if (!taken.getRequeued().isEmpty() || !taken.getFailed().isEmpty()) {
                log.warn("tasks of this worker's previous session were taken back: requeued {}, failed {}",
                        taken.getRequeued(), taken.getFailed());
            }
            timers = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("rls-worker-timers-" + id));
            // A task's timeout is cancelled when it ends: dropped from the queue at once, not kept
            // (with its attempt) until the deadline it will never reach.
            timers.setRemoveOnCancelPolicy(true);
            taskThreads = Executors.newCachedThreadPool(DaemonThreads.named("rls-worker-tasks-" + id));
            group = options.getTransport().newGroup(1, "rls-worker-io-" + id);
            link = new MasterLink(options.getMasters(), options.getTransport(), group, options.getProtocolOptions(),
                    credential, id, sessionId, options.getLabels(), options.getReconnectMin(),
                    options.getReconnectMax(), options.getCoreOptions().getHeartbeatInterval());
            options.getTls().ifPresent(link::useTls);
            WorkerRuntime runtime = new WorkerRuntime(options, sessionId, core, link, group, timers, taskThreads);

            artifacts = openArtifacts();
            LogShipper shipper = new LogShipper(runtime, attempts);
            provenance = new ProvenanceRecorder(executor, runtime, probe::lastGpus);
            runner = new AttemptRunner(runtime, attempts, provenance, runDirectories, shipper,
                    new EndRecorder(runtime, provenance), fenceAfter, lifecycle::isRunning, artifacts);
            LeaseKeeper leases = new LeaseKeeper(runtime, registration, attempts, probe, runner::stop);

            leases.start();
            shipper.start();
            link.start(new MessageRouter(attempts, runner, shipper, leases));
            log.info("worker {} (session {}) started: {} CPU slots, GPUs {}, labels {}", id, sessionId,
                    options.getCpuSlots(), gpus, options.getLabels());
            return this;
        } catch (Exception e) {
            shutdownNow();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (e.getCause() instanceof WorkerRevokedException revoked) {
                throw revoked;
            }
            throw new SchedulerException("worker " + id + " failed to start: " + e, credentialChecked, e);
        }
    }

    /**
     * Opens the artifact store: the host application's, else the one set in the options, else the
     * one the masters published in Redis, with this machine's settings. Null when there is none:
     * checkpoints then stay on this machine's disk.
     */
    private WorkerArtifacts openArtifacts() throws Exception {
        ArtifactOptions a = options.getArtifacts();
        ArtifactStore store = userStore;
        if (store == null) {
            String uri = a.getStore() != null ? a.getStore() : core.artifacts().publishedStore().get(30, TimeUnit.SECONDS);
            if (uri == null) {
                log.warn("worker {}: no artifact store set and none published by a master: checkpoints and outputs stay"
                        + " on this machine's disk, and a run resumes from its checkpoint only here", options.getWorkerId());
                return null;
            }
            store = ArtifactStores.open(uri, a.getStoreSettings());
            log.info("worker {}: artifact store {}", options.getWorkerId(), store.getUri());
        }
        return new WorkerArtifacts(core, options.getWorkerId(), sessionId, store, userStore == null, a,
                options.getStateDirectory().resolve("snapshots"),
                LeaseKeeper.fenceAfter(options.getCoreOptions(), options.getKillGrace()));
    }

    private List<Integer> detectGpus() {
        List<Integer> ids = new ArrayList<>();
        for (GpuStatus gpu : probe.gpus()) {
            ids.add(gpu.getIndex());
        }
        return ids;
    }

    /**
     * Stops taking tasks and lets the running attempts finish: each ends by itself, its end is
     * recorded in Redis and its last lines get up to 10 s to reach a master; then the worker stops.
     * Nothing is killed. {@link #close()} does not drain like this: it is {@link #shutdownNow()}
     * and a bounded wait. Idempotent; returns at once (see {@link #awaitTermination}).
     */
    public void shutdown() {
        switch (lifecycle.beginStop()) {
            case NEVER_STARTED -> releaseUnstarted();
            case BEGUN -> lifecycle.stopInBackground(stopperName(), () -> {
                try {
                    attempts.awaitExecutions(Long.MAX_VALUE);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (!delivered() && System.nanoTime() < deadline) {
                        Thread.sleep(50); // shutdown's own pacing while the last lines drain
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    stopAll();
                }
            });
            case ALREADY -> { }
        }
    }

    /** Whether every attempt has ended and had its lines acknowledged by a master. */
    private boolean delivered() {
        for (Attempt a : attempts.all()) {
            if (!a.isEnded() || !a.getLogs().isFullyAcked()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Stops every running attempt (TERM to its process group, KILL after the kill grace) and then
     * the worker, waiting for the attempts up to the kill grace plus 10 s. The stopped attempts'
     * ends are not recorded: their leases lapse and the reaper re-queues the tasks. Also cuts a
     * {@link #shutdown()} in progress short. {@link #close()} is this and a bounded wait.
     * Idempotent; returns at once (see {@link #awaitTermination}).
     */
    public void shutdownNow() {
        if (lifecycle.beginStop() == Lifecycle.Stop.NEVER_STARTED) {
            releaseUnstarted();
            return;
        }
        if (lifecycle.isTerminated()) {
            return;
        }
        AttemptRunner r = runner;
        if (r != null) {
            attempts.all().forEach(a -> r.stop(a, StopReason.SHUTDOWN));
        }
        lifecycle.stopInBackground(stopperName(), () -> {
            attempts.awaitExecutions(options.getKillGrace().toNanos() + TimeUnit.SECONDS.toNanos(10));
            stopAll();
        });
    }

    private String stopperName() {
        return "rls-worker-shutdown-" + options.getWorkerId();
    }

    /** Releases what a worker holds before {@link #start()}: its own Redis client and the probe. */
    private void releaseUnstarted() {
        probe.close();
        if (ownClient != null) {
            ownClient.close();
        }
    }

    /** Stops the worker's parts, once; under the monitor, so after a {@link #start()} in progress. */
    private synchronized void stopAll() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            if (provenance != null) {
                provenance.flush();
            }
            if (link != null) {
                link.stop();
            }
            if (timers != null) {
                timers.shutdownNow();
            }
            probe.close();
            if (group != null) {
                group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            }
            if (taskThreads != null) {
                taskThreads.shutdownNow();
            }
            if (artifacts != null) {
                artifacts.close();
            }
            if (core != null) {
                core.close();
            }
            if (ownClient != null) {
                ownClient.close();
            }
        } catch (RuntimeException e) {
            log.warn("error while stopping worker {}: {}", options.getWorkerId(), e.toString());
        } finally {
            log.info("worker {} stopped", options.getWorkerId());
        }
    }

    /** Waits until the worker has stopped; returns whether it did within the timeout. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return lifecycle.awaitTermination(timeout);
    }

    /** Returns whether a stop has begun ({@link #shutdown()}, {@link #shutdownNow()} or {@link #close()}). */
    public boolean isShutdown() {
        return lifecycle.isShutdown();
    }

    /** Returns whether the worker has fully stopped. */
    public boolean isTerminated() {
        return lifecycle.isTerminated();
    }

    /**
     * Kills and stops: {@link #shutdownNow()}, then waits up to the kill grace plus 20 s for the
     * worker to stop. The attempts it stops are not recorded as ended; the reaper re-queues their
     * tasks once their leases lapse. For an orderly end that lets attempts finish, call
     * {@link #shutdown()} and {@link #awaitTermination} first.
     */
    @Override
    public void close() {
        shutdownNow();
        lifecycle.awaitQuietly(options.getKillGrace().plusSeconds(20));
    }

    /**
     * Builds a {@link SchedulerWorker}: its {@link WorkerOptions} and the collaborators that are
     * not settings (a Redis client to share, a {@link TaskExecutor}). The setters of plain settings
     * set them on the options builder, validating at once; {@link #build()} builds the options and
     * then the worker, which keeps that value: setters called afterwards change nothing it uses.
     * Not thread-safe.
     */
    public static final class Builder {
        private WorkerOptions.Builder options = WorkerOptions.builder();
        private RedisClient client;
        private TaskExecutor executor;
        private ArtifactStore store;

        private Builder() {
        }

        /** Replaces every setting with those of {@code options}; later setters change the copy. */
        public Builder options(WorkerOptions options) {
            this.options = options.mutate();
            return this;
        }

        /** Sets {@link WorkerOptions.Builder#masters(String...)}. */
        public Builder masters(String... addresses) { options.masters(addresses); return this; }

        /** Sets {@link WorkerOptions.Builder#redis(RedisURI)}; replaces a client given before. */
        public Builder redis(RedisURI uri) {
            options.redis(uri);
            this.client = null;
            return this;
        }

        /** Uses an existing Lettuce client (shared, not shut down by the worker); replaces a Redis server given before. */
        public Builder redisClient(RedisClient client) {
            this.client = Objects.requireNonNull(client, "client");
            options.noRedis();
            return this;
        }

        /** Sets {@link WorkerOptions.Builder#workerId(String)}. */
        public Builder workerId(String id) { options.workerId(id); return this; }

        /** Sets {@link WorkerOptions.Builder#secret(byte[])}. */
        public Builder secret(byte[] secret) { options.secret(secret); return this; }

        /** Sets {@link WorkerOptions.Builder#secret(String)}. */
        public Builder secret(String secret) { options.secret(secret); return this; }

        /** Sets {@link WorkerOptions.Builder#workerKey(String)}. */
        public Builder workerKey(String material) { options.workerKey(material); return this; }

        /** Sets {@link WorkerOptions.Builder#workerKeyFile(Path)}. */
        public Builder workerKeyFile(Path file) { options.workerKeyFile(file); return this; }

        /** Sets {@link WorkerOptions.Builder#gpuIds(Integer...)}. */
        public Builder gpuIds(Integer... ids) { options.gpuIds(ids); return this; }

        /** Sets {@link WorkerOptions.Builder#gpuIds(List)}. */
        public Builder gpuIds(List<Integer> ids) { options.gpuIds(ids); return this; }

        /** Sets {@link WorkerOptions.Builder#cpuSlots(int)}. */
        public Builder cpuSlots(int slots) { options.cpuSlots(slots); return this; }

        /** Sets {@link WorkerOptions.Builder#memoryBytes(long)}. */
        public Builder memoryBytes(long bytes) { options.memoryBytes(bytes); return this; }

        /** Sets {@link WorkerOptions.Builder#labels(Map)}. */
        public Builder labels(Map<String, String> labels) { options.labels(labels); return this; }

        /** Sets {@link WorkerOptions.Builder#scriptRoots(Path...)}. */
        public Builder scriptRoots(Path... roots) { options.scriptRoots(roots); return this; }

        /** Sets {@link WorkerOptions.Builder#runRoot(Path)}. */
        public Builder runRoot(Path root) { options.runRoot(root); return this; }

        /** Sets {@link WorkerOptions.Builder#stateDirectory(Path)}. */
        public Builder stateDirectory(Path dir) { options.stateDirectory(dir); return this; }

        /** Sets how tasks run; default a {@link PythonTaskExecutor} over the script roots. */
        public Builder executor(TaskExecutor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Sets the artifact store the worker uses, instead of opening the one its options or the
         * masters name; the host application keeps it and closes it after the worker stopped.
         */
        public Builder artifactStore(ArtifactStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** Sets {@link WorkerOptions.Builder#artifacts(ArtifactOptions)}. */
        public Builder artifacts(ArtifactOptions artifacts) { this.options.artifacts(artifacts); return this; }

        /** Sets {@link WorkerOptions.Builder#coreOptions(CoreOptions)}. */
        public Builder coreOptions(CoreOptions options) { this.options.coreOptions(options); return this; }

        /** Sets {@link WorkerOptions.Builder#killGrace(Duration)}. */
        public Builder killGrace(Duration grace) { options.killGrace(grace); return this; }

        /** Sets {@link WorkerOptions.Builder#reconnectBackoff(Duration, Duration)}. */
        public Builder reconnectBackoff(Duration min, Duration max) { options.reconnectBackoff(min, max); return this; }

        /** Sets {@link WorkerOptions.Builder#logBatchLines(int)}. */
        public Builder logBatchLines(int lines) { options.logBatchLines(lines); return this; }

        /** Sets {@link WorkerOptions.Builder#logFlushInterval(Duration)}. */
        public Builder logFlushInterval(Duration interval) { options.logFlushInterval(interval); return this; }

        /** Sets {@link WorkerOptions.Builder#maxBufferedLines(int)}. */
        public Builder maxBufferedLines(int lines) { options.maxBufferedLines(lines); return this; }

        /** Sets {@link WorkerOptions.Builder#nvidiaSmi(String)}. */
        public Builder nvidiaSmi(String command) { options.nvidiaSmi(command); return this; }

        /** Sets {@link WorkerOptions.Builder#transport(NettyTransport)}. */
        public Builder transport(NettyTransport transport) { options.transport(transport); return this; }

        /** Sets {@link WorkerOptions.Builder#protocolOptions(ProtocolOptions)}. */
        public Builder protocolOptions(ProtocolOptions options) { this.options.protocolOptions(options); return this; }

        /** Sets {@link WorkerOptions.Builder#tls(ClientTlsOptions)}. */
        public Builder tls(ClientTlsOptions tls) { options.tls(tls); return this; }

        /**
         * Returns the worker (not started).
         *
         * @throws IllegalStateException if masters, Redis, worker id or secret is missing
         */
        public SchedulerWorker build() {
            WorkerOptions built = options.build();
            if (built.getRedisUri().isEmpty() && client == null) {
                throw new IllegalStateException("a Redis server is required: call redis(RedisURI) or redisClient(RedisClient)");
            }
            return new SchedulerWorker(built, client, executor, store);
        }
    }
}
