package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.SchedulerTimeoutException;
import io.rlscheduler.core.TaskIdConflictException;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerRemoval;
import io.rlscheduler.core.internal.CancelResult;
import io.rlscheduler.core.internal.CancelStatus;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.SharedClientResources;
import io.rlscheduler.core.internal.SubmitResult;
import io.rlscheduler.master.internal.ConnectedWorker;
import io.rlscheduler.core.internal.Lifecycle;
import io.rlscheduler.master.internal.AttemptHolders;
import io.rlscheduler.master.internal.Dispatcher;
import io.rlscheduler.master.internal.HolderStats;
import io.rlscheduler.master.internal.GpuReadingPublisher;
import io.rlscheduler.master.internal.LeaderElector;
import io.rlscheduler.master.internal.Reaper;
import io.rlscheduler.master.internal.SharingRepair;
import io.rlscheduler.master.internal.RpcServer;
import io.rlscheduler.master.internal.MasterContext;
import io.rlscheduler.master.internal.OpenAttemptIndex;
import io.rlscheduler.master.internal.WorkerLimits;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.master.internal.TaskWatcher;
import io.rlscheduler.master.internal.WorkerRegistry;
import io.rlscheduler.master.internal.auth.WorkerAuthentication;
import io.rlscheduler.protocol.CancelReason;
import io.rlscheduler.protocol.CancelTask;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.ServerTlsOptions;
import io.rlscheduler.store.ArtifactStore;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's master: accepts training tasks, queues them in Redis, dispatches each to a
 * connected worker with room for it, and serves their logs and results.
 *
 * <pre>{@code
 * SchedulerMaster master = SchedulerMaster.builder()
 *     .redis(RedisURI.create("redis://localhost:6379")).rpcPort(9000).secret(secret).build();
 * master.start();
 * TaskHandle run = master.submit(TaskSpec.python("train.py").param("lr", 0.1).gpus(1).build());
 * TaskResult result = run.result().get();
 * master.close();
 * }</pre>
 *
 * <p>Inside: a Netty server (one boss thread, {@code ioThreads} event loops, native epoll where
 * available) where workers authenticate with the shared secret; a registry of connected workers;
 * an event-driven dispatcher; a reaper taking back expired leases; a watcher of the lease core's
 * event stream; and an asynchronous log manager writing {@code <logDirectory>/<taskId>.log}. No
 * event loop ever waits on Redis or the disk. Each run's log, once ended, is copied into the
 * artifact store ({@link MasterOptions#getArtifactStore()}), from where any master serves it.
 *
 * <p>All task state lives in Redis, so several masters may share one Redis namespace: any of them
 * accepts submissions and queries; the one holding the leadership lease dispatches and reaps. A
 * master built with {@link Builder#standbyOnly(boolean)} never seeks that lease: an "API-only"
 * master, e.g. embedded in a lab portal, that submits and queries while dedicated masters lead. Lifecycle as {@link java.util.concurrent.ExecutorService}:
 * {@link #start()}, {@link #shutdown()}, {@link #awaitTermination(Duration)}, {@link #close()}.
 * Thread-safe. The methods that return plain values block the calling thread while Redis answers
 * (bounded by {@link Builder#apiTimeout(Duration)}); do not call them from an event loop.
 */
public final class SchedulerMaster implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SchedulerMaster.class);

    private final MasterOptions options;
    private final byte[] secret;
    private final RedisClient client;
    /** The client the master made itself (on the JVM's shared Lettuce threads); null for a user's client. */
    private final SharedClientResources.OwnedClient ownClient;
    private final String masterId;
    private final Lifecycle lifecycle;
    private final WorkerRegistry registry = new WorkerRegistry();
    /** The host application's store, or null for the one the options name. */
    private final ArtifactStore hostStore;
    private MasterStore store;
    private LeaseCore core;
    private TaskLogManager logs;
    private Dispatcher dispatcher;
    private TaskWatcher watcher;
    private LeaderElector elector;
    private Reaper reaper;
    private RpcServer rpc;
    private MasterHealth health;
    private TaskQueries queries;
    private ScheduledExecutorService timers;
    private WorkerAuthentication auth;
    private WorkerKeys workerKeys;
    private ApiTokens apiTokens;
    private Sharing sharing;

    private SchedulerMaster(Builder b, MasterOptions options) {
        this.options = options;
        this.secret = b.secret.clone();
        this.ownClient = b.client == null ? SharedClientResources.newClient(b.redisUri) : null;
        this.client = ownClient != null ? ownClient.client() : b.client;
        this.masterId = options.getMasterId() != null ? options.getMasterId() : defaultMasterId();
        this.lifecycle = new Lifecycle("master " + masterId);
        this.hostStore = b.store;
    }

    /** Returns a new builder. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the master: opens its artifact store and publishes where it is, connects to Redis,
     * binds the RPC port, starts the dispatcher, the reaper and the event watcher. Blocks until
     * the port is bound.
     *
     * @return this master
     * @throws IllegalStateException if already started
     * @throws SchedulerException    if the artifact store cannot be opened, or Redis or the port
     *                               cannot be reached (the master is then shut down)
     */
    public synchronized SchedulerMaster start() {
        lifecycle.start();
        try {
            CoreOptions coreOptions = options.getCoreOptions();
            store = MasterStore.open(options, hostStore, masterId);
            core = LeaseCore.create(client, coreOptions);
            store.publish(core.artifacts(), this::await, masterId);
            // An attempt's missing last lines are waited for as long as a worker cut off from the
            // masters keeps running its task: twice the task lease.
            WorkerLimits workerLimits = new WorkerLimits(options.getWorkerInboundRate(), options.getWorkerInboundBurst(),
                    options.getMaxOpenAttemptsPerWorker(), options.getOpenAttemptTimeout(), options.getWorkerIdleTimeout());
            OpenAttemptIndex openAttempts = new OpenAttemptIndex(workerLimits);
            AttemptHolders holders = new AttemptHolders(core.holders()::of);
            logs = new TaskLogManager(options.getLogDirectory(), TaskLogManager.Limits.defaults()
                    .withLinePatience(coreOptions.getTaskLease().multipliedBy(2))
                    .withMaxLogBytes(options.getMaxLogBytesPerTask()), new TaskRecordLookup(core), store.get(),
                    this::isLeader, new TaskLogEvents(openAttempts, holders, core.artifacts()));
            elector = new LeaderElector(core, masterId, options.getLeaderLease(), options.isStandbyOnly(),
                    new LeaderElector.Listener() {
                        @Override
                        public void becameLeader(LeaderStatus status) {
                            dispatcher.taskQueued();
                        }

                        @Override
                        public void stoppedLeading() {
                            closeWorkerConnections();
                        }
                    });
            HolderStats holderStats = new HolderStats();
            dispatcher = new Dispatcher(core, elector::current, registry, logs::openAll, options.getDispatchBatch(), holders);
            watcher = new TaskWatcher(core, dispatcher, logs, elector::isLeader);
            watcher.addListener(event -> {
                if (event.getTo() != null && event.getTo().isTerminal()) {
                    holders.ended(event.getTaskId());
                }
            });
            watcher.start();
            auth = new WorkerAuthentication(core.workerKeys()::helloRecord, options.isWorkerKeysRequired(), registry,
                    options.getHandshakeTimeout());
            watcher.addListener(auth.revocations());
            workerKeys = new MasterWorkerKeys(core.workerKeys(), this::await);
            apiTokens = new MasterApiTokens(core.apiTokens(), this::await);
            MasterContext context = new MasterContext(masterId, secret, coreOptions, registry, dispatcher, logs,
                    options.getHandshakeTimeout().toMillis(), elector::current, holders, holderStats, workerLimits,
                    openAttempts, auth, core::renewIdle);
            rpc = RpcServer.bind(options.getTransport(), options.getIoThreads(), options.getProtocolOptions(),
                    options.getTls().orElse(null), context, options.getBindHost(), options.getRpcPort());
            timers = Executors.newScheduledThreadPool(1, r -> {
                Thread t = new Thread(r, "rls-master-timers");
                t.setDaemon(true);
                return t;
            });
            reaper = new Reaper(core, elector::current, dispatcher, timers);
            SharingRepair repair = new SharingRepair(core.owners(), elector::current, dispatcher::taskQueued);
            sharing = new MasterSharing(core.owners(), repair, this::await);
            health = new MasterHealth(masterId, core, registry, rpc, elector, dispatcher, reaper, watcher, logs, holderStats,
                    holders, workerLimits, auth.refusals(), repair);
            timers.scheduleWithFixedDelay(holders::sweep, 1, 1, TimeUnit.MINUTES);
            queries = new TaskQueries(core, registry, elector, this::await, store.get());
            elector.advertise(rpc.advertisedAddress(options.getAdvertisedHost()));
            elector.elect();
            long renew = elector.periodMillis();
            timers.scheduleWithFixedDelay(elector::elect, renew, renew, TimeUnit.MILLISECONDS);
            long reap = options.getReapInterval().toMillis();
            timers.scheduleWithFixedDelay(reaper::reapOnce, reap, reap, TimeUnit.MILLISECONDS);
            long backstop = options.getDispatchInterval().toMillis();
            timers.scheduleWithFixedDelay(dispatcher::backstop, backstop, backstop, TimeUnit.MILLISECONDS);
            long repairEvery = options.getSharingRepairInterval().toMillis();
            timers.scheduleWithFixedDelay(repair::runOnce, repairEvery, repairEvery, TimeUnit.MILLISECONDS);
            long readingsEvery = options.getGpuReadingInterval().toMillis();
            GpuReadingPublisher readings = new GpuReadingPublisher(core.gpuReadings(), registry, elector::isLeader,
                    options.getGpuReadingInterval());
            timers.scheduleWithFixedDelay(readings::publishOnce, readingsEvery, readingsEvery, TimeUnit.MILLISECONDS);
            log.info("master {} listening on {} ({}, {}), namespace {}", masterId, rpc.localAddress(), rpc.transportName(),
                    options.getTls().map(t -> "TLS, client certificates " + t.getClientAuth()).orElse("plaintext"),
                    coreOptions.getNamespace());
            dispatcher.trigger();
            return this;
        } catch (RuntimeException e) {
            shutdown();
            throw e instanceof SchedulerException ? e : new SchedulerException("master " + masterId + " failed to start: " + e, true, e);
        }
    }

    private void closeWorkerConnections() {
        // Workers reconnect, and a standby sends them on to the leader.
        for (ConnectedWorker w : registry.snapshot()) {
            w.getChannel().close();
        }
    }

    /** Returns whether this master holds the leadership lease (as of its last renewal). */
    public boolean isLeader() {
        LeaderElector e = elector;
        return e != null && e.isLeader();
    }

    /** Returns the settings this master was built with. */
    public MasterOptions getOptions() {
        return options;
    }

    /** Returns the master's id. */
    public String getMasterId() {
        return masterId;
    }

    /** Returns the address the RPC server is bound to (with the actual port when 0 was configured). */
    public InetSocketAddress getRpcAddress() {
        requireRunning();
        return rpc.localAddress();
    }

    /**
     * Submits a task; returns once Redis has it. Idempotent by task id: submitting again the spec
     * of an existing task (the same in everything but its trace id) returns a handle to that task,
     * unchanged, whether it is still queued, running or ended; so a submission whose answer was
     * lost may be repeated. A different spec under an existing id is refused.
     *
     * @param spec the task
     * @return its handle
     * @throws TaskIdConflictException if a task with the spec's id exists with a different spec
     *                                 (parameters, script, resources, limits); nothing is changed
     */
    public TaskHandle submit(TaskSpec spec) {
        return await(submitAsync(spec));
    }

    /** Submits a task without blocking; see {@link #submit(TaskSpec)}. */
    public CompletableFuture<TaskHandle> submitAsync(TaskSpec spec) {
        requireRunning();
        Objects.requireNonNull(spec, "spec");
        return dispatcher.submit(spec.toDefinition()).thenApply(result -> handleOf(spec, result));
    }

    /** The handle of a submission's task; for an id that existed, only if it is the same task. */
    private TaskHandle handleOf(TaskSpec spec, SubmitResult result) {
        if (!result.isCreated()) {
            String difference = spec.differenceFrom(result.getTask());
            if (difference != null) {
                throw new TaskIdConflictException(spec.getTaskId(), difference);
            }
        }
        return new TaskHandle(this, result.getTask().getTaskId());
    }

    /**
     * Returns a handle to an existing task.
     *
     * @param taskId the task id
     * @return the handle (the task's existence is checked when the handle is used)
     */
    public TaskHandle task(String taskId) {
        return new TaskHandle(this, TaskIds.require(taskId, "task id"));
    }

    /**
     * Returns a task's record, or empty if it does not exist.
     *
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id (null included)
     */
    public Optional<TaskRecord> getTask(String taskId) {
        requireRunning();
        return await(core.getTask(TaskIds.require(taskId, "task id")));
    }

    /** Lists tasks in a state, in submission order; limit 1 to 1000. */
    public TaskPage listTasks(TaskState state, int offset, int limit) {
        requireRunning();
        return await(core.listTasks(state, offset, limit));
    }

    /** Lists an owner's tasks, in submission order; limit 1 to 1000. */
    public TaskPage listTasksByOwner(String owner, int offset, int limit) {
        requireRunning();
        return await(core.listTasksByOwner(owner, offset, limit));
    }

    /**
     * Puts runs side by side: each task's script, parameters as submitted, state and final
     * metrics, with the parameters that differ between them picked out (see {@link RunComparison};
     * {@link RunComparison#toTable()} prints it). Tasks still queued or running are included as
     * they are, without final metrics.
     *
     * @param taskIds the tasks, in the order wanted; 1 to {@value RunComparison#MAX_RUNS}, each once
     * @throws IllegalArgumentException if there are none or too many, an id is not valid, or one is given twice
     * @throws TaskNotFoundException    if a task does not exist (the first such, in order)
     */
    public RunComparison compare(java.util.Collection<String> taskIds) {
        requireRunning();
        return queries.compare(taskIds);
    }

    /** The same as {@link #compare(java.util.Collection)}, for ids given one by one. */
    public RunComparison compare(String... taskIds) {
        return compare(java.util.Arrays.asList(Objects.requireNonNull(taskIds, "taskIds")));
    }

    /** Returns every registered worker with its state derived by the Redis clock. */
    public List<WorkerInfo> listWorkers() {
        requireRunning();
        return await(core.listWorkers());
    }

    /**
     * Returns the GPU readings (memory, utilisation, name) of the workers connected to the leader,
     * by worker id, as the leader last published them to Redis, at most
     * {@link MasterOptions#getGpuReadingInterval() gpuReadingInterval} after their heartbeats. Every
     * master answers, a standby included. A worker whose machine has no nvidia-smi, or that is not
     * connected, has no entry; readings go when the leader stops publishing them.
     */
    public Map<String, List<WorkerUsage.Gpu>> gpuReadings() {
        requireRunning();
        return GpuReadings.decode(await(core.gpuReadings().read()));
    }

    /**
     * Says why a task is still waiting in the queue (see {@link PendingReason}).
     *
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     * @throws TaskNotFoundException    if the task does not exist
     */
    public PendingReason whyPending(String taskId) {
        requireRunning();
        return queries.whyPending(taskId);
    }

    /** Returns how many tasks wait in the queue, parked ones included (see {@link HealthSnapshot#getParkedTasks()}). */
    public long queueDepth() {
        requireRunning();
        return await(core.queueDepth());
    }

    /**
     * Forgets a worker that is gone for good (a retired or scaled-away machine): it no longer
     * shows in {@link #listWorkers()} and {@link #health()}, and tasks that only it could have run
     * are parked by the next claim that meets them, instead of holding back the queue. Only a
     * worker whose liveness lease has run out and that holds no task is removed; otherwise the
     * answer says what stands in the way (it is live, or it holds tasks that the reaper takes back
     * when their leases run out) and nothing changes. Should its process come back after all, it
     * registers again on its next heartbeat. Safe to repeat.
     *
     * @throws IllegalArgumentException if {@code workerId} is not a valid worker id
     */
    public WorkerRemoval removeWorker(String workerId) {
        requireRunning();
        WorkerRemoval removal = await(core.removeWorker(workerId)); // checks the id before anything is sent
        if (removal.isRemoved()) {
            log.info("{}", removal);
        }
        return removal;
    }

    /**
     * Adds a listener of task and worker events (every transition made by any master, worker or
     * reaper of this namespace while the listener is registered, and the notices described at
     * {@link TaskEvent#getKind()}). Called on the event thread;
     * must not block: a listener that holds the thread for long enough makes the master fall
     * behind the trimmed stream, and it then gets a {@link TaskEvent.Kind#GAP} event for the events
     * lost (so does the master, which re-reads the tasks it waits on).
     */
    public void addTaskListener(Consumer<TaskEvent> listener) {
        requireRunning();
        watcher.addListener(Objects.requireNonNull(listener, "listener"));
    }

    /** Removes a listener added with {@link #addTaskListener}. */
    public void removeTaskListener(Consumer<TaskEvent> listener) {
        requireRunning();
        watcher.removeListener(listener);
    }

    /**
     * Returns the HTTP API's bearer tokens: make one per user, revoke, list (see {@link ApiTokens}).
     *
     * @throws IllegalStateException if the master is not running
     */
    public ApiTokens apiTokens() {
        requireRunning();
        return apiTokens;
    }

    /**
     * Submits a sweep: records it in Redis under its id (given, or {@code sw-} and 10 hex digits),
     * then submits its runs, each with the task id {@code <sweep id>-<index>}. Submitting a sweep of
     * a given id again is safe: the same sweep gets the existing one and its runs that are missing
     * are submitted (those that exist are left as they are); a different one fails with
     * {@link TaskIdConflictException}. Its runs count against the owner's limits like any others:
     * a run refused by them fails the call with {@link io.rlscheduler.core.OwnerLimitExceededException}
     * after the runs before it were submitted (submit the sweep again later to add the rest).
     *
     * @return the sweep as recorded
     */
    public Sweep submitSweep(SweepSpec spec) {
        requireRunning();
        Objects.requireNonNull(spec, "spec");
        String id = spec.getSweepId() != null ? spec.getSweepId() : "sw-" + TaskIds.random().replace("-", "").substring(0, 10);
        Sweep sweep = Sweep.of(id, spec, System.currentTimeMillis());
        List<TaskSpec> runs = spec.runs(id); // checks every run's spec before anything is written
        var created = await(core.sweeps().create(id, sweep.getOwner(), sweep.toJson(), sweep.getCreatedAtMillis(), sweep.getRunIds()));
        if (created.takenRunId() != null) {
            throw new TaskIdConflictException(created.takenRunId(), "run id " + created.takenRunId() + " of sweep " + id
                    + " is already a task outside it; choose another sweep id");
        }
        if (!created.created()) {
            Sweep existing = Sweep.fromJson(created.existingJson());
            String difference = sweep.differenceFrom(existing);
            if (difference != null) {
                throw new TaskIdConflictException(id, "sweep " + id + " exists and differs: " + difference);
            }
            sweep = existing;
        }
        List<CompletableFuture<TaskHandle>> submitted = new java.util.ArrayList<>(runs.size());
        for (TaskSpec run : runs) {
            submitted.add(submitAsync(run));
        }
        for (CompletableFuture<TaskHandle> run : submitted) {
            await(run);
        }
        log.info("sweep {} submitted: {} runs of {} for {}", id, runs.size(), sweep.getScript(), sweep.getOwner());
        return sweep;
    }

    /** Returns a sweep by its id, if it exists. */
    public Optional<Sweep> sweep(String sweepId) {
        requireRunning();
        return await(core.sweeps().get(TaskIds.require(sweepId, "sweep id"))).map(Sweep::fromJson);
    }

    /**
     * Lists sweeps newest first: all, or one owner's.
     *
     * @param owner  the owner, or null for all
     * @param offset sweeps to skip, at least 0
     * @param limit  the page size, 1 to 1000
     */
    public Sweep.Page listSweeps(String owner, int offset, int limit) {
        requireRunning();
        var page = await(core.sweeps().list(owner, offset, limit));
        return new Sweep.Page(page.records().stream().map(Sweep::fromJson).toList(), page.total());
    }

    /** Returns the sweep each of {@code taskIds} belongs to, for those that belong to one. */
    public Map<String, String> sweepsOf(List<String> taskIds) {
        requireRunning();
        return await(core.sweeps().sweepsOf(taskIds));
    }

    /** Returns the records of {@code taskIds} (at most 1000) that exist, in the order given. */
    public List<TaskRecord> getTasks(List<String> taskIds) {
        requireRunning();
        taskIds.forEach(id -> TaskIds.require(id, "task id"));
        return await(core.getTasks(taskIds));
    }

    /**
     * Lists tasks newest first: those in {@code state}, an {@code owner}'s, or all (both null).
     * Queued tasks are listed in queue order, the next to run first. The listing of all tasks places
     * the first 1000 queued tasks among the others; those further back in the queue are counted in
     * the total but not listed there (list them with {@code state} QUEUED).
     *
     * @param offset tasks to skip, at least 0
     * @param limit  the page size, 1 to 1000
     */
    public TaskPage listTasksNewest(TaskState state, String owner, int offset, int limit) {
        requireRunning();
        return await(core.listTasksNewest(state, owner, offset, limit));
    }

    /**
     * Reads the task's log as this master has it now (its log file, or the artifact store's copy of
     * an ended log this master has no file of): see {@link LogFiles#read(Path, String, ArtifactStore)}.
     * For a live log, follow it ({@link TaskHandle#followLogs}).
     *
     * @throws io.rlscheduler.store.StoreUnavailableException if the log is only in the store and it cannot be read
     */
    public List<LogRecord> readLog(String taskId) {
        List<LogRecord> records = new java.util.ArrayList<>();
        scanLog(taskId, records::add);
        return records;
    }

    /**
     * Reads the task's log as {@link #readLog} does, handing each record to {@code visitor} in order
     * until it returns false: a page of a long log without holding all of it. A task that printed
     * nothing yet has no log: the visitor gets nothing.
     *
     * @throws io.rlscheduler.store.StoreUnavailableException if the log is only in the store and it cannot be read
     */
    public void scanLog(String taskId, java.util.function.Predicate<LogRecord> visitor) {
        requireRunning();
        try {
            LogFiles.scan(options.getLogDirectory(), TaskIds.require(taskId, "task id"), store.get(), visitor);
        } catch (java.nio.file.NoSuchFileException e) {
            return; // no line yet
        } catch (java.io.IOException e) {
            log.warn("could not read the log of task {}: {}", taskId, e.toString());
            throw new SchedulerException("could not read the log of task " + taskId, true, e);
        }
    }

    /**
     * Returns the worker keys of this namespace: issue, rotate and revoke one credential per
     * worker machine, and list them (see {@link WorkerKeys}).
     */
    public WorkerKeys workerKeys() {
        requireRunning();
        return workerKeys;
    }

    /**
     * Returns how the lab's GPUs are shared between owners: their limits and weights, the half-life
     * of usage, and every owner's share now (see {@link Sharing}).
     */
    public Sharing sharing() {
        requireRunning();
        return sharing;
    }

    /** Returns a health snapshot: workers by state, queue depth, running tasks, event-loop, dispatcher, event-stream and log figures. */
    public HealthSnapshot health() {
        requireRunning();
        return health.read(this::await);
    }

    CancelResult cancel(String taskId) {
        requireRunning();
        CancelResult result = await(core.cancel(taskId, "cancelled through the API of master " + masterId));
        if (result.getStatus() == CancelStatus.CANCEL_REQUESTED) {
            ConnectedWorker worker = registry.get(result.getWorkerId());
            if (worker != null) {
                worker.getChannel().writeAndFlush(CancelTask.newBuilder().setTaskId(taskId).setEpoch(result.getEpoch())
                        .setReason(CancelReason.CANCEL_REASON_USER).setMessage("cancelled").build());
            }
            // Otherwise the worker learns it from its next heartbeat in Redis.
        }
        return result;
    }

    TaskWatcher watcher() {
        requireRunning();
        return watcher;
    }

    /** The provenance of a task's attempts (see {@link TaskHandle#provenance()}). */
    /** A result: the ended record and, read from Redis without blocking, its latest checkpoint and outputs records. */
    CompletableFuture<TaskResult> resultOf(TaskRecord record) {
        String id = record.getTaskId();
        return core.artifacts().committed(id).thenCombine(core.artifacts().outputs(id), (committed, outputs) ->
                new TaskResult(record, committed.isEmpty() ? null : committed.get(0).id(), outputs));
    }

    RunArtifacts artifacts(String taskId) {
        requireRunning();
        return queries.artifacts(taskId);
    }

    List<AttemptProvenance> provenance(String taskId) {
        requireRunning();
        return queries.provenance(taskId);
    }

    /** Follows a task's log (see {@link TaskHandle#followLogs}); a log whose task ended unseen by this master is ended. */
    LogFollow followLogs(String taskId, Consumer<LogRecord> consumer) {
        requireRunning();
        LogFollow follow = logs.follow(taskId, consumer);
        watcher.followed(taskId);
        return follow;
    }

    private <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(options.getApiTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchedulerException("interrupted while waiting for Redis", true, e);
        } catch (TimeoutException e) {
            throw new SchedulerTimeoutException("Redis did not answer within " + options.getApiTimeout(), options.getApiTimeout(), e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                    ? e.getCause().getCause() : e.getCause();
            if (cause instanceof RuntimeException re && (cause instanceof SchedulerException || cause instanceof IllegalArgumentException)) {
                throw re;
            }
            throw new SchedulerException("request to Redis failed: " + cause, true, cause);
        }
    }

    private void requireRunning() {
        lifecycle.requireRunning();
    }

    /**
     * Begins an orderly stop: no new connections or dispatches, the reaper and watcher stop, the
     * leadership lease is given up, worker connections close (workers keep running their tasks
     * and reconnect to another master), logs are flushed. Idempotent; returns without waiting
     * (see {@link #awaitTermination}).
     */
    public void shutdown() {
        Lifecycle.Stop stop = lifecycle.beginStop();
        if (stop == Lifecycle.Stop.BEGUN) {
            lifecycle.stopInBackground("rls-master-shutdown", this::stopAll);
        } else if (stop == Lifecycle.Stop.NEVER_STARTED && ownClient != null) {
            ownClient.close();
        }
    }

    /** As {@link #shutdown()}: a master runs no tasks itself, so there is nothing more to stop at once. */
    public void shutdownNow() {
        shutdown();
    }

    private void stopAll() {
        try {
            if (dispatcher != null) {
                dispatcher.stop();
            }
            if (timers != null) {
                timers.shutdownNow();
            }
            if (elector != null) {
                elector.resign();
            }
            if (rpc != null) {
                rpc.closeListener();
            }
            closeWorkerConnections();
            if (rpc != null) {
                rpc.shutdownEventLoops();
            }
            if (auth != null) {
                auth.close();
            }
            if (watcher != null) {
                watcher.close();
            }
            if (logs != null) {
                logs.close();
            }
            if (store != null) {
                store.close();
            }
            if (core != null) {
                core.close();
            }
        } finally {
            if (ownClient != null) {
                ownClient.close();
            }
            log.info("master {} stopped", masterId);
        }
    }

    /**
     * Waits until the master has stopped after {@link #shutdown()}.
     *
     * @return true if it stopped within the timeout
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return lifecycle.awaitTermination(timeout);
    }

    /** Returns whether a stop has begun ({@link #shutdown()} or {@link #close()} was called, or start failed). */
    public boolean isShutdown() {
        return lifecycle.isShutdown();
    }

    /** Returns whether the master has fully stopped. */
    public boolean isTerminated() {
        return lifecycle.isTerminated();
    }

    /**
     * Stops now ({@link #shutdownNow()}, the same as {@link #shutdown()} on a master) and waits up
     * to 15 s for the master to stop. On a master and on a worker alike, {@code close()} stops at
     * once rather than draining: a worker's attempts are stopped and re-queued by the reaper.
     */
    @Override
    public void close() {
        shutdownNow();
        lifecycle.awaitQuietly(Duration.ofSeconds(15));
    }

    private static String defaultMasterId() {
        String name = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
        String id = "master-" + name.replaceAll("[^A-Za-z0-9._-]", "-");
        return id.length() > 128 ? id.substring(0, 128) : id;
    }

    /**
     * Builds a {@link SchedulerMaster}: its Redis connection and secret, and its
     * {@link MasterOptions} (set whole with {@link #options} or one by one with the setters here,
     * which validate at once). Each {@link #build()} takes a copy: a setter called afterwards
     * changes no master already built. Not thread-safe.
     */
    public static final class Builder {
        private RedisURI redisUri;
        private RedisClient client;
        private byte[] secret;
        private ArtifactStore store;
        private MasterOptions.Builder options = MasterOptions.builder();

        private Builder() {
        }

        /** Sets the Redis server (the master creates and owns its client). */
        public Builder redis(RedisURI uri) {
            this.redisUri = Objects.requireNonNull(uri, "uri");
            this.client = null;
            return this;
        }

        /** Uses an existing Lettuce client (shared, not shut down by the master). */
        public Builder redisClient(RedisClient client) {
            this.client = Objects.requireNonNull(client, "client");
            this.redisUri = null;
            return this;
        }

        /** Sets the shared secret workers must prove they know; at least 16 bytes. Required. */
        public Builder secret(byte[] secret) {
            this.secret = HandshakeProof.requireValidSecret(secret).clone();
            return this;
        }

        /** Sets the shared secret from a string (its UTF-8 bytes); at least 16 bytes. */
        public Builder secret(String secret) {
            return secret(Objects.requireNonNull(secret, "secret").getBytes(StandardCharsets.UTF_8));
        }

        /** Sets every option at once, replacing what the setters below set before. */
        public Builder options(MasterOptions options) {
            this.options = Objects.requireNonNull(options, "options").mutate();
            return this;
        }

        /** See {@link MasterOptions.Builder#bindHost}. */
        public Builder bindHost(String host) {
            options.bindHost(host);
            return this;
        }

        /** See {@link MasterOptions.Builder#rpcPort}. */
        public Builder rpcPort(int port) {
            options.rpcPort(port);
            return this;
        }

        /** See {@link MasterOptions.Builder#masterId}. */
        public Builder masterId(String id) {
            options.masterId(id);
            return this;
        }

        /** See {@link MasterOptions.Builder#coreOptions}. */
        public Builder coreOptions(CoreOptions coreOptions) {
            options.coreOptions(coreOptions);
            return this;
        }

        /** See {@link MasterOptions.Builder#logDirectory}. */
        public Builder logDirectory(Path dir) {
            options.logDirectory(dir);
            return this;
        }

        /** See {@link MasterOptions.Builder#artifactStore}. */
        public Builder artifactStore(String uri) {
            options.artifactStore(uri);
            return this;
        }

        /** See {@link MasterOptions.Builder#artifactStoreSettings}. */
        public Builder artifactStoreSettings(Map<String, String> settings) {
            options.artifactStoreSettings(settings);
            return this;
        }

        /**
         * Uses the host application's artifact store instead of opening the one the options name:
         * the master publishes its URI and uses it from its own threads, and never closes it (the
         * host does, after the master stopped).
         */
        public Builder artifactStore(ArtifactStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** See {@link MasterOptions.Builder#ioThreads}. */
        public Builder ioThreads(int threads) {
            options.ioThreads(threads);
            return this;
        }

        /** See {@link MasterOptions.Builder#dispatchBatch}. */
        public Builder dispatchBatch(int batch) {
            options.dispatchBatch(batch);
            return this;
        }

        /** See {@link MasterOptions.Builder#sharingRepairInterval}. */
        public Builder sharingRepairInterval(Duration interval) {
            options.sharingRepairInterval(interval);
            return this;
        }

        /** See {@link MasterOptions.Builder#gpuReadingInterval}. */
        public Builder gpuReadingInterval(Duration interval) {
            options.gpuReadingInterval(interval);
            return this;
        }

        /** See {@link MasterOptions.Builder#reapInterval}. */
        public Builder reapInterval(Duration interval) {
            options.reapInterval(interval);
            return this;
        }

        /** See {@link MasterOptions.Builder#dispatchInterval}. */
        public Builder dispatchInterval(Duration interval) {
            options.dispatchInterval(interval);
            return this;
        }

        /** See {@link MasterOptions.Builder#handshakeTimeout}. */
        public Builder handshakeTimeout(Duration timeout) {
            options.handshakeTimeout(timeout);
            return this;
        }

        /** See {@link MasterOptions.Builder#leaderLease}. */
        public Builder leaderLease(Duration lease) {
            options.leaderLease(lease);
            return this;
        }

        /** See {@link MasterOptions.Builder#standbyOnly}. */
        public Builder standbyOnly(boolean standbyOnly) {
            options.standbyOnly(standbyOnly);
            return this;
        }

        /** See {@link MasterOptions.Builder#advertisedHost}. */
        public Builder advertisedHost(String host) {
            options.advertisedHost(host);
            return this;
        }

        /** See {@link MasterOptions.Builder#apiTimeout}. */
        public Builder apiTimeout(Duration timeout) {
            options.apiTimeout(timeout);
            return this;
        }

        /** See {@link MasterOptions.Builder#protocolOptions}. */
        public Builder protocolOptions(ProtocolOptions protocolOptions) {
            options.protocolOptions(protocolOptions);
            return this;
        }

        /** See {@link MasterOptions.Builder#transport}. */
        public Builder transport(NettyTransport transport) {
            options.transport(transport);
            return this;
        }

        /** See {@link MasterOptions.Builder#workerInboundRate}. */
        public Builder workerInboundRate(long bytesPerSecond) {
            options.workerInboundRate(bytesPerSecond);
            return this;
        }

        /** See {@link MasterOptions.Builder#workerInboundBurst}. */
        public Builder workerInboundBurst(long bytes) {
            options.workerInboundBurst(bytes);
            return this;
        }

        /** See {@link MasterOptions.Builder#maxOpenAttemptsPerWorker}. */
        public Builder maxOpenAttemptsPerWorker(int attempts) {
            options.maxOpenAttemptsPerWorker(attempts);
            return this;
        }

        /** See {@link MasterOptions.Builder#openAttemptTimeout}. */
        public Builder openAttemptTimeout(Duration timeout) {
            options.openAttemptTimeout(timeout);
            return this;
        }

        /** See {@link MasterOptions.Builder#maxLogBytesPerTask}. */
        public Builder maxLogBytesPerTask(long bytes) {
            options.maxLogBytesPerTask(bytes);
            return this;
        }

        /** See {@link MasterOptions.Builder#workerIdleTimeout}. */
        public Builder workerIdleTimeout(Duration timeout) {
            options.workerIdleTimeout(timeout);
            return this;
        }

        /** See {@link MasterOptions.Builder#workerKeysRequired}. */
        public Builder workerKeysRequired(boolean required) {
            options.workerKeysRequired(required);
            return this;
        }

        /** See {@link MasterOptions.Builder#tls}. */
        public Builder tls(ServerTlsOptions tls) {
            options.tls(tls);
            return this;
        }

        /**
         * Returns the master (not started).
         *
         * @throws IllegalStateException if no Redis server or no secret was set
         */
        public SchedulerMaster build() {
            if (redisUri == null && client == null) {
                throw new IllegalStateException("a Redis server is required: call redis(RedisURI) or redisClient(RedisClient)");
            }
            if (secret == null) {
                throw new IllegalStateException("a shared secret is required: call secret(...)");
            }
            return new SchedulerMaster(this, options.build());
        }
    }
}
