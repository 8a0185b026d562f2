package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.rlscheduler.core.CancelResult;
import io.rlscheduler.core.CancelStatus;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.LeaderStatus;
import io.rlscheduler.core.LeaseCore;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.SharedClientResources;
import io.rlscheduler.core.SubmitAndClaimResult;
import io.rlscheduler.core.SubmitResult;
import io.rlscheduler.core.TaskIdConflictException;
import io.rlscheduler.core.TaskDefinition;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerRemoval;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.master.internal.ConnectedWorker;
import io.rlscheduler.master.internal.Dispatcher;
import io.rlscheduler.master.internal.MasterContext;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.master.internal.TaskWatcher;
import io.rlscheduler.master.internal.WorkerChannelHandler;
import io.rlscheduler.master.internal.WorkerRegistry;
import io.rlscheduler.protocol.CancelReason;
import io.rlscheduler.protocol.CancelTask;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
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
 * event loop ever waits on Redis or the disk.
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

    /** Default RPC port. */
    public static final int DEFAULT_RPC_PORT = 9000;
    /** Default log directory, relative to the working directory. */
    public static final Path DEFAULT_LOG_DIRECTORY = Path.of("logs");
    /** Default assignments per worker per dispatch round. */
    public static final int DEFAULT_DISPATCH_BATCH = 16;
    /**
     * Default period of the reaper: 500 ms, so that a dead worker's task runs again within its
     * task lease plus about half a second (a pass with nothing due is one cheap script run).
     */
    public static final Duration DEFAULT_REAP_INTERVAL = Duration.ofMillis(500);
    /** Default period of the backstop dispatch round (dispatch is event-driven; this only catches up). */
    public static final Duration DEFAULT_DISPATCH_INTERVAL = Duration.ofSeconds(1);
    /** Default time a new connection has to authenticate. */
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /** Default bound of the blocking API methods. */
    public static final Duration DEFAULT_API_TIMEOUT = Duration.ofSeconds(30);
    /** Default length of the leadership lease; the leader renews it every third of it. */
    public static final Duration DEFAULT_LEADER_LEASE = Duration.ofSeconds(10);

    private enum State { NEW, RUNNING, SHUTDOWN, TERMINATED }

    private final Builder config;
    private final RedisClient client;
    /** The client the master made itself (on the JVM's shared Lettuce threads); null for a user's client. */
    private final SharedClientResources.OwnedClient ownClient;
    private final String masterId;
    private final WorkerRegistry registry = new WorkerRegistry();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicLong reaperPasses = new AtomicLong();
    private final AtomicLong reaperFailures = new AtomicLong();
    private volatile LeaderStatus leadership;
    private volatile long leadershipRenewedNanos;
    private String advertisedAddress;
    private State state = State.NEW;
    private LeaseCore core;
    private TaskLogManager logs;
    private Dispatcher dispatcher;
    private TaskWatcher watcher;
    private EventLoopGroup boss;
    private EventLoopGroup io;
    private Channel serverChannel;
    private ScheduledExecutorService timers;
    private NettyTransport transport;

    private SchedulerMaster(Builder b) {
        this.config = b;
        this.ownClient = b.client == null ? SharedClientResources.newClient(b.redisUri) : null;
        this.client = ownClient != null ? ownClient.client() : b.client;
        this.masterId = b.masterId != null ? b.masterId : defaultMasterId();
    }

    /** Returns a new builder. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the master: connects to Redis, binds the RPC port, starts the dispatcher, the reaper
     * and the event watcher. Blocks until the port is bound.
     *
     * @return this master
     * @throws IllegalStateException if already started
     * @throws SchedulerException    if Redis or the port cannot be reached (the master is then shut down)
     */
    public synchronized SchedulerMaster start() {
        if (state != State.NEW) {
            throw new IllegalStateException("master " + masterId + " was already started");
        }
        state = State.RUNNING;
        try {
            CoreOptions options = config.coreOptions;
            core = LeaseCore.create(client, options);
            logs = new TaskLogManager(config.logDirectory, TaskLogManager.Limits.defaults(), this::lookUpForLogs);
            dispatcher = new Dispatcher(core, this::currentLeadership, registry,
                    logs::openAll, config.dispatchBatch);
            watcher = new TaskWatcher(core, dispatcher, logs);
            watcher.start();
            MasterContext context = new MasterContext(masterId, config.secret, options, registry, dispatcher, logs, watcher,
                    config.handshakeTimeout.toMillis(), this::currentLeadership);
            transport = config.transport;
            boss = transport.newGroup(1, "rls-master-boss");
            io = transport.newGroup(config.ioThreads, "rls-master-io");
            serverChannel = new ServerBootstrap()
                    .group(boss, io)
                    .channel(transport.serverChannel())
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ProtocolChannelInitializer(config.protocolOptions, () -> new WorkerChannelHandler(context)))
                    .bind(config.bindHost, config.rpcPort).syncUninterruptibly().channel();
            timers = Executors.newScheduledThreadPool(1, r -> {
                Thread t = new Thread(r, "rls-master-timers");
                t.setDaemon(true);
                return t;
            });
            InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
            advertisedAddress = config.advertisedHost != null
                    ? config.advertisedHost + ":" + bound.getPort()
                    : advertisedHost(bound) + ":" + bound.getPort();
            elect();
            long renew = Math.max(1, config.leaderLease.toMillis() / 3);
            timers.scheduleWithFixedDelay(this::elect, renew, renew, TimeUnit.MILLISECONDS);
            timers.scheduleWithFixedDelay(this::reapOnce, config.reapInterval.toMillis(), config.reapInterval.toMillis(),
                    TimeUnit.MILLISECONDS);
            timers.scheduleWithFixedDelay(dispatcher::backstop, config.dispatchInterval.toMillis(),
                    config.dispatchInterval.toMillis(), TimeUnit.MILLISECONDS);
            log.info("master {} listening on {} ({}), namespace {}", masterId, serverChannel.localAddress(), transport,
                    options.getNamespace());
            dispatcher.trigger();
            return this;
        } catch (RuntimeException e) {
            shutdown();
            throw e instanceof SchedulerException ? e : new SchedulerException("master " + masterId + " failed to start: " + e, true, e);
        }
    }

    /** Acquires or renews the leadership lease; on a change, adjusts what this master does. */
    private void elect() {
        LeaderStatus before = leadership;
        LeaderStatus now;
        long sent = System.nanoTime();
        try {
            CompletableFuture<LeaderStatus> call = config.standbyOnly ? core.observeLeadership()
                    : core.acquireLeadership(masterId, advertisedAddress, config.leaderLease);
            now = call.get(config.leaderLease.toMillis(), TimeUnit.MILLISECONDS);
            leadershipRenewedNanos = sent;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // Without a renewal for a whole lease this master can no longer be sure it leads.
            if (before != null && before.isSelf() && System.nanoTime() - leadershipRenewedNanos > config.leaderLease.toNanos()) {
                log.warn("master {} could not renew its leadership for {}: stepping down ({})", masterId,
                        config.leaderLease, e.toString());
                stepDown();
            } else {
                log.warn("leadership renewal of master {} failed: {}", masterId, e.toString());
            }
            return;
        }
        leadership = now;
        boolean was = before != null && before.isSelf();
        if (now.isSelf() && !was) {
            log.info("master {} is the leader (leadership epoch {})", masterId, now.getEpoch());
            // Whatever this master believed about the queue while it did not lead is stale.
            dispatcher.taskQueued();
        } else if (!now.isSelf() && was) {
            log.warn("master {} lost the leadership to {} (epoch {})", masterId, now.getLeaderId(), now.getEpoch());
            closeWorkerConnections();
        } else if (before == null && !now.isSelf()) {
            log.info("master {} is a {}; the leader is {} at {}", masterId, config.standbyOnly ? "standby-only master" : "standby",
                    now.getLeaderId().isEmpty() ? "(none)" : now.getLeaderId(), now.getAddress());
        }
    }

    private void stepDown() {
        leadership = null; // unknown until the next successful call; neither dispatch nor reap meanwhile
        closeWorkerConnections();
    }

    private void closeWorkerConnections() {
        // Workers reconnect, and a standby sends them on to the leader.
        for (ConnectedWorker w : registry.snapshot()) {
            w.getChannel().close();
        }
    }

    LeaderStatus currentLeadership() {
        return leadership;
    }

    /** Returns whether this master holds the leadership lease (as of its last renewal). */
    public boolean isLeader() {
        LeaderStatus l = leadership;
        return l != null && l.isSelf();
    }

    private static String advertisedHost(InetSocketAddress bound) {
        if (!bound.getAddress().isAnyLocalAddress()) {
            return bound.getAddress().getHostAddress();
        }
        try {
            return java.net.InetAddress.getLocalHost().getHostAddress();
        } catch (java.net.UnknownHostException e) {
            return "127.0.0.1";
        }
    }

    private void reapOnce() {
        LeaderStatus leader = leadership;
        if (leader == null || !leader.isSelf()) {
            return;
        }
        core.reap(leader).whenComplete((result, error) -> {
            reaperPasses.incrementAndGet();
            if (error != null) {
                reaperFailures.incrementAndGet();
                log.warn("reaper pass failed: {}", error.toString());
                return;
            }
            if (!result.getRequeued().isEmpty() || !result.getFailed().isEmpty() || !result.getCancelled().isEmpty()) {
                log.info("reaper took back tasks: requeued {}, failed {}, cancelled {}", result.getRequeued(),
                        result.getFailed(), result.getCancelled());
                dispatcher.taskQueued();
            }
            if (result.isMore() && timers != null && !timers.isShutdown()) {
                timers.execute(this::reapOnce);
            }
        });
    }

    /** Returns the master's id. */
    public String getMasterId() {
        return masterId;
    }

    /** Returns the address the RPC server is bound to (with the actual port when 0 was configured). */
    public InetSocketAddress getRpcAddress() {
        requireRunning();
        return (InetSocketAddress) serverChannel.localAddress();
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
        TaskDefinition task = spec.toDefinition();
        dispatcher.submitting(task.getTaskId());
        Dispatcher.SubmitClaim claim = dispatcher.claimOnSubmit();
        if (claim == null) {
            return core.submit(task).thenApply((SubmitResult r) -> {
                dispatcher.taskQueued();
                return handleOf(spec, r);
            });
        }
        // The leader, queue empty, workers connected: the submission's own script run also claims,
        // so the task is assigned one Redis round trip sooner than by the round a signal starts.
        // A call that failed in transit may have run: repeated once with the same request id, it
        // answers EXISTS and the first claim's answer, so no assignment is left undelivered.
        CompletableFuture<SubmitAndClaimResult> call;
        try {
            call = core.submitAndClaim(task, claim.sessions(), claim.batchSize(), claim.requestId(), claim.leader());
        } catch (RuntimeException invalid) {
            dispatcher.claimOnSubmitFailed(claim);
            throw invalid;
        }
        return call
                .exceptionallyCompose(e -> core.submitAndClaim(task, claim.sessions(), claim.batchSize(),
                        claim.requestId(), claim.leader()))
                .handle((SubmitAndClaimResult r, Throwable e) -> {
                    if (e != null) {
                        dispatcher.claimOnSubmitFailed(claim); // whatever it left in the queue, rounds take
                        throw e instanceof java.util.concurrent.CompletionException c ? c
                                : new java.util.concurrent.CompletionException(e);
                    }
                    dispatcher.claimedOnSubmit(claim, r.getClaims());
                    return handleOf(spec, r.getSubmit());
                });
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
        Objects.requireNonNull(taskIds, "taskIds");
        if (taskIds.isEmpty() || taskIds.size() > RunComparison.MAX_RUNS) {
            throw new IllegalArgumentException("compare takes 1 to " + RunComparison.MAX_RUNS + " task ids, not "
                    + taskIds.size());
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        List<CompletableFuture<Optional<TaskRecord>>> reads = new java.util.ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            TaskIds.require(id, "task id");
            if (!seen.add(id)) {
                throw new IllegalArgumentException("task id " + id + " is given twice");
            }
        }
        for (String id : taskIds) {
            reads.add(core.getTask(id));
        }
        List<TaskRecord> records = new java.util.ArrayList<>(taskIds.size());
        java.util.Iterator<String> ids = taskIds.iterator();
        for (CompletableFuture<Optional<TaskRecord>> read : reads) {
            String id = ids.next();
            records.add(await(read).orElseThrow(() -> new TaskNotFoundException(id)));
        }
        return RunComparison.of(records);
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
     * Says why a task is still waiting in the queue (see {@link PendingReason}).
     *
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     * @throws TaskNotFoundException    if the task does not exist
     */
    public PendingReason whyPending(String taskId) {
        requireRunning();
        TaskIds.require(taskId, "task id");
        CompletableFuture<List<WorkerInfo>> workers = core.listWorkers();
        CompletableFuture<Long> position = core.queuePosition(taskId);
        CompletableFuture<Boolean> parked = core.isParked(taskId);
        TaskRecord task = await(core.getTask(taskId)).orElseThrow(() -> new TaskNotFoundException(taskId));
        int scanLimit = core.getOptions().getClaimScanLimit();
        long ahead = await(position);
        List<TaskRecord> before = new java.util.ArrayList<>();
        for (long offset = 0; ahead < scanLimit && offset < ahead; offset += 1000) {
            // Read a moment after the position: a task that left the queue meanwhile moves this one
            // up into the page, and it must not take its own room.
            await(core.listTasks(TaskState.QUEUED, (int) offset, (int) Math.min(1000, ahead - offset))).getTasks()
                    .stream().filter(t -> !t.getTaskId().equals(taskId)).forEach(before::add);
        }
        LeaderStatus leader = leadership;
        if (leader != null && leader.getDeadlineMillis() < System.currentTimeMillis()) {
            leader = null; // its lease ran out since this master last looked: nobody may lead now
        }
        java.util.Set<String> connected = new java.util.HashSet<>();
        registry.snapshot().forEach(w -> connected.add(w.getWorkerId() + "/" + w.getSessionId()));
        PendingReason.Dispatch dispatch = new PendingReason.Dispatch(leader == null ? "" : leader.getLeaderId(),
                leader != null && leader.isSelf(), connected);
        return PendingReason.judge(task, await(workers), ahead, scanLimit, before, dispatch, await(parked));
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
     * {@link TaskEvent#getType()}). Called on the event thread;
     * must not block: a listener that holds the thread for long enough makes the master fall
     * behind the trimmed stream, and it then gets a {@link TaskEvent#GAP} event for the events
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

    /** Returns a health snapshot: workers by state, queue depth, running tasks, event-loop, dispatcher, event-stream and log figures. */
    public HealthSnapshot health() {
        requireRunning();
        CompletableFuture<List<WorkerInfo>> workers = core.listWorkers();
        CompletableFuture<Long> queue = core.queueDepth();
        CompletableFuture<Long> parked = core.parkedCount();
        CompletableFuture<TaskPage> assigned = core.listTasks(TaskState.ASSIGNED, 0, 1);
        CompletableFuture<TaskPage> running = core.listTasks(TaskState.RUNNING, 0, 1);
        Map<WorkerState, Integer> byState = new EnumMap<>(WorkerState.class);
        for (WorkerInfo w : await(workers)) {
            byState.merge(w.getState(), 1, Integer::sum);
        }
        int loops = 0;
        long pending = 0;
        for (EventExecutor executor : io) {
            loops++;
            if (executor instanceof SingleThreadEventExecutor single) {
                pending += single.pendingTasks();
            }
        }
        TaskLogManager.Load load = logs.load();
        return new HealthSnapshot(masterId, isLeader(), transport.toString(), registry.size(), byState, await(queue),
                await(parked), await(assigned).getTotal(), await(running).getTotal(), loops, pending, dispatcher.getRounds(),
                dispatcher.getSent(), reaperPasses.get(), reaperFailures.get(), watcher.getGaps(), load.writeBacklog(), load.syncBacklog(),
                load.openFiles(), load.followers());
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

    /**
     * The log manager's record lookup (see {@link TaskLogManager.RecordLookup}): the task's newest
     * attempt, and how a task that has no log file here ended, from its record.
     */
    private CompletableFuture<TaskLogManager.Recorded> lookUpForLogs(String taskId) {
        return core.getTask(taskId).thenApply(found -> found.map(task -> new TaskLogManager.Recorded(
                task.getAttempt() == 0 ? -1 : task.getEpoch(), task.getAttempt(), task.getTraceId(), endWithoutLog(task)))
                .orElse(null));
    }

    /**
     * The END_OF_STREAM for followers of a task that has no log file here, or null to wait. A task
     * ended with no line to come when its worker recorded that its last attempt printed nothing,
     * or when it never ran; one that ended without its worker recording the end (failed by the
     * reaper, cancelled on a lost worker) ends its followers marked incomplete, as the manager's
     * abandon would. A task not ended, or whose last attempt printed lines that are not in a file
     * yet, is waited for.
     */
    private static LogRecord endWithoutLog(TaskRecord task) {
        if (!task.getState().isTerminal()) {
            return null;
        }
        String taskId = task.getTaskId();
        String state = task.getState().name();
        if (task.getAttempt() == 0 || task.getLogLines() == 0) {
            return LogRecord.endOfStream(taskId, task.getAttempt(), task.getEpoch(), state, true, null);
        }
        if (task.getLogLines() > 0) {
            return null;
        }
        return LogRecord.endOfStream(taskId, task.getAttempt(), task.getEpoch(), state, false,
                "the task ended without its worker reporting the end of its log, and this master has no log"
                        + " file for it");
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
            return future.get(config.apiTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchedulerException("interrupted while waiting for Redis", true, e);
        } catch (TimeoutException e) {
            throw new SchedulerException("Redis did not answer within " + config.apiTimeout, true, e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                    ? e.getCause().getCause() : e.getCause();
            if (cause instanceof RuntimeException re && (cause instanceof SchedulerException || cause instanceof IllegalArgumentException)) {
                throw re;
            }
            throw new SchedulerException("request to Redis failed: " + cause, true, cause);
        }
    }

    private synchronized void requireRunning() {
        if (state != State.RUNNING) {
            throw new IllegalStateException("master " + masterId + " is " + state.name().toLowerCase() + ", not running");
        }
    }

    /**
     * Stops the master in order: no new connections or dispatches, the reaper and watcher stop,
     * worker connections close (workers keep running their tasks and reconnect to another master),
     * logs are flushed. Idempotent; returns without waiting (see {@link #awaitTermination}).
     */
    public void shutdown() {
        synchronized (this) {
            if (state == State.SHUTDOWN || state == State.TERMINATED) {
                return;
            }
            state = State.SHUTDOWN;
        }
        Thread stopper = new Thread(this::stopAll, "rls-master-shutdown");
        stopper.setDaemon(true);
        stopper.start();
    }

    /** As {@link #shutdown()}: a master runs no tasks itself, so there is nothing more to interrupt. */
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
            if (core != null && isLeader()) {
                try {
                    core.resignLeadership(masterId).get(2, TimeUnit.SECONDS);
                } catch (Exception e) {
                    log.debug("could not resign leadership: {}", e.toString());
                }
            }
            if (serverChannel != null) {
                serverChannel.close().syncUninterruptibly();
            }
            for (ConnectedWorker w : registry.snapshot()) {
                w.getChannel().close();
            }
            if (io != null) {
                io.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            }
            if (boss != null) {
                boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            }
            if (watcher != null) {
                watcher.close();
            }
            if (logs != null) {
                logs.close();
            }
            if (core != null) {
                core.close();
            }
            if (ownClient != null) {
                ownClient.close();
            }
        } catch (RuntimeException e) {
            log.warn("error while stopping master {}: {}", masterId, e.toString());
        } finally {
            synchronized (this) {
                state = State.TERMINATED;
            }
            terminated.countDown();
            log.info("master {} stopped", masterId);
        }
    }

    /**
     * Waits until the master has stopped after {@link #shutdown()}.
     *
     * @return true if it stopped within the timeout
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return terminated.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Returns whether the master has fully stopped. */
    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    /** Shuts down and waits up to 15 s for termination. */
    @Override
    public void close() {
        synchronized (this) {
            if (state == State.NEW) {
                state = State.TERMINATED;
                terminated.countDown();
                if (ownClient != null) {
                    ownClient.close();
                }
                return;
            }
        }
        shutdown();
        try {
            awaitTermination(Duration.ofSeconds(15));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String defaultMasterId() {
        String name = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
        String id = "master-" + name.replaceAll("[^A-Za-z0-9._-]", "-");
        return id.length() > 128 ? id.substring(0, 128) : id;
    }

    /** Builds a {@link SchedulerMaster}; setters validate at once, {@link #build()} across fields. Not thread-safe. */
    public static final class Builder {
        private RedisURI redisUri;
        private RedisClient client;
        private String bindHost = "0.0.0.0";
        private int rpcPort = DEFAULT_RPC_PORT;
        private byte[] secret;
        private String masterId;
        private CoreOptions coreOptions = CoreOptions.defaults();
        private Path logDirectory = DEFAULT_LOG_DIRECTORY;
        private int ioThreads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
        private int dispatchBatch = DEFAULT_DISPATCH_BATCH;
        private Duration reapInterval = DEFAULT_REAP_INTERVAL;
        private Duration dispatchInterval = DEFAULT_DISPATCH_INTERVAL;
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private Duration apiTimeout = DEFAULT_API_TIMEOUT;
        private Duration leaderLease = DEFAULT_LEADER_LEASE;
        private String advertisedHost;
        private ProtocolOptions protocolOptions = ProtocolOptions.defaults();
        private NettyTransport transport = NettyTransport.best();
        private boolean standbyOnly;

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

        /** Sets the interface to bind the RPC server to; default all interfaces ("0.0.0.0"). */
        public Builder bindHost(String host) {
            this.bindHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Sets the RPC port, 0 (any free port) to 65535; default 9000. */
        public Builder rpcPort(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("rpcPort must be between 0 and 65535, was " + port);
            }
            this.rpcPort = port;
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

        /** Sets this master's id; default "master-&lt;pid&gt;-&lt;host&gt;". */
        public Builder masterId(String id) {
            this.masterId = TaskIds.require(id, "master id");
            return this;
        }

        /** Sets the lease core settings (namespace, leases, limits); default {@link CoreOptions#defaults()}. */
        public Builder coreOptions(CoreOptions options) {
            this.coreOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Sets the directory of task log files; default "logs". Created if missing. */
        public Builder logDirectory(Path dir) {
            this.logDirectory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /** Sets the number of I/O event loops, 1 to 256; default min(4, cores). */
        public Builder ioThreads(int threads) {
            if (threads < 1 || threads > 256) {
                throw new IllegalArgumentException("ioThreads must be between 1 and 256, was " + threads);
            }
            this.ioThreads = threads;
            return this;
        }

        /** Sets the assignments per worker per dispatch round, 1 to 1000; default 16. */
        public Builder dispatchBatch(int batch) {
            if (batch < 1 || batch > 1000) {
                throw new IllegalArgumentException("dispatchBatch must be between 1 and 1000, was " + batch);
            }
            this.dispatchBatch = batch;
            return this;
        }

        /** Sets the reaper's period, 1 ms to 1 h; default 500 ms. */
        public Builder reapInterval(Duration interval) {
            this.reapInterval = range(interval, Duration.ofMillis(1), Duration.ofHours(1), "reapInterval");
            return this;
        }

        /** Sets the period of the backstop dispatch round, 1 ms to 1 h; default 1 s. */
        public Builder dispatchInterval(Duration interval) {
            this.dispatchInterval = range(interval, Duration.ofMillis(1), Duration.ofHours(1), "dispatchInterval");
            return this;
        }

        /** Sets how long a new connection has to authenticate, 10 ms to 1 h; default 10 s. */
        public Builder handshakeTimeout(Duration timeout) {
            this.handshakeTimeout = range(timeout, Duration.ofMillis(10), Duration.ofHours(1), "handshakeTimeout");
            return this;
        }

        /**
         * Sets the leadership lease: only the master holding it dispatches and reaps; the others
         * accept submissions and queries and send connecting workers to the leader. Renewed every
         * third of it; a leader that cannot renew for the whole lease steps down. 100 ms to 1 h;
         * default 10 s.
         */
        public Builder leaderLease(Duration lease) {
            this.leaderLease = range(lease, Duration.ofMillis(100), Duration.ofHours(1), "leaderLease");
            return this;
        }

        /**
         * Makes this master standby-only (default false): it never acquires the leadership lease,
         * even when no master holds it, so it never dispatches or reaps. It still accepts
         * submissions, cancels and queries, follows task events and completes result futures,
         * and sends workers that connect to it on to the current leader (it reads who leads, by
         * the Redis clock, every third of {@link #leaderLease(Duration)}). For an "API-only"
         * master embedded in an application (a lab portal, a CLI, a test harness) beside
         * dedicated masters that lead: it can never take leadership from them, and stopping or
         * crashing it never causes a failover. Tasks submitted through it wait in the queue until
         * some other master leads.
         */
        public Builder standbyOnly(boolean standbyOnly) {
            this.standbyOnly = standbyOnly;
            return this;
        }

        /** Sets the host workers should use to reach this master; default the bound address, or the host's address when bound to all. */
        public Builder advertisedHost(String host) {
            this.advertisedHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Sets the bound of the blocking API methods, 1 ms to 1 day; default 30 s. */
        public Builder apiTimeout(Duration timeout) {
            this.apiTimeout = range(timeout, Duration.ofMillis(1), Duration.ofDays(1), "apiTimeout");
            return this;
        }

        /** Sets the codec settings (maximum frame length); default {@link ProtocolOptions#defaults()}. */
        public Builder protocolOptions(ProtocolOptions options) {
            this.protocolOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Sets the socket transport; default epoll where available, else NIO. */
        public Builder transport(NettyTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
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
            return new SchedulerMaster(this);
        }

        /**
         * Checks a duration setting against its range, in the setter (found by review: only
         * "positive" was checked, and 0.5 ms intervals, a 0 ms leadership lease renewed every
         * millisecond, or a timeout beyond a long of nanoseconds failed later, in start() or mid-call).
         */
        private static Duration range(Duration d, Duration min, Duration max, String name) {
            Objects.requireNonNull(d, name);
            if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
                throw new IllegalArgumentException(name + " must be " + min.toString().substring(2).toLowerCase()
                        + " to " + max.toString().substring(2).toLowerCase() + ", was " + d);
            }
            return d;
        }
    }
}
