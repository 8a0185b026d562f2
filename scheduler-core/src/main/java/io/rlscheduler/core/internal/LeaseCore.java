package io.rlscheduler.core.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.KeyValue;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.IllegalTaskStateException;
import io.rlscheduler.core.SchedulerTimeoutException;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.OwnerLimit;
import io.rlscheduler.core.OwnerLimitExceededException;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerRemoval;
import io.rlscheduler.core.WorkerRemovalStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease and state core: worker leases, the durable priority queue, task leases with fencing
 * epochs, task records and the event stream, all in Redis. Every change that depends on who owns
 * what is one Lua script, run atomically by Redis with deadlines computed from Redis's own clock;
 * this class only prepares arguments and reads replies.
 *
 * <p>All operations are asynchronous and never block the calling thread; their futures complete
 * on Lettuce's I/O threads, so callbacks must not block either. Every mutating call is safe to
 * repeat after a timeout or reconnect: a replay changes nothing and gets the same kind of answer.
 *
 * <p>A call's future fails with a {@link SchedulerTimeoutException} (retryable) when Redis does
 * not answer within the client's command timeout, and with an {@link IllegalTaskStateException}
 * (not retryable) when a script's transition table refuses a move. The scripts check a task's
 * state before they move it and answer what they refuse as a status ({@link WriteStatus#WRONG_STATE},
 * {@link CancelStatus#WRONG_STATE}), so the exception means a stored state they do not expect.
 *
 * <p>Thread-safe; one instance per process and namespace is enough. Creating one opens two Redis
 * connections (one of them only for the leadership lease), checks the server's eviction policy and
 * loads the scripts; {@link #close()} closes the connections.
 */
public final class LeaseCore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseCore.class);

    private static final LuaScript SUBMIT = LuaScript.load("submit");
    private static final LuaScript REGISTER = LuaScript.load("register");
    private static final LuaScript HEARTBEAT = LuaScript.load("heartbeat");
    private static final LuaScript RENEW = LuaScript.loadBare("renew");
    private static final LuaScript CLAIM = LuaScript.load("claim");
    private static final LuaScript SUBMIT_CLAIM = LuaScript.load("submit_claim");
    private static final LuaScript ACK = LuaScript.load("ack");
    private static final LuaScript FINISH = LuaScript.load("finish");
    private static final LuaScript CANCEL = LuaScript.load("cancel");
    private static final LuaScript REAP = LuaScript.load("reap");
    private static final LuaScript WORKERS = LuaScript.load("workers");
    private static final LuaScript LEADER = LuaScript.load("leader");
    private static final LuaScript REMOVE_WORKER = LuaScript.load("remove_worker");
    /**
     * Queue scores from here up are parked tasks' (parking.lua's PARK_OFFSET, pinned by
     * ParkedScoreTest): no registered worker could run them.
     */
    static final double PARKED_MIN = 1e15;

    /**
     * The most submissions, acknowledgements or outcomes one script run carries when calls come
     * faster than Redis answers (see {@link ScriptBatcher}); bounds how long one run holds Redis.
     */
    static final int WRITE_BATCH = 32;
    /** Runs of one such script outstanding at once before further calls wait to be batched. */
    static final int WRITE_RUNS_IN_FLIGHT = 2;
    /**
     * The most liveness renewals of idle workers one run of the bare {@code renew} script carries:
     * a renewal costs a few microseconds of that run, so even a full run holds Redis briefly. Well
     * under the script's own limit: it passes two values a renewal to one command through Lua's
     * {@code unpack}, which takes about 8,000 at most.
     */
    static final int RENEW_BATCH = 256;
    /**
     * How long an idle worker's renewal waits for others to share its run: renewals come one at a
     * time, each alone in a run but for this wait, and a few milliseconds are nothing against a
     * liveness lease of seconds. One run at a time.
     */
    static final long RENEW_LINGER_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(2);

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisAsyncCommands<String, String> redis;
    /**
     * The leadership lease's own connection: its renewals must not queue behind a burst of claims,
     * submissions or heartbeats on the main connection (thousands of workers connecting at once),
     * or a busy leader would lose its lease to its own traffic.
     */
    private final StatefulRedisConnection<String, String> leadershipConnection;
    private final RedisAsyncCommands<String, String> leadership;
    private final CoreOptions options;
    private final Keys keys;
    private final String eventsMax;
    private final ScriptBatcher<String[]> submits;
    private final ScriptBatcher<String[]> acks;
    private final ScriptBatcher<String[]> finishes;
    private final ScriptBatcher<String[]> renewals;
    private final ArtifactRecords artifacts;
    private final ProvenanceRecords provenance;
    private final HolderReads holders;
    private final WorkerKeyRecords workerKeys;
    private final OwnerRecords owners;
    private final ApiTokenRecords apiTokens;
    private final SweepRecords sweeps;
    private final GpuReadingRecords gpuReadings;

    private LeaseCore(RedisClient client, CoreOptions options) {
        this.client = client;
        this.options = options;
        this.keys = new Keys(options.getNamespace());
        // Script runs pass dozens of arguments: a codec that writes each in place (Utf8Codec).
        this.connection = client.connect(Utf8Codec.INSTANCE);
        this.redis = connection.async();
        StatefulRedisConnection<String, String> second;
        try {
            second = client.connect(Utf8Codec.INSTANCE);
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
        this.leadershipConnection = second;
        this.leadership = second.async();
        this.eventsMax = Integer.toString(options.getEventStreamMaxLength());
        this.submits = new ScriptBatcher<>("submit", WRITE_BATCH, WRITE_RUNS_IN_FLIGHT, this::runSubmits, Replies::parse);
        this.acks = new ScriptBatcher<>("ack", WRITE_BATCH, WRITE_RUNS_IN_FLIGHT, this::runAcks, Replies::parse);
        this.finishes = new ScriptBatcher<>("finish", WRITE_BATCH, WRITE_RUNS_IN_FLIGHT, this::runFinishes, Replies::parse);
        this.renewals = new ScriptBatcher<>("renew", RENEW_BATCH, 1, this::runRenewals, Replies::parse,
                RENEW_LINGER_NANOS, client.getResources().eventExecutorGroup());
        this.artifacts = new ArtifactRecords(redis, keys);
        this.provenance = new ProvenanceRecords(redis, keys);
        this.holders = new HolderReads(redis, keys, connection.getTimeout());
        this.workerKeys = new WorkerKeyRecords(redis, keys, eventsMax);
        this.owners = new OwnerRecords(redis, keys, eventsMax);
        this.apiTokens = new ApiTokenRecords(redis, keys);
        this.sweeps = new SweepRecords(redis, keys);
        this.gpuReadings = new GpuReadingRecords(redis, keys);
    }

    /**
     * Opens a lease core on a Redis server. Blocks while it connects and checks the server's
     * {@code maxmemory-policy}: anything but {@code noeviction} lets Redis silently delete leases
     * and tasks under memory pressure, so it is logged as a warning.
     *
     * @param client  the Lettuce client to connect with; not closed by {@link #close()}
     * @param options the core's settings
     * @return the core
     */
    public static LeaseCore create(RedisClient client, CoreOptions options) {
        LeaseCore core = new LeaseCore(Objects.requireNonNull(client, "client"), Objects.requireNonNull(options, "options"));
        core.checkEvictionPolicy();
        core.loadScripts();
        return core;
    }

    /** Returns the provenance of attempts (what each ran), on this core's connection. */
    public ProvenanceRecords provenance() {
        return provenance;
    }

    /** Returns the reads of who holds a task's current attempt, on this core's connection. */
    public HolderReads holders() {
        return holders;
    }

    /** Returns the Redis side of run artifacts (checkpoints, the store's location), on this core's connection. */
    public ArtifactRecords artifacts() {
        return artifacts;
    }

    /** Returns the worker keys' verifiers and revocations, on this core's connection. */
    public WorkerKeyRecords workerKeys() {
        return workerKeys;
    }

    /** Returns owners' limits, shares and usage, on this core's connection. */
    public OwnerRecords owners() {
        return owners;
    }

    /** Returns the HTTP API's tokens, on this core's connection. */
    public ApiTokenRecords apiTokens() {
        return apiTokens;
    }

    /** Returns the sweeps, on this core's connection. */
    public SweepRecords sweeps() {
        return sweeps;
    }

    /** Returns the workers' GPU readings as the leader publishes them, on this core's connection. */
    public GpuReadingRecords gpuReadings() {
        return gpuReadings;
    }

    /** Returns the core's settings. */
    public CoreOptions getOptions() {
        return options;
    }

    /**
     * Loads every script into Redis's script cache up front, so that the first calls of many
     * concurrent clients find it there instead of each answering NOSCRIPT and resending the source.
     * A failure only costs that: {@link LuaScript#run} falls back to sending the source.
     */
    private void loadScripts() {
        try {
            for (LuaScript script : List.of(SUBMIT, SUBMIT_CLAIM, REGISTER, HEARTBEAT, RENEW, CLAIM, ACK, FINISH, CANCEL, REAP, WORKERS, LEADER,
                    REMOVE_WORKER, ProvenanceRecords.PROVENANCE, ArtifactRecords.CHECKPOINT, ArtifactRecords.OUTPUTS,
                    WorkerKeyRecords.WORKER_KEY, WorkerKeyRecords.REVOKE_WORKER, WorkerKeyRecords.HELLO)) {
                connection.sync().scriptLoad(script.getSource());
            }
        } catch (RuntimeException e) {
            log.warn("could not load the lease scripts into Redis up front ({}); they are sent on first use", e.toString());
        }
    }

    private void checkEvictionPolicy() {
        try {
            Map<String, String> config = connection.sync().configGet("maxmemory-policy");
            String policy = config.get("maxmemory-policy");
            if (!"noeviction".equals(policy)) {
                log.warn("Redis maxmemory-policy is '{}': under memory pressure Redis may evict leases, queue "
                        + "entries and task records. Set 'maxmemory-policy noeviction' for rl-scheduler.", policy);
            }
        } catch (RuntimeException e) {
            log.warn("could not read Redis maxmemory-policy ({}); make sure it is 'noeviction'", e.toString());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Tasks
    // ------------------------------------------------------------------------------------------

    /**
     * Submits a task to the queue. Idempotent by task id: submitting an id that exists returns the
     * existing record unchanged ({@link SubmitResult#isCreated()} false).
     *
     * @param task the task
     * @return the result
     * @throws IllegalArgumentException (immediately) if the spec is not a JSON object
     */
    public CompletableFuture<SubmitResult> submit(TaskDefinition task) {
        requireJsonObject(task.getSpecJson(), "spec");
        int maxAttempts = task.getMaxAttempts() > 0 ? task.getMaxAttempts() : options.getMaxAttempts();
        int maxLosses = task.getMaxLeaseLosses() >= 0 ? task.getMaxLeaseLosses() : options.getMaxLeaseLosses();
        String[] call = submission(task, maxAttempts, maxLosses);
        return submits.call(call).thenCompose(r -> submitted(task, r, maxAttempts, maxLosses));
    }

    /** The arguments of one submission as submit.lua takes them: [0] its owner index key, then 11. */
    private String[] submission(TaskDefinition task, int maxAttempts, int maxLosses) {
        return new String[] {keys.owner(task.getOwner()), task.getTaskId(), Integer.toString(task.getPriority()),
                Integer.toString(task.getGpus()), Integer.toString(task.getCpuSlots()), Long.toString(task.getMemoryBytes()),
                toJson(task.getSelector()), task.getOwner(), task.getTraceId(), Integer.toString(maxAttempts),
                Integer.toString(maxLosses), task.getSpecJson()};
    }

    /** Turns submit.lua's answer for one submission into its result (reading the record of an existing id). */
    private CompletableFuture<SubmitResult> submitted(TaskDefinition task, JsonNode r, int maxAttempts, int maxLosses) {
        if ("OK".equals(r.get("r").asText())) {
            return CompletableFuture.completedFuture(new SubmitResult(true, Replies.queued(task, r.get("seq").asLong(),
                    r.get("at").asLong(), maxAttempts, maxLosses)));
        }
        if ("LIMIT".equals(r.get("r").asText())) {
            return CompletableFuture.failedFuture(new OwnerLimitExceededException(task.getOwner(),
                    OwnerLimit.ofKey(r.get("limit").asText()), r.path("allowed").asDouble(), r.path("current").asDouble(),
                    r.has("retry_after_ms") ? Duration.ofMillis(r.get("retry_after_ms").asLong()) : null));
        }
        return getTask(task.getTaskId()).thenApply(t -> new SubmitResult(false,
                t.orElseThrow(() -> new TaskNotFoundException(task.getTaskId()))));
    }

    /**
     * Returns how many plain submissions are on their way to Redis: runs of the submit script
     * sent and not yet answered, and calls waiting to be batched into the next ({@link
     * #submitAndClaim} calls are not counted). Zero means a plain submission made now would run
     * alone, so a caller may as well have it claim in the same run ({@link #submitAndClaim});
     * otherwise it goes faster batched with the others ({@link #submit}).
     */
    public int submissionsInFlight() {
        return submits.inFlight() + submits.queued();
    }

    /**
     * Submits a task and, in the same script run, claims for {@code workers} as {@link #claim}
     * does: for a leader whose last claim left no claimable task queued, a new task is assigned
     * without a second run (one Redis round trip less between submit and start). The submission is
     * decided as by {@link #submit} (idempotent by task id), the claim as by {@link #claim}
     * (idempotent by request id: a call repeated after it failed in transit answers EXISTS for the
     * submission and the first claim's answer).
     *
     * @param task      the task
     * @param workers   the workers to claim for, 1 to 1000, in the order to serve them
     * @param maxTasks  the most tasks per worker, 1 to 1000
     * @param requestId the claim's request id
     * @param leader    the claiming master's leadership, or null outside a master
     * @return both answers
     */
    public CompletableFuture<SubmitAndClaimResult> submitAndClaim(TaskDefinition task, List<WorkerSession> workers,
                                                                  int maxTasks, String requestId, LeaderStatus leader) {
        requireJsonObject(task.getSpecJson(), "spec");
        int maxAttempts = task.getMaxAttempts() > 0 ? task.getMaxAttempts() : options.getMaxAttempts();
        int maxLosses = task.getMaxLeaseLosses() >= 0 ? task.getMaxLeaseLosses() : options.getMaxLeaseLosses();
        String[] submission = submission(task, maxAttempts, maxLosses);
        List<String> args = new ArrayList<>(12 + 7 + 2 * workers.size());
        args.add(eventsMax);
        args.addAll(Arrays.asList(submission).subList(1, submission.length));
        args.addAll(claimArguments(workers, maxTasks, requestId, leader));
        return SUBMIT_CLAIM.run(redis, keys.coreAnd(submission[0], keys.claimRequest(requestId), keys.leader()),
                        args.toArray(new String[0]))
                .thenCompose(reply -> {
                    JsonNode both = Replies.parse(reply);
                    if (!both.has("claim")) { // refused by the owner's limits: no claim ran
                        return submitted(task, both.get("submit"), maxAttempts, maxLosses)
                                .thenApply(s -> new SubmitAndClaimResult(s, List.of()));
                    }
                    List<ClaimResult> claims = claimResults(both.get("claim"), workers.size());
                    return submitted(task, both.get("submit"), maxAttempts, maxLosses)
                            .thenApply(s -> new SubmitAndClaimResult(s, claims));
                });
    }

    /** One run of submit.lua: call[0] is the owner index key, call[1..11] the submission's arguments. */
    private CompletableFuture<String> runSubmits(List<String[]> calls) {
        String[] owners = new String[calls.size()];
        List<String> args = new ArrayList<>(1 + 11 * calls.size());
        args.add(eventsMax);
        for (int i = 0; i < calls.size(); i++) {
            String[] call = calls.get(i);
            owners[i] = call[0];
            args.addAll(Arrays.asList(call).subList(1, call.length));
        }
        return SUBMIT.run(redis, keys.coreAnd(owners), args.toArray(new String[0]));
    }

    /**
     * Returns a task's record.
     *
     * @param taskId the task id
     * @return the record, or empty if no such task exists
     */
    public CompletableFuture<Optional<TaskRecord>> getTask(String taskId) {
        Objects.requireNonNull(taskId, "taskId");
        CompletableFuture<String> state = read(redis.hget(keys.tasks(), taskId));
        CompletableFuture<String> spec = read(redis.hget(keys.specs(), taskId));
        return state.thenCombine(spec, (st, sp) -> st == null
                ? Optional.<TaskRecord>empty()
                : Optional.of(Replies.storedTask(st, sp)));
    }

    /**
     * Lists the tasks in one state: queued tasks in queue order (priority, then submission; the
     * queue is their index; parked tasks last, in that order among themselves), the others in
     * submission order.
     *
     * @param state  the state
     * @param offset how many matching tasks to skip, at least 0
     * @param limit  the page size, 1 to 1000
     * @return the page
     */
    public CompletableFuture<TaskPage> listTasks(TaskState state, int offset, int limit) {
        Objects.requireNonNull(state, "state");
        return page(state == TaskState.QUEUED ? keys.queue() : keys.state(state), offset, limit);
    }

    /**
     * Lists an owner's tasks in submission order, whatever their state.
     *
     * @param owner  the owner
     * @param offset how many tasks to skip, at least 0
     * @param limit  the page size, 1 to 1000
     * @return the page
     */
    public CompletableFuture<TaskPage> listTasksByOwner(String owner, int offset, int limit) {
        return page(keys.owner(Objects.requireNonNull(owner, "owner")), offset, limit);
    }

    private CompletableFuture<TaskPage> page(String index, int offset, int limit) {
        if (offset < 0 || limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("offset must be >= 0 and limit 1 to 1000, were " + offset + ", " + limit);
        }
        CompletableFuture<Long> total = read(redis.zcard(index));
        return read(redis.zrange(index, offset, offset + limit - 1L)).thenCompose(this::getTasks)
                .thenCombine(total, ValueFactory.get()::taskPage);
    }

    /** The most queued tasks {@link #listTasksNewest} reads to place the queued ones among the rest. */
    public static final int NEWEST_QUEUED_READ = 1000;

    /**
     * Returns the records of {@code taskIds} that exist, in the order given: two HMGETs.
     *
     * @param taskIds at most 1000 ids
     */
    public CompletableFuture<List<TaskRecord>> getTasks(List<String> taskIds) {
        if (taskIds.size() > 1000) {
            throw new IllegalArgumentException("at most 1000 task ids at once, were " + taskIds.size());
        }
        if (taskIds.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        String[] idArray = taskIds.toArray(new String[0]);
        CompletableFuture<List<KeyValue<String, String>>> states = read(redis.hmget(keys.tasks(), idArray));
        CompletableFuture<List<KeyValue<String, String>>> specs = read(redis.hmget(keys.specs(), idArray));
        return states.thenCombine(specs, (st, sp) -> {
            List<TaskRecord> tasks = new ArrayList<>();
            for (int i = 0; i < st.size(); i++) {
                if (st.get(i).hasValue()) {
                    tasks.add(Replies.storedTask(st.get(i).getValue(), sp.get(i).getValueOrElse("{}")));
                }
            }
            return tasks;
        });
    }

    /**
     * Lists tasks newest first (by submit sequence): those in {@code state}, an {@code owner}'s, or
     * (both null) all of them. QUEUED tasks are listed in queue order, the next to run first. All
     * tasks: the indexes of the ended and running states merged with the first
     * {@value #NEWEST_QUEUED_READ} of the queue, which are all the queued ones a lab normally has;
     * past that many, the queue's later tasks are left out of this listing (never of the total).
     */
    public CompletableFuture<TaskPage> listTasksNewest(TaskState state, String owner, int offset, int limit) {
        if (offset < 0 || limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("offset must be >= 0 and limit 1 to 1000, were " + offset + ", " + limit);
        }
        if (state == TaskState.QUEUED) {
            return page(keys.queue(), offset, limit);
        }
        if (state != null || owner != null) {
            String index = state != null ? keys.state(state) : keys.owner(owner);
            CompletableFuture<Long> total = read(redis.zcard(index));
            return read(redis.zrevrange(index, offset, offset + limit - 1L))
                    .thenCompose(this::getTasks).thenCombine(total, ValueFactory.get()::taskPage);
        }
        long end = (long) offset + limit - 1;
        List<CompletableFuture<List<io.lettuce.core.ScoredValue<String>>>> ranges = new ArrayList<>();
        List<CompletableFuture<Long>> counts = new ArrayList<>();
        for (TaskState s : TaskState.values()) {
            if (s != TaskState.QUEUED) {
                ranges.add(read(redis.zrevrangeWithScores(keys.state(s), 0, end)));
                counts.add(read(redis.zcard(keys.state(s))));
            }
        }
        counts.add(read(redis.zcard(keys.queue())));
        CompletableFuture<List<TaskRecord>> queued = read(redis.zrange(keys.queue(), 0, NEWEST_QUEUED_READ - 1L))
                .thenCompose(this::getTasks);
        return CompletableFuture.allOf(ranges.toArray(new CompletableFuture[0])).thenCombine(queued, (ignored, q) -> {
            record Entry(long seq, String id) { }
            List<Entry> all = new ArrayList<>();
            ranges.forEach(r -> r.join().forEach(v -> all.add(new Entry((long) v.getScore(), v.getValue()))));
            q.forEach(t -> all.add(new Entry(t.getSubmitSequence(), t.getTaskId())));
            all.sort((a, b) -> Long.compare(b.seq(), a.seq()));
            return all.subList(Math.min(offset, all.size()), (int) Math.min(end + 1, all.size())).stream().map(Entry::id).toList();
        }).thenCompose(this::getTasks).thenCombine(CompletableFuture.allOf(counts.toArray(new CompletableFuture[0]))
                .thenApply(v -> counts.stream().mapToLong(CompletableFuture::join).sum()), ValueFactory.get()::taskPage);
    }

    /** Returns how many tasks wait in the queue, parked ones included (see {@link #parkedCount()}). */
    public CompletableFuture<Long> queueDepth() {
        return read(redis.zcard(keys.queue()));
    }

    /**
     * Returns how many queued tasks are parked: a claim found that no registered worker could run
     * them (more CPU slots, memory or GPUs than any has in all, or labels none has), so they wait
     * at the end of the queue, out of the claims' sight, until a worker that could registers.
     * They stay QUEUED and can be cancelled.
     */
    public CompletableFuture<Long> parkedCount() {
        return read(redis.zcount(keys.queue(), Range.create(PARKED_MIN, Double.POSITIVE_INFINITY)));
    }

    /** Returns how many queued tasks a claim can see: the queue's length less the parked tasks. */
    public CompletableFuture<Long> claimableCount() {
        return read(redis.zcount(keys.queue(), Range.from(Range.Boundary.unbounded(),
                Range.Boundary.excluding(PARKED_MIN))));
    }

    /**
     * Returns whether a task is parked (see {@link #parkedCount()}); false for a task not queued.
     *
     * @throws IllegalArgumentException (immediately) if {@code taskId} is not a valid task id
     */
    public CompletableFuture<Boolean> isParked(String taskId) {
        TaskIds.require(taskId, "task id");
        return read(redis.zscore(keys.queue(), taskId)).thenApply(score -> score != null && score >= PARKED_MIN);
    }

    /**
     * Returns how many tasks are ahead of a task in the queue (0 for the next to be claimed), or
     * -1 when it is not queued. A parked task ({@link #isParked}) comes after every claimable one:
     * its position counts them all.
     *
     * @param taskId the task
     * @throws IllegalArgumentException (immediately) if {@code taskId} is not a valid task id
     */
    public CompletableFuture<Long> queuePosition(String taskId) {
        TaskIds.require(taskId, "task id");
        return read(redis.zrank(keys.queue(), taskId)).thenApply(rank -> rank == null ? -1L : rank);
    }

    /**
     * Cancels a task: a queued one at once; one held by a worker is marked, and the caller must
     * tell that worker to stop it (see {@link CancelResult}). Safe to repeat.
     *
     * @param taskId the task
     * @param reason why, recorded in the history
     * @return the result
     */
    public CompletableFuture<CancelResult> cancel(String taskId, String reason) {
        Objects.requireNonNull(taskId, "taskId");
        return CANCEL.run(redis, keys.core(), taskId, reason == null ? "cancelled" : reason, eventsMax)
                .thenApply(reply -> {
                    JsonNode r = Replies.parse(reply);
                    return new CancelResult(CancelStatus.valueOf(r.get("r").asText()), r.path("worker").asText(""),
                            Replies.epoch(r.get("epoch")), Replies.state(r.get("state")));
                });
    }

    // ------------------------------------------------------------------------------------------
    // Workers
    // ------------------------------------------------------------------------------------------

    /**
     * Registers a worker process. The same session again only renews its liveness. A new session
     * of a known worker id means its previous process is gone: the tasks that session held are
     * taken back at once (each a lease loss), and the answer lists them.
     *
     * @param registration the worker
     * @return the tasks taken back from a previous session; fails with a
     *         {@link io.rlscheduler.core.WorkerRevokedException}, changing nothing, when the worker
     *         id was revoked ({@link WorkerKeyRecords#revoke})
     */
    public CompletableFuture<RequeueResult> register(WorkerRegistration registration) {
        return REGISTER.run(redis, keys.coreAnd(keys.workerKeys()), registration.getWorkerId(), registration.getSessionId(),
                        toJson(registration.getLabels()), Integer.toString(registration.getCpuSlots()),
                        Long.toString(registration.getMemoryBytes()), Replies.csv(registration.getGpuIds()),
                        Long.toString(options.getLivenessLease().toMillis()), eventsMax)
                .thenApply(reply -> {
                    JsonNode r = Replies.parse(reply);
                    if ("REVOKED".equals(r.path("r").asText())) {
                        throw new io.rlscheduler.core.WorkerRevokedException(registration.getWorkerId(),
                                r.path("revoked_at").asLong(0));
                    }
                    return Replies.requeue(r);
                });
    }

    /**
     * Renews a worker's liveness lease and the task lease of each task it reports at its current
     * epoch; tasks reported at a stale epoch come back as revoked. A worker that reports no task
     * is renewed by the bare {@code renew} script (its liveness only, the record not rewritten),
     * unless Redis still holds reservations of its, which the full {@code heartbeat} repairs; such
     * renewals that arrive together share one run of it ({@link ScriptBatcher}).
     *
     * @param workerId  the worker
     * @param sessionId its session
     * @param held      the tasks it runs, with their epochs
     * @return the result
     */
    public CompletableFuture<HeartbeatResult> heartbeat(String workerId, String sessionId, Collection<TaskLease> held) {
        if (held.isEmpty()) {
            String[] call = {Objects.requireNonNull(workerId, "workerId"), Objects.requireNonNull(sessionId, "sessionId")};
            return renewals.call(call).thenCompose(r -> "FULL".equals(r.get("r").asText())
                    ? fullHeartbeat(workerId, sessionId, held) : CompletableFuture.completedFuture(heartbeatResult(r)));
        }
        return fullHeartbeat(workerId, sessionId, held);
    }

    /**
     * Renews the liveness lease of a worker that holds no task, for it: what a master does for
     * the idle workers whose heartbeats it receives, so that they need not renew it themselves.
     * Only the bare renewal: a worker it does not serve (one with reservations, an unknown one, a
     * session not the registered one) is left as it is, for its own heartbeat to handle.
     * Renewals that arrive together share one script run.
     *
     * @param workerId  the worker
     * @param sessionId the session the worker connected with
     * @return the lease's new deadline (ms, Redis clock), or 0 when it was not renewed
     */
    public CompletableFuture<Long> renewIdle(String workerId, String sessionId) {
        String[] call = {Objects.requireNonNull(workerId, "workerId"), Objects.requireNonNull(sessionId, "sessionId")};
        return renewals.call(call).thenApply(r -> "OK".equals(r.get("r").asText()) ? r.get("deadline").asLong() : 0L);
    }

    private CompletableFuture<HeartbeatResult> fullHeartbeat(String workerId, String sessionId, Collection<TaskLease> held) {
        List<String> args = new ArrayList<>(6 + 2 * held.size());
        args.add(Objects.requireNonNull(workerId, "workerId"));
        args.add(Objects.requireNonNull(sessionId, "sessionId"));
        args.add(Long.toString(options.getLivenessLease().toMillis()));
        args.add(Long.toString(options.getTaskLease().toMillis()));
        args.add(eventsMax);
        for (TaskLease lease : held) {
            args.add(lease.getTaskId());
            args.add(Long.toString(lease.getEpoch()));
        }
        return HEARTBEAT.run(redis, keys.core(), args.toArray(new String[0])).thenApply(reply -> heartbeatResult(Replies.parse(reply)));
    }

    private static HeartbeatResult heartbeatResult(JsonNode r) {
        String code = r.get("r").asText();
        if (!"OK".equals(code)) {
            return new HeartbeatResult(HeartbeatStatus.valueOf(code), 0, List.of(), List.of(), 0);
        }
        List<TaskLease> revoked = new ArrayList<>();
        for (JsonNode t : Replies.list(r.get("revoked"))) {
            revoked.add(new TaskLease(t.get("task").asText(), Replies.epoch(t.get("epoch"))));
        }
        List<TaskLease> cancel = new ArrayList<>();
        for (JsonNode t : Replies.list(r.get("cancel"))) {
            cancel.add(new TaskLease(t.get("task").asText(), Replies.epoch(t.get("epoch"))));
        }
        return new HeartbeatResult(HeartbeatStatus.OK, r.get("renewed").asInt(), revoked, cancel, r.get("deadline").asLong());
    }

    /**
     * Claims up to {@code maxTasks} queued tasks that fit the worker's free capacity and match its
     * labels, in queue order (priority, then submission), skipping those that do not fit.
     *
     * @param workerId  a live, registered worker
     * @param sessionId its session
     * @param maxTasks  the most tasks to assign, 1 to 1000
     * @param requestId a fresh id per claim (see {@link TaskIds}); a replay with the same id returns
     *                  the first answer and assigns nothing more, unless the first assigned
     *                  nothing (such answers are not kept): then the replay claims afresh
     * @return the assignments
     */
    public CompletableFuture<ClaimResult> claim(String workerId, String sessionId, int maxTasks, String requestId) {
        return claim(workerId, sessionId, maxTasks, requestId, null);
    }

    /**
     * Claims as {@link #claim(String, String, int, String)}, on behalf of a master that must hold
     * the leadership lease at {@code leader}'s epoch; otherwise nothing is assigned and the answer
     * is {@link ClaimStatus#NOT_LEADER}. This fences a leader that lost its lease while paused.
     *
     * @param leader the caller's leadership, from {@link #acquireLeadership}; null for no check
     */
    public CompletableFuture<ClaimResult> claim(String workerId, String sessionId, int maxTasks, String requestId,
                                               LeaderStatus leader) {
        return claim(List.of(new WorkerSession(workerId, sessionId)), maxTasks, requestId, leader)
                .thenApply(results -> results.get(0));
    }

    /**
     * Claims for several workers in one script run, as {@link #claim(String, String, int, String, LeaderStatus)}
     * for each in the order given: each worker takes up to {@code maxTasks} of what is left in the
     * queue after the workers before it. One run costs Redis about as much as one worker's claim,
     * so a dispatch round over many workers is cheap; rotating the order spreads the work.
     *
     * @param workers   the workers, 1 to 1000
     * @param maxTasks  the most tasks per worker, 1 to 1000
     * @param requestId a fresh id per call; a replay returns the first answer and assigns nothing
     *                  more, unless the first assigned nothing: then the replay claims afresh
     * @param leader    the caller's leadership, or null for no check
     * @return one result per worker, in order; all {@link ClaimStatus#NOT_LEADER} when the check fails
     */
    public CompletableFuture<List<ClaimResult>> claim(List<WorkerSession> workers, int maxTasks, String requestId,
                                                      LeaderStatus leader) {
        List<String> args = claimArguments(workers, maxTasks, requestId, leader);
        return CLAIM.run(redis, keys.coreAnd(keys.claimRequest(requestId), keys.leader()), args.toArray(new String[0]))
                .thenApply(reply -> claimResults(Replies.parse(reply), workers.size()));
    }

    /** claim.lua's arguments (checked): 7, then 2 per worker. */
    private List<String> claimArguments(List<WorkerSession> workers, int maxTasks, String requestId, LeaderStatus leader) {
        if (maxTasks < 1 || maxTasks > 1000) {
            throw new IllegalArgumentException("maxTasks must be between 1 and 1000, was " + maxTasks);
        }
        if (workers.isEmpty() || workers.size() > 1000) {
            throw new IllegalArgumentException("a claim takes 1 to 1000 workers, was " + workers.size());
        }
        TaskIds.require(requestId, "request id");
        List<String> args = new ArrayList<>(7 + 2 * workers.size());
        args.add(Integer.toString(maxTasks));
        args.add(Integer.toString(options.getClaimScanLimit()));
        args.add(Long.toString(options.getAckTimeout().toMillis()));
        args.add(Long.toString(options.getRequestTtl().toMillis()));
        args.add(eventsMax);
        args.add(leader == null ? "" : leader.getLeaderId());
        args.add(leader == null ? "" : Long.toString(leader.getEpoch()));
        for (WorkerSession w : workers) {
            args.add(w.workerId());
            args.add(w.sessionId());
        }
        return args;
    }

    /** Turns claim.lua's answer into one result per worker. */
    private static List<ClaimResult> claimResults(JsonNode r, int workers) {
        String code = r.get("r").asText();
        List<ClaimResult> results = new ArrayList<>(workers);
        if (!"OK".equals(code)) {
            for (int i = 0; i < workers; i++) {
                results.add(new ClaimResult(ClaimStatus.valueOf(code), List.of(), -1));
            }
            return results;
        }
        long queued = r.path("queued").asLong(-1);
        for (JsonNode w : Replies.list(r.get("workers"))) {
            String status = w.get("r").asText();
            if (!"OK".equals(status)) {
                results.add(new ClaimResult(ClaimStatus.valueOf(status), List.of(), -1));
                continue;
            }
            List<Assignment> assignments = new ArrayList<>();
            for (JsonNode t : Replies.list(w.get("tasks"))) {
                assignments.add(new Assignment(t.get("id").asText(), Replies.epoch(t.get("epoch")),
                        t.get("attempt").asInt(), Replies.ids(t.get("gpu_ids").asText()), t.path("cpu").asInt(1),
                        t.path("mem").asLong(0), t.get("spec").asText()));
            }
            results.add(new ClaimResult(ClaimStatus.OK, assignments, queued));
        }
        if (results.size() != workers) {
            throw new IllegalStateException("claim answered for " + results.size() + " of " + workers + " workers");
        }
        return results;
    }

    /**
     * The worker confirms it started an assigned task: ASSIGNED becomes RUNNING and the task lease
     * begins. Fenced by the epoch.
     *
     * @param lease     the task and the epoch of its assignment
     * @param workerId  the worker
     * @param sessionId its session
     * @return the result
     */
    public CompletableFuture<WriteResult> acknowledge(TaskLease lease, String workerId, String sessionId) {
        return acks.call(new String[] {lease.getTaskId(), Long.toString(lease.getEpoch()),
                        Objects.requireNonNull(workerId, "workerId"), Objects.requireNonNull(sessionId, "sessionId")})
                .thenApply(Replies::write);
    }

    private CompletableFuture<String> runAcks(List<String[]> calls) {
        return ACK.run(redis, keys.core(), flatten(calls, Long.toString(options.getTaskLease().toMillis()), eventsMax));
    }

    /**
     * Records how an attempt ended and releases its reservation, exactly once. Fenced by the
     * epoch; repeating the same outcome answers {@link WriteStatus#DUPLICATE}.
     *
     * @param lease       the task and the epoch of its assignment
     * @param workerId    the worker
     * @param sessionId   its session
     * @param outcome     SUCCEEDED, FAILED, CANCELLED or TIMED_OUT
     * @param exitCode    the process's exit code, or null
     * @param error       an error message, or null
     * @param metricsJson the final metrics as a JSON object, or null
     * @return the result
     */
    public CompletableFuture<WriteResult> finish(TaskLease lease, String workerId, String sessionId, TaskState outcome,
                                                 Integer exitCode, String error, String metricsJson) {
        return finish(lease, workerId, sessionId, outcome, exitCode, error, metricsJson, null);
    }

    /**
     * Records how an attempt ended, as {@link #finish(TaskLease, String, String, TaskState, Integer, String, String)},
     * together with the attempt's run directory on the worker's machine.
     *
     * @param runDir the run directory, or null
     * @return the result
     */
    public CompletableFuture<WriteResult> finish(TaskLease lease, String workerId, String sessionId, TaskState outcome,
                                                 Integer exitCode, String error, String metricsJson, String runDir) {
        return finish(lease, workerId, sessionId, outcome, exitCode, error, metricsJson, runDir, -1);
    }

    /**
     * Records how an attempt ended, as {@link #finish(TaskLease, String, String, TaskState, Integer, String, String, String)},
     * together with how many output lines the attempt printed ({@link TaskRecord#getLogLines()}):
     * a master's log manager keeps no file for an attempt that printed nothing, and tells its log
     * followers from this count that no lines are on their way.
     *
     * @param logLines the attempt's last log sequence number (0 when it printed nothing), or -1 when not known
     * @return the result
     * @throws IllegalArgumentException if {@code logLines} is below -1, or as the shorter form
     */
    public CompletableFuture<WriteResult> finish(TaskLease lease, String workerId, String sessionId, TaskState outcome,
                                                 Integer exitCode, String error, String metricsJson, String runDir,
                                                 long logLines) {
        return finish(lease, workerId, sessionId, outcome, exitCode, error, metricsJson, runDir, logLines, null);
    }

    /**
     * Records how an attempt ended, as {@link #finish(TaskLease, String, String, TaskState, Integer, String, String, String, long)},
     * and stores the attempt's provenance in the same script run, as
     * {@link ProvenanceRecords#record} would (the same fence, the same field, a repeat kept as
     * first stored): an attempt that ends before its provenance was written costs one run, not two.
     * The provenance is stored whenever the end's fence passes, also when the answer is
     * {@link WriteStatus#DUPLICATE} or {@link WriteStatus#WRONG_STATE} (the task ended otherwise
     * while this attempt held it); with {@link WriteStatus#STALE} or
     * {@link WriteStatus#WRONG_SESSION} nothing is stored.
     *
     * @param provenance the attempt's provenance (its task and epoch must be the lease's), or null for none
     * @return the result
     * @throws IllegalArgumentException if the provenance is of another attempt, or as the shorter form
     */
    public CompletableFuture<WriteResult> finish(TaskLease lease, String workerId, String sessionId, TaskState outcome,
                                                 Integer exitCode, String error, String metricsJson, String runDir,
                                                 long logLines, AttemptProvenance provenance) {
        if (provenance != null && (!provenance.getTaskId().equals(lease.getTaskId())
                || provenance.getEpoch() != lease.getEpoch() || !provenance.getWorkerId().equals(workerId))) {
            throw new IllegalArgumentException("the provenance of task " + provenance.getTaskId() + " epoch "
                    + provenance.getEpoch() + " on " + provenance.getWorkerId() + " is not that of the attempt ending: task "
                    + lease.getTaskId() + " epoch " + lease.getEpoch() + " on " + workerId);
        }
        if (logLines < -1) {
            throw new IllegalArgumentException("logLines must be -1 (not known) or more, was " + logLines);
        }
        if (!outcome.isTerminal()) {
            throw new IllegalArgumentException("outcome must be a terminal state, was " + outcome);
        }
        if (metricsJson != null && !metricsJson.isEmpty()) {
            requireJsonObject(metricsJson, "metrics");
        }
        return finishes.call(new String[] {keys.provenance(lease.getTaskId()), lease.getTaskId(),
                        Long.toString(lease.getEpoch()),
                        Objects.requireNonNull(workerId, "workerId"), Objects.requireNonNull(sessionId, "sessionId"),
                        outcome.name(), exitCode == null ? "" : exitCode.toString(), error == null ? "" : error,
                        metricsJson == null ? "" : metricsJson, runDir == null ? "" : runDir,
                        logLines < 0 ? "" : Long.toString(logLines),
                        provenance == null ? "" : ProvenanceFormat.encode(provenance)})
                .thenApply(Replies::write);
    }

    private CompletableFuture<String> runRenewals(List<String[]> calls) {
        return RENEW.run(redis, new String[]{keys.workers(), keys.liveness()},
                flatten(calls, Long.toString(options.getLivenessLease().toMillis())));
    }

    /** One run of finish.lua: call[0] is the task's provenance key, call[1..11] the outcome's arguments. */
    private CompletableFuture<String> runFinishes(List<String[]> calls) {
        String[] provenanceKeys = new String[calls.size()];
        String[] args = new String[1 + 11 * calls.size()];
        args[0] = eventsMax;
        for (int i = 0; i < calls.size(); i++) {
            String[] call = calls.get(i);
            provenanceKeys[i] = call[0];
            System.arraycopy(call, 1, args, 1 + 11 * i, 11);
        }
        return FINISH.run(redis, keys.coreAnd(provenanceKeys), args);
    }

    /** A read's future, failing with the core's exception for its failure, as a script run's does. */
    private <T> CompletableFuture<T> read(CompletionStage<T> call) {
        return RedisFailures.translated(call, connection.getTimeout());
    }

    /** The leading arguments followed by every call's arguments, in order. */
    private static String[] flatten(List<String[]> calls, String... leading) {
        int n = leading.length;
        for (String[] c : calls) {
            n += c.length;
        }
        String[] args = new String[n];
        System.arraycopy(leading, 0, args, 0, leading.length);
        int at = leading.length;
        for (String[] c : calls) {
            System.arraycopy(c, 0, args, at, c.length);
            at += c.length;
        }
        return args;
    }

    /**
     * One pass of the reaper: takes back up to {@link CoreOptions#getReapBatchSize()} tasks whose
     * ack deadline or task lease passed by the Redis clock. Any number of reapers may run at once;
     * each expired task is taken back exactly once.
     *
     * @return the tasks taken back; {@link RequeueResult#isMore()} says whether to call again now
     */
    public CompletableFuture<RequeueResult> reap() {
        return reap(null);
    }

    /**
     * One reaper pass as {@link #reap()}, on behalf of a master that must hold the leadership
     * lease at {@code leader}'s epoch; otherwise nothing is taken back (an empty result).
     *
     * @param leader the caller's leadership, from {@link #acquireLeadership}; null for no check
     * @return the tasks taken back
     */
    public CompletableFuture<RequeueResult> reap(LeaderStatus leader) {
        return REAP.run(redis, keys.coreAnd(keys.leader()), Integer.toString(options.getReapBatchSize()), eventsMax,
                        leader == null ? "" : leader.getLeaderId(), leader == null ? "" : Long.toString(leader.getEpoch()))
                .thenApply(reply -> Replies.requeue(Replies.parse(reply)));
    }

    /**
     * Acquires the masters' leadership lease if nobody holds it (or its holder let it expire), or
     * renews it if the caller holds it; otherwise reports who does. Leadership changing hands
     * bumps the lease's epoch. Call it well within {@code lease} to keep leadership.
     *
     * @param masterId the calling master
     * @param address  its RPC address (host:port), told to workers that connect to a standby
     * @param lease    how long the lease lasts without renewal
     * @return the leadership as it stands after the call
     */
    public CompletableFuture<LeaderStatus> acquireLeadership(String masterId, String address, Duration lease) {
        return LEADER.run(leadership, keys.coreAnd(keys.leader()), TaskIds.require(masterId, "master id"),
                        Objects.requireNonNull(address, "address"), Long.toString(lease.toMillis()), eventsMax, "")
                .thenApply(reply -> Replies.leader(Replies.parse(reply)));
    }

    /**
     * Reports who holds the masters' leadership lease now, without acquiring or renewing it (it
     * writes nothing): for a master that never leads, which only needs to know where to send
     * workers. The answer's {@link LeaderStatus#isSelf()} is always false; its leader id and
     * address are empty when nobody holds an unexpired lease.
     */
    public CompletableFuture<LeaderStatus> observeLeadership() {
        return LEADER.run(leadership, keys.coreAnd(keys.leader()), "", "", "1", eventsMax, "observe")
                .thenApply(reply -> Replies.leader(Replies.parse(reply)));
    }

    /**
     * Gives the leadership lease up if {@code masterId} holds it, so a standby can take over at
     * once instead of after the lease expires. Safe to call when not the leader.
     */
    public CompletableFuture<LeaderStatus> resignLeadership(String masterId) {
        return LEADER.run(leadership, keys.coreAnd(keys.leader()), TaskIds.require(masterId, "master id"), "", "1",
                        eventsMax, "resign")
                .thenApply(reply -> Replies.leader(Replies.parse(reply)));
    }

    /**
     * Forgets a worker that is gone for good (a retired or scaled-away machine), which otherwise
     * stays DOWN in {@link #listWorkers()} forever and keeps tasks only it could run from being
     * parked. Only a worker whose liveness lease has run out and that holds no task is removed;
     * anything else is answered with what stands in the way, and nothing changes. Should its
     * process come back after all, it registers again on its next heartbeat. Safe to repeat.
     *
     * @param workerId the worker
     * @return what was done
     * @throws IllegalArgumentException (immediately) if {@code workerId} is not a valid worker id
     */
    public CompletableFuture<WorkerRemoval> removeWorker(String workerId) {
        TaskIds.require(workerId, "worker id");
        return REMOVE_WORKER.run(redis, keys.core(), workerId, eventsMax).thenApply(reply -> {
            JsonNode r = Replies.parse(reply);
            return new WorkerRemoval(workerId, WorkerRemovalStatus.valueOf(r.get("r").asText()), Replies.strings(r.get("tasks")),
                    r.path("deadline").asLong(0));
        });
    }

    /** Returns every registered worker with its state derived by the Redis clock. */
    public CompletableFuture<List<WorkerInfo>> listWorkers() {
        return WORKERS.run(redis, keys.core()).thenApply(reply -> {
            List<WorkerInfo> workers = new ArrayList<>();
            for (JsonNode w : Replies.list(Replies.parse(reply).get("workers"))) {
                workers.add(Replies.worker(w));
            }
            return workers;
        });
    }

    // ------------------------------------------------------------------------------------------
    // Events
    // ------------------------------------------------------------------------------------------

    /**
     * Follows the event stream from just after {@code afterId} ("0" for everything kept, "$" for
     * only new events) on a dedicated connection and thread. Each event reaches {@code listener}
     * once, in order; after a connection loss the subscription resumes after the last delivered
     * event, so a listener misses nothing that the stream still holds. When events it had not read
     * were trimmed from the stream meanwhile, it gets a {@link TaskEvent.Kind#GAP} event first (see
     * {@link EventSubscription}).
     *
     * @param afterId  where to start: "0", "$", or the id of an event ({@link TaskEvent#getStreamId()},
     *                 {@link EventSubscription#getLastId()}) to start after
     * @param listener called on the subscription's thread; must not throw
     * @return the subscription; close it to stop
     * @throws IllegalArgumentException if {@code afterId} is none of these
     */
    public EventSubscription subscribe(String afterId, Consumer<TaskEvent> listener) {
        return EventSubscription.start(client, keys.events(), afterId, options.getEventStreamMaxLength(), listener);
    }

    /** Closes the core's Redis connections. Idempotent. Subscriptions are closed separately. */
    @Override
    public void close() {
        renewals.close();
        connection.close();
        leadershipConnection.close();
    }

    /**
     * Checks that {@code json} is one JSON object and nothing else, by reading its tokens without
     * building a tree (on every submission: a tree cost the submitting thread more than the rest of
     * the check).
     */
    static void requireJsonObject(String json, String what) {
        if (json == null) {
            throw new IllegalArgumentException(what + " must be a JSON object, was null");
        }
        if (json.length() > Replies.JSON.getFactory().streamReadConstraints().getMaxStringLength()) {
            // Skipping does not measure strings: read the tree, which refuses one over the limit
            // as every later reader of the spec would.
            requireJsonObjectTree(json, what);
            return;
        }
        try (JsonParser parser = Replies.JSON.getFactory().createParser(json)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException(what + " must be a JSON object, was: " + abbreviate(json));
            }
            parser.skipChildren();
            if (parser.nextToken() != null) {
                throw new IllegalArgumentException(what + " must be one JSON object with nothing after it, was: "
                        + abbreviate(json));
            }
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(what + " is not valid JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("reading a string cannot fail: " + e, e);
        }
    }

    private static void requireJsonObjectTree(String json, String what) {
        try {
            JsonNode node = Replies.JSON.readTree(json);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException(what + " must be a JSON object, was: " + abbreviate(json));
            }
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(what + " is not valid JSON: " + e.getOriginalMessage());
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private static String toJson(Map<String, String> map) {
        try {
            return Replies.JSON.writeValueAsString(map);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

}
