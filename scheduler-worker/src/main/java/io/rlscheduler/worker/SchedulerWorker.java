package io.rlscheduler.worker;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.google.protobuf.MessageLite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.HeartbeatResult;
import io.rlscheduler.core.HeartbeatStatus;
import io.rlscheduler.core.LeaseCore;
import io.rlscheduler.core.RequeueResult;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.SharedClientResources;
import io.rlscheduler.core.TaskDefinition;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerRegistration;
import io.rlscheduler.core.WriteResult;
import io.rlscheduler.core.WriteStatus;
import io.rlscheduler.core.internal.Lifecycle;
import io.rlscheduler.protocol.CancelTask;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.ExecuteTaskAck;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.protocol.MessageType;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.RunningTask;
import io.rlscheduler.protocol.TaskReportStatus;
import io.rlscheduler.protocol.TaskStatusAck;
import io.rlscheduler.protocol.TaskStatusReport;
import io.rlscheduler.worker.internal.Attempt;
import io.rlscheduler.worker.internal.BlockOutput;
import io.rlscheduler.worker.internal.LineBlock;
import io.rlscheduler.worker.internal.LogBuffer;
import io.rlscheduler.worker.internal.MasterLink;
import io.rlscheduler.worker.internal.MetricsCollector;
import io.rlscheduler.worker.internal.ResourceProbe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
 * under a launcher that kills the group if this JVM dies), streams its output lines to the master
 * with sequence numbers (kept until acknowledged, resent after a reconnect), collects its
 * {@code RLS_METRIC} lines, enforces its timeout, stops it on cancel, and records how it ended in
 * Redis before reporting to the master (kept until acknowledged).
 *
 * <p>Leases: every {@code heartbeatInterval} it renews its liveness and its tasks' leases in Redis
 * directly (not through the master), so losing the master does not stop its work. If it cannot
 * renew a task's lease for the task lease minus a stopping margin (kill grace plus two heartbeats,
 * at most half the lease), it stops that task itself (self-fencing), before the lease can expire
 * and the task run elsewhere. The launcher enforces the same limit on its own through keepalives,
 * so a worker JVM that is frozen and cannot act still loses its task's processes in time.
 *
 * <p>Lifecycle as {@link java.util.concurrent.ExecutorService}. Thread-safe.
 */
public final class SchedulerWorker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SchedulerWorker.class);
    private static final ObjectReader PARAMETERS = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .readerFor(new TypeReference<LinkedHashMap<String, Object>>() { });
    /** Longest wait for one answer to the call that records an attempt's end; then it is retried. */
    private static final long FINISH_CALL_TIMEOUT_SECONDS = 10;
    /** First delay before recording an attempt's end is retried; doubles up to the maximum. */
    private static final long FINISH_RETRY_MIN_MILLIS = 100;
    /** Longest delay between retries of recording an attempt's end. */
    private static final long FINISH_RETRY_MAX_MILLIS = 2_000;

    /**
     * The default grace between TERM and KILL.
     *
     * @deprecated use {@link WorkerOptions#DEFAULT_KILL_GRACE}
     */
    @Deprecated
    public static final Duration DEFAULT_KILL_GRACE = WorkerOptions.DEFAULT_KILL_GRACE;
    /** The most bytes of lines in one log batch (a single larger block still goes, alone): 512 KiB. */
    static final int LOG_BATCH_BYTES = 512 * 1024;

    private final WorkerOptions options;
    private final RedisClient client;
    /** The client the worker made itself (on the JVM's shared Lettuce threads); null for a user's client. */
    private final SharedClientResources.OwnedClient ownClient;
    private final String sessionId = "s-" + UUID.randomUUID();
    private final ConcurrentHashMap<String, Attempt> attempts = new ConcurrentHashMap<>();
    private final AtomicLong heartbeatSequence = new AtomicLong();
    private final ResourceProbe probe;
    private final TaskExecutor executor;
    private final RunDirectories runDirectories;
    /** A flush of full log batches is queued on the event loop (so lines do not queue one each). */
    private final AtomicBoolean flushRequested = new AtomicBoolean();
    private final Duration fenceAfter;
    private final Lifecycle lifecycle;
    /** Whether {@link #stopAll()} ran; guarded by this worker's monitor. */
    private boolean stopped;
    private LeaseCore core;
    private MasterLink link;
    private EventLoopGroup group;
    private ScheduledExecutorService timers;
    private ExecutorService taskThreads;
    private WorkerRegistration registration;

    private SchedulerWorker(WorkerOptions options, RedisClient userClient, TaskExecutor userExecutor) {
        this.options = options;
        this.lifecycle = new Lifecycle("worker " + options.getWorkerId());
        this.ownClient = userClient == null ? ownClient(options.getRedisUri().orElseThrow()) : null;
        this.client = ownClient != null ? ownClient.client() : userClient;
        this.probe = new ResourceProbe(options.getNvidiaSmi());
        this.runDirectories = new RunDirectories(options.getRunRoot());
        this.fenceAfter = fenceAfter(options.getCoreOptions(), options.getKillGrace());
        this.executor = userExecutor != null ? userExecutor : PythonTaskExecutor.builder()
                .scriptRoots(options.getScriptRoots()).stateDirectory(options.getStateDirectory())
                .gracePeriod(options.getKillGrace()).keepaliveTimeout(fenceAfter).build();
    }

    /**
     * Returns how long an attempt may go without a lease renewal before it is stopped: the task
     * lease minus a margin for stopping it (the kill grace and two heartbeats), but never less
     * than half the lease. Stopping then ends well before the lease can expire in Redis.
     */
    static Duration fenceAfter(CoreOptions options, Duration killGrace) {
        Duration lease = options.getTaskLease();
        Duration margin = killGrace.plus(options.getHeartbeatInterval().multipliedBy(2));
        Duration half = lease.dividedBy(2);
        return lease.minus(margin.compareTo(half) < 0 ? margin : half);
    }

    /**
     * Creates the worker's own Redis client. While disconnected it rejects commands at once
     * instead of queueing them: a heartbeat must fail now (and count towards self-fencing), not
     * renew a lease minutes later after the worker has already stopped the task.
     */
    private static SharedClientResources.OwnedClient ownClient(RedisURI uri) {
        SharedClientResources.OwnedClient owned = SharedClientResources.newClient(uri);
        owned.client().setOptions(io.lettuce.core.ClientOptions.builder()
                .disconnectedBehavior(io.lettuce.core.ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
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
        return link != null && link.readyChannel() != null;
    }

    /** Returns the reason the last master gave for rejecting this worker, or the empty string. */
    public String getLastRejection() {
        return link == null ? "" : link.getLastRejection();
    }

    /** Returns the ids of the tasks whose attempts are running here. */
    public List<String> getRunningTaskIds() {
        List<String> ids = new ArrayList<>();
        attempts.forEach((id, a) -> {
            if (!a.isEnded()) {
                ids.add(id);
            }
        });
        return ids;
    }

    /**
     * Starts the worker: kills processes left by a previous run of this worker, registers with
     * Redis (taking back tasks a previous session still held), connects to a master. Blocks until
     * registered; the connection is made in the background.
     *
     * @return this worker
     * @throws SchedulerException if Redis cannot be reached
     */
    public synchronized SchedulerWorker start() {
        lifecycle.start();
        try {
            if (executor instanceof PythonTaskExecutor python) {
                int killed = python.killLeftovers();
                if (killed > 0) {
                    log.warn("killed {} process groups left by a previous run of worker {}", killed, options.getWorkerId());
                }
            }
            core = LeaseCore.create(client, options.getCoreOptions());
            List<Integer> gpus = options.getGpuIds().orElseGet(this::detectGpus);
            registration = new WorkerRegistration(options.getWorkerId(), sessionId, options.getLabels(), options.getCpuSlots(),
                    options.getMemoryBytes().orElseGet(ResourceProbe::totalMemoryBytes), gpus);
            RequeueResult taken = core.register(registration).get(30, TimeUnit.SECONDS);
            if (!taken.getRequeued().isEmpty() || !taken.getFailed().isEmpty()) {
                log.warn("tasks of this worker's previous session were taken back: requeued {}, failed {}",
                        taken.getRequeued(), taken.getFailed());
            }
            java.util.concurrent.ScheduledThreadPoolExecutor timerPool = new java.util.concurrent.ScheduledThreadPoolExecutor(1,
                    daemon("rls-worker-timers-" + options.getWorkerId()));
            // A task's timeout is cancelled when it ends: dropped from the queue at once, not kept
            // (with its attempt) until the deadline it will never reach.
            timerPool.setRemoveOnCancelPolicy(true);
            timers = timerPool;
            taskThreads = Executors.newCachedThreadPool(daemon("rls-worker-tasks-" + options.getWorkerId()));
            group = options.getTransport().newGroup(1, "rls-worker-io-" + options.getWorkerId());
            link = new MasterLink(options.getMasters(), options.getTransport(), group, options.getProtocolOptions(), options.getSecret(),
                    options.getWorkerId(), sessionId, options.getLabels(), options.getReconnectMin(), options.getReconnectMax(),
                    options.getCoreOptions().getHeartbeatInterval(), new LinkListener());
            long hb = options.getCoreOptions().getHeartbeatInterval().toMillis();
            timers.scheduleWithFixedDelay(this::heartbeat, hb, hb, TimeUnit.MILLISECONDS);
            long flush = options.getLogFlushInterval().toMillis();
            group.scheduleWithFixedDelay(this::flushLogs, flush, flush, TimeUnit.MILLISECONDS);
            link.start();
            log.info("worker {} (session {}) started: {} CPU slots, GPUs {}, labels {}", options.getWorkerId(), sessionId,
                    options.getCpuSlots(), gpus, options.getLabels());
            return this;
        } catch (Exception e) {
            shutdownNow();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new SchedulerException("worker " + options.getWorkerId() + " failed to start: " + e, true, e);
        }
    }

    private List<Integer> detectGpus() {
        List<Integer> ids = new ArrayList<>();
        for (GpuStatus gpu : probe.gpus()) {
            ids.add(gpu.getIndex());
        }
        return ids;
    }

    // ------------------------------------------------------------------------------------------
    // Messages from the master
    // ------------------------------------------------------------------------------------------

    private final class LinkListener implements MasterLink.Listener {
        @Override
        public void onReady(Channel channel, String masterId) {
            for (Attempt a : attempts.values()) {
                LogBuffer logs = a.getLogs();
                logs.resend();
                if (logs.pending() == 0 && logs.getAckedSequence() > 0) {
                    // Nothing to resend, so no batch would say which lines are gone from here: a
                    // master without them (another master acknowledged them) must learn it before
                    // the report, or it waits for them to end the log.
                    channel.write(LogBatch.newBuilder().setTaskId(logs.getTaskId()).setEpoch(logs.getEpoch())
                            .setAcknowledged(logs.getAckedSequence()).build());
                }
                if (a.getReport() != null) {
                    channel.write(a.getReport());
                }
            }
            channel.flush();
            flushLogs();
        }

        @Override
        public void onMessage(Channel channel, MessageLite msg) {
            if (msg instanceof ExecuteTask task) {
                onExecute(channel, task);
            } else if (msg instanceof CancelTask cancel) {
                Attempt a = attempts.get(cancel.getTaskId());
                if (a != null && a.getLease().getEpoch() == cancel.getEpoch()) {
                    stop(a, StopReason.CANCELLED);
                }
            } else if (msg instanceof LogAck ack) {
                Attempt a = attempts.get(ack.getTaskId());
                if (a != null && a.getLease().getEpoch() == ack.getEpoch()) {
                    a.getLogs().ack(ack.getAckedSequence());
                    if (ack.getResend()) {
                        // The master lacks lines it was sent (a write failed, or it is a new
                        // master without them): everything unacknowledged goes again, now; the
                        // master skips what it has.
                        log.info("master asks to resend the log of task {} after line {}", ack.getTaskId(),
                                ack.getAckedSequence());
                        a.getLogs().resend();
                        flushLogs();
                    } else {
                        forgetIfDelivered(a);
                    }
                }
            } else if (msg instanceof TaskStatusAck ack) {
                Attempt a = attempts.get(ack.getTaskId());
                if (a != null && a.getLease().getEpoch() == ack.getEpoch() && a.getReport() != null) {
                    a.setReport(null);
                    forgetIfDelivered(a);
                }
            } else if (msg instanceof ErrorReply error) {
                Attempt a = attempts.get(error.getTaskId());
                if (a != null && a.getLease().getEpoch() == error.getEpoch()
                        && error.getCode() == ErrorCode.ERROR_CODE_STALE_EPOCH
                        && error.getOffendingType() == MessageType.LOG_BATCH.getCode()) {
                    // The master's log holds a newer attempt of the task: it will never take this
                    // one's lines. Kept, they would stay in memory and go again at every reconnect.
                    log.info("task {} epoch {}: the master's log has moved on to a newer attempt; the {} lines of"
                            + " this one it has not taken are dropped", error.getTaskId(), error.getEpoch(),
                            a.getLogs().pending());
                    a.getLogs().ack(a.getLogs().getLastSequence());
                    forgetIfDelivered(a);
                } else {
                    log.warn("master reported {}: {} (task {} epoch {})", error.getCode(), error.getMessage(),
                            error.getTaskId(), error.getEpoch());
                }
            }
        }

        @Override
        public void onDisconnected(Channel channel) {
            // Attempts go on; their lines and reports wait for the next connection.
        }

        @Override
        public void onWritable(Channel channel) {
            // The socket drained what the last flush could not hand it: send on at once instead
            // of waiting for the next flush tick (which would cap a chatty task's lines/s).
            flushLogs();
        }
    }

    private void onExecute(Channel channel, ExecuteTask task) {
        if (!TaskIds.isValid(task.getTaskId())) {
            channel.writeAndFlush(refusal(task, ErrorCode.ERROR_CODE_INVALID_REQUEST, "invalid task id"));
            return;
        }
        Attempt existing = attempts.get(task.getTaskId());
        if (existing != null && existing.getLease().getEpoch() == task.getEpoch()) {
            channel.writeAndFlush(ExecuteTaskAck.newBuilder().setTaskId(task.getTaskId()).setEpoch(task.getEpoch())
                    .setAccepted(true).build());
            return;
        }
        if (!lifecycle.isRunning()) {
            channel.writeAndFlush(refusal(task, ErrorCode.ERROR_CODE_RESOURCE_UNAVAILABLE, "worker is shutting down"));
            return;
        }
        TaskLease lease = new TaskLease(task.getTaskId(), task.getEpoch());
        // The task lease starts when the ack runs in Redis, not when the attempt is built here
        // (after the ack's round trip, a wait for a task thread and the run directory's set-up):
        // this worker's fence clock starts before the ack is sent, so it never counts from later
        // than the lease does. (The launcher's own keepalive watchdog, the backstop for a frozen
        // JVM, still counts from the process's start: a lag of the launch's set-up, well inside
        // the stopping margin.)
        long ackSentAt = System.nanoTime();
        core.acknowledge(lease, options.getWorkerId(), sessionId).whenCompleteAsync((result, error) -> {
            if (error != null) {
                log.warn("cannot confirm task {} in Redis: {}", task.getTaskId(), error.toString());
                send(refusal(task, ErrorCode.ERROR_CODE_INTERNAL, "cannot reach Redis: " + error));
            } else if (!result.isAccepted()) {
                log.info("task {} epoch {} is no longer ours: {}", task.getTaskId(), task.getEpoch(), result.getStatus());
                send(refusal(task, ErrorCode.ERROR_CODE_STALE_EPOCH, result.getStatus().toString()));
            } else {
                launch(task, ackSentAt);
            }
        }, taskThreads);
    }

    private static ExecuteTaskAck refusal(ExecuteTask task, ErrorCode code, String message) {
        return ExecuteTaskAck.newBuilder().setTaskId(task.getTaskId()).setEpoch(task.getEpoch()).setAccepted(false)
                .setErrorCode(code).setMessage(message).build();
    }

    private void send(MessageLite message) {
        Channel channel = link.readyChannel();
        if (channel != null) {
            channel.writeAndFlush(message);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Attempts
    // ------------------------------------------------------------------------------------------

    private void launch(ExecuteTask task, long leaseStartNanos) {
        Attempt attempt = null;
        TaskExecution execution;
        try {
            String json = task.getParametersJson();
            Map<String, Object> parameters = json.isEmpty() || json.equals("{}") ? new LinkedHashMap<>()
                    : PARAMETERS.readValue(json);
            RunDirectories.Attempt dirs = executor.usesRunDirectories()
                    ? runDirectories.prepare(task.getTaskId(), task.getAttempt(), parameters)
                    : runDirectories.locate(task.getTaskId(), task.getAttempt());
            attempt = new Attempt(task, new LogBuffer(task.getTaskId(), task.getEpoch(), options.getMaxBufferedLines()),
                    new MetricsCollector(1000), dirs.getRunDir());
            attempt.renewed(leaseStartNanos);
            track(attempt);
            TaskContext context = new TaskContext(task.getTaskId(), task.getEpoch(), task.getAttempt(), task.getTraceId(),
                    task.getScript(), task.getArgumentsList(), parameters, task.getResources().getGpuIdsList(),
                    task.getEnvironmentMap(), dirs.getRunDir(), dirs.getCheckpointDir(), dirs.getParametersFile(),
                    task.getTimeoutMs() > 0 ? Duration.ofMillis(task.getTimeoutMs()) : null);
            Attempt running = attempt;
            execution = executor.start(context, new AttemptOutput(running));
        } catch (IOException | RuntimeException | Error e) {
            // An Error too (an in-JVM executor's NoClassDefFoundError, an OutOfMemoryError while
            // starting a reader thread): left uncaught, it would leave the attempt tracked and
            // never ended, its lease renewed by every heartbeat, the task RUNNING for good.
            if (e instanceof Error) {
                log.error("task {} could not be started: the executor threw", task.getTaskId(), e);
            } else {
                log.warn("task {} could not be started: {}", task.getTaskId(), e.getMessage());
            }
            if (attempt == null) {
                attempt = new Attempt(task, new LogBuffer(task.getTaskId(), task.getEpoch(), options.getMaxBufferedLines()),
                        new MetricsCollector(1000), options.getRunRoot().resolve(task.getTaskId()));
                track(attempt);
            }
            output(attempt, LogStream.LOG_STREAM_STDERR, "rl-scheduler: task could not be started: " + e.getMessage());
            send(refusal(task, e instanceof Error ? ErrorCode.ERROR_CODE_INTERNAL : ErrorCode.ERROR_CODE_INVALID_REQUEST,
                    String.valueOf(e.getMessage())));
            ended(attempt, TaskState.FAILED, null, "launch failed: " + e.getMessage(),
                    TaskReportStatus.TASK_REPORT_STATUS_LAUNCH_FAILED);
            return;
        }
        Attempt started = attempt;
        started.setExecution(execution);
        send(ExecuteTaskAck.newBuilder().setTaskId(task.getTaskId()).setEpoch(task.getEpoch()).setAccepted(true).build());
        if (log.isDebugEnabled()) {
            log.debug("task {} attempt {} started (epoch {}, GPUs {})", task.getTaskId(), task.getAttempt(),
                    task.getEpoch(), task.getResources().getGpuIdsList());
        }
        if (task.getTimeoutMs() > 0) {
            started.setTimeout(timers.schedule(() -> stop(started, StopReason.TIMED_OUT), task.getTimeoutMs(),
                    TimeUnit.MILLISECONDS));
        }
        if (started.getRequestedStop() != StopReason.NONE) {
            execution.stop(started.getRequestedStop(), options.getKillGrace());
        }
        CompletableFuture<ExecutionResult> completion = execution.completion();
        if (completion.isDone()) {
            // Already over (an executor that runs its work inline): exited() does not block, so
            // it runs here rather than on yet another task thread.
            completion.thenAccept(result -> exited(started, result)).exceptionally(e -> exitFailed(started, e));
        } else {
            // Not on the thread that completes the execution: an executor's own thread (the
            // process supervisor's, for PythonTaskExecutor) is not ours to hold up.
            completion.thenAcceptAsync(result -> exited(started, result), taskThreads)
                    .exceptionally(e -> exitFailed(started, e));
        }
    }

    private void track(Attempt attempt) {
        Attempt previous = attempts.put(attempt.getLease().getTaskId(), attempt);
        if (previous != null && !previous.isEnded()) {
            stop(previous, StopReason.FENCED);
        }
    }

    private void output(Attempt attempt, LogStream stream, String text) {
        output(attempt, stream, LineBlock.of(text));
    }

    /**
     * Takes an attempt's output lines: notes the launcher's fence line and metric lines, keeps
     * the lines until acknowledged, and has them sent at once when a full batch waits.
     */
    private void output(Attempt attempt, LogStream stream, LineBlock lines) {
        if (attempt.getLogs().isSealed()) {
            // After the attempt's end: the buffer drops the lines; its metrics must not change either.
            try {
                attempt.getLogs().add(stream, lines);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        for (int i = 0, n = lines.lineCount(); i < n; i++) {
            if (stream == LogStream.LOG_STREAM_STDERR && lines.startsWith(i, PythonTaskExecutor.KEEPALIVE_FENCE_LINE)) {
                // The launcher stopped the task itself: keepalives stopped, so the lease may lapse.
                attempt.setLauncherFenced();
            } else if (lines.startsWith(i, MetricsCollector.PREFIX)) {
                attempt.getMetrics().offer(lines.text(i));
            }
        }
        try {
            LogBuffer logs = attempt.getLogs();
            long unsent = logs.add(stream, lines);
            if ((unsent >= options.getLogBatchLines() || logs.unsentBytes() >= LOG_BATCH_BYTES) && canSendLogs()
                    && flushRequested.compareAndSet(false, true)) {
                // A full batch waits: send it now rather than at the next tick.
                group.execute(() -> {
                    flushRequested.set(false);
                    flushLogs();
                });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** An attempt's output sink: blocks as the process runner reads them, single lines from other executors. */
    private final class AttemptOutput implements BlockOutput {
        private final Attempt attempt;

        AttemptOutput(Attempt attempt) {
            this.attempt = attempt;
        }

        @Override
        public void line(LogStream stream, String text) {
            output(attempt, stream, text);
        }

        @Override
        public void lines(LogStream stream, LineBlock lines) {
            output(attempt, stream, lines);
        }
    }

    private void stop(Attempt attempt, StopReason reason) {
        if (attempt.requestStop(reason)) {
            log.info("stopping task {} epoch {}: {}", attempt.getLease().getTaskId(), attempt.getLease().getEpoch(), reason);
            TaskExecution execution = attempt.getExecution();
            if (execution != null) {
                execution.stop(reason, options.getKillGrace());
            }
        }
    }

    /**
     * The attempt's completion failed (an executor whose future completed exceptionally) or
     * handling its end threw. An attempt that is not marked ended would be reported as held at
     * every heartbeat and keep its lease forever, so it is ended as FAILED here.
     */
    private Void exitFailed(Attempt attempt, Throwable e) {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        log.error("task {} epoch {}: the attempt's end could not be handled normally", attempt.getLease().getTaskId(),
                attempt.getLease().getEpoch(), cause);
        if (!attempt.isEnded()) {
            try {
                ended(attempt, TaskState.FAILED, null, "the executor failed: " + cause,
                        TaskReportStatus.TASK_REPORT_STATUS_FAILED);
            } catch (RuntimeException again) {
                log.error("task {} epoch {}: could not record the failure either", attempt.getLease().getTaskId(),
                        attempt.getLease().getEpoch(), again);
            }
        }
        return null;
    }

    private void exited(Attempt attempt, ExecutionResult result) {
        if (attempt.getTimeout() != null) {
            attempt.getTimeout().cancel(false);
        }
        StopReason reason = result.getStopReason();
        if (reason == StopReason.NONE && (attempt.isLauncherFenced()
                || System.nanoTime() - attempt.getLastRenewNanos() > fenceAfter.toNanos())) {
            // The lease went unrenewed too long (this JVM was frozen or starved, or Redis was
            // unreachable); the launcher stopped the task on its own. That is fencing, not the
            // script failing. The launcher's own line says so; the time since the last renewal
            // alone is not enough: a renewal may succeed after the launcher gave up and before
            // the exit is handled here (seen in the chaos run after a Redis restart).
            reason = StopReason.FENCED;
        }
        if (reason == StopReason.FENCED || reason == StopReason.SHUTDOWN) {
            // Not ours to record: the lease is lost (or will lapse), and the task runs again elsewhere.
            ended(attempt, null, result.getExitCode(), reason.toString().toLowerCase(), TaskReportStatus.TASK_REPORT_STATUS_FENCED);
            return;
        }
        TaskState outcome;
        TaskReportStatus status;
        String error = result.getError();
        if (reason == StopReason.CANCELLED) {
            outcome = TaskState.CANCELLED;
            status = TaskReportStatus.TASK_REPORT_STATUS_CANCELLED;
            error = error.isEmpty() ? "cancelled" : error;
        } else if (reason == StopReason.TIMED_OUT) {
            outcome = TaskState.TIMED_OUT;
            status = TaskReportStatus.TASK_REPORT_STATUS_TIMED_OUT;
            error = "ran past its timeout of " + Duration.ofMillis(attempt.getTask().getTimeoutMs());
        } else if (result.getExitCode() == 0 && error.isEmpty()) {
            outcome = TaskState.SUCCEEDED;
            status = TaskReportStatus.TASK_REPORT_STATUS_SUCCEEDED;
        } else {
            outcome = TaskState.FAILED;
            status = TaskReportStatus.TASK_REPORT_STATUS_FAILED;
            if (error.isEmpty()) {
                error = result.getExitCode() > 128 ? "killed by signal " + (result.getExitCode() - 128)
                        : "exited with code " + result.getExitCode();
            }
        }
        ended(attempt, outcome, result.getExitCode(), error, status);
    }

    /**
     * Records the outcome in Redis (unless fenced; see {@link FinishRecorder}), then reports it to
     * the master. Returns at once: no thread waits for Redis.
     */
    private void ended(Attempt attempt, TaskState outcome, Integer exitCode, String error, TaskReportStatus status) {
        // The end states the attempt's last line: no line may be added after it is taken, even by
        // a reader that was blocked in the buffer while the attempt ended (OutputPump#detach).
        attempt.getLogs().seal();
        if (outcome == null) {
            report(attempt, exitCode, error, status);
        } else {
            new FinishRecorder(attempt, outcome, exitCode, error, status).call();
        }
    }

    /**
     * Records how an attempt ended in Redis and then reports it ({@link #report}): in that order,
     * so the master never hears of an end that Redis does not hold. A call that fails or is not
     * answered within {@value #FINISH_CALL_TIMEOUT_SECONDS} s is retried after a pause that
     * doubles from {@value #FINISH_RETRY_MIN_MILLIS} ms to {@value #FINISH_RETRY_MAX_MILLIS} ms, for
     * as long as the task lease from the attempt's end; after that, or if the worker stops
     * meanwhile, the attempt is reported FENCED (its lease lapses and the reaper takes the task
     * back). A repeated call is harmless: Redis answers a replay DUPLICATE. No thread waits: the
     * calls are asynchronous and the pauses are timers on the worker's event loop, which (unlike
     * the timer thread, whose heartbeat waits for Redis) is never blocked.
     */
    private final class FinishRecorder {
        private final Attempt attempt;
        private final TaskState outcome;
        private final Integer exitCode;
        private final String error;
        private final TaskReportStatus status;
        private final long deadline = System.nanoTime() + options.getCoreOptions().getTaskLease().toNanos();
        private long pauseMillis = FINISH_RETRY_MIN_MILLIS;

        FinishRecorder(Attempt attempt, TaskState outcome, Integer exitCode, String error, TaskReportStatus status) {
            this.attempt = attempt;
            this.outcome = outcome;
            this.exitCode = exitCode;
            this.error = error;
            this.status = status;
        }

        void call() {
            CompletableFuture<WriteResult> call;
            try {
                call = core.finish(attempt.getLease(), options.getWorkerId(), sessionId, outcome, exitCode, error,
                        attempt.getMetrics().latestJson(), attempt.getRunDir().toString(),
                        attempt.getLogs().getLastSequence());
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            call.orTimeout(FINISH_CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).whenComplete(this::answered);
        }

        private void answered(WriteResult written, Throwable failure) {
            if (failure == null) {
                recorded(written);
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            String taskId = attempt.getLease().getTaskId();
            if (System.nanoTime() > deadline) {
                log.error("could not record the end of task {} in Redis: {}", taskId, cause.toString());
                recorded(null);
                return;
            }
            log.warn("recording the end of task {} failed ({}); retrying in {} ms", taskId, cause.toString(), pauseMillis);
            long pause = pauseMillis;
            pauseMillis = Math.min(pauseMillis * 2, FINISH_RETRY_MAX_MILLIS);
            try {
                group.schedule(this::call, pause, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                log.warn("worker {} is stopping: the end of task {} was not recorded in Redis", options.getWorkerId(), taskId);
                recorded(null);
            }
        }

        private void recorded(WriteResult written) {
            TaskReportStatus reported = status;
            if (written == null || !written.isAccepted()) {
                log.warn("task {} epoch {} ended {} but Redis answered {}: the attempt was fenced",
                        attempt.getLease().getTaskId(), attempt.getLease().getEpoch(), outcome,
                        written == null ? "nothing" : written.getStatus());
                reported = TaskReportStatus.TASK_REPORT_STATUS_FENCED;
            }
            report(attempt, exitCode, error, reported);
        }
    }

    /**
     * Marks the attempt ended and queues its report for the master (kept until acknowledged);
     * sends its last output lines and the report now if connected. Runs on the event loop.
     */
    private void report(Attempt attempt, Integer exitCode, String error, TaskReportStatus reported) {
        Runnable report = () -> {
            TaskStatusReport.Builder msg = TaskStatusReport.newBuilder()
                    .setTaskId(attempt.getLease().getTaskId()).setEpoch(attempt.getLease().getEpoch())
                    .setAttempt(attempt.getTask().getAttempt()).setStatus(reported)
                    .setErrorMessage(error == null ? "" : error).setFinalMetricsJson(attempt.getMetrics().latestJson())
                    .setLastLogSequence(attempt.getLogs().getLastSequence()).setEndedAtUnixMs(System.currentTimeMillis())
                    .setRunDir(attempt.getRunDir().toString());
            if (exitCode != null) {
                msg.setHasExitCode(true).setExitCode(exitCode);
            }
            attempt.setReport(msg.build());
            attempt.setEnded();
            attempt.getLogs().close();
            long dropped = attempt.getLogs().droppedAfterSeal();
            if (dropped > 0) {
                log.warn("task {} attempt {}: {} output lines came after the attempt ended and were dropped",
                        attempt.getLease().getTaskId(), attempt.getTask().getAttempt(), dropped);
            }
            if (reported != TaskReportStatus.TASK_REPORT_STATUS_SUCCEEDED) {
                log.info("task {} attempt {} ended: {} (exit {})", attempt.getLease().getTaskId(),
                        attempt.getTask().getAttempt(), reported, exitCode);
            } else if (log.isDebugEnabled()) {
                log.debug("task {} attempt {} ended: {} (exit {})", attempt.getLease().getTaskId(),
                        attempt.getTask().getAttempt(), reported, exitCode);
            }
            Channel channel = link.readyChannel();
            if (channel != null) {
                // Its last lines first: the master can then end its log as soon as the report comes.
                writeLogs(channel, attempt);
                channel.writeAndFlush(attempt.getReport());
            }
        };
        if (group.next().inEventLoop()) {
            report.run();
            return;
        }
        try {
            group.execute(report);
        } catch (RejectedExecutionException stopping) {
            report.run(); // the worker is stopping: no channel to write to, but the attempt ends
        }
    }

    private void forgetIfDelivered(Attempt attempt) {
        if (attempt.isEnded() && attempt.getReport() == null && attempt.getLogs().isFullyAcked()) {
            attempts.remove(attempt.getLease().getTaskId(), attempt);
        }
    }

    /**
     * Whether a flush now could send anything: a ready channel that takes writes. While not (a
     * master failover, a slow socket) full batches wait for the tick or for the channel to drain,
     * instead of each new line queueing a flush that cannot send.
     */
    private boolean canSendLogs() {
        Channel channel = link == null ? null : link.readyChannel();
        return channel != null && channel.isWritable();
    }

    /**
     * Sends every attempt's unsent lines while the channel takes writes. Runs on the channel's
     * event loop only, so batches leave in sequence order whoever asked for the flush.
     */
    private void flushLogs() {
        Channel channel = link == null ? null : link.readyChannel();
        if (channel == null) {
            return;
        }
        if (!channel.eventLoop().inEventLoop()) {
            channel.eventLoop().execute(this::flushLogs);
            return;
        }
        boolean wrote = false;
        for (Attempt a : attempts.values()) {
            wrote |= writeLogs(channel, a);
        }
        if (wrote) {
            channel.flush();
        }
    }

    /** Writes the attempt's lines not yet sent on this channel, while it is writable; does not flush. */
    private boolean writeLogs(Channel channel, Attempt attempt) {
        LogBuffer logs = attempt.getLogs();
        boolean wrote = false;
        while (channel.isWritable()) {
            List<LogChunk> batch = logs.nextBatch(options.getLogBatchLines(), LOG_BATCH_BYTES);
            if (batch.isEmpty()) {
                break;
            }
            // acknowledged: what this worker can no longer resend; a master without those lines goes on after them.
            channel.write(LogBatch.newBuilder().setTaskId(logs.getTaskId()).setEpoch(logs.getEpoch())
                    .setAcknowledged(logs.getAckedSequence()).addAllChunks(batch).build());
            wrote = true;
        }
        return wrote;
    }

    // ------------------------------------------------------------------------------------------
    // Leases
    // ------------------------------------------------------------------------------------------

    private void heartbeat() {
        try {
            heartbeatOnce();
        } catch (RuntimeException | Error e) {
            // Thrown out of a scheduled task, it would cancel every later heartbeat, silently.
            log.error("worker {}: a heartbeat failed; the next one comes as scheduled", options.getWorkerId(), e);
        }
    }

    private void heartbeatOnce() {
        List<Attempt> held = new ArrayList<>();
        List<TaskLease> leases = new ArrayList<>();
        for (Attempt a : attempts.values()) {
            if (!a.isEnded()) {
                held.add(a);
                leases.add(a.getLease());
            }
        }
        long sentAt = System.nanoTime();
        try {
            HeartbeatResult result = core.heartbeat(options.getWorkerId(), sessionId, leases).get(
                    options.getCoreOptions().getHeartbeatInterval().toMillis() * 2, TimeUnit.MILLISECONDS);
            if (result.getStatus() == HeartbeatStatus.OK) {
                for (Attempt a : held) {
                    TaskLease lease = a.getLease();
                    if (result.getRevokedTasks().contains(lease)) {
                        stop(a, StopReason.FENCED);
                    } else {
                        a.renewed(sentAt);
                        TaskExecution execution = a.getExecution();
                        if (execution != null) {
                            execution.keepAlive();
                        }
                    }
                    if (result.getCancelRequested().contains(lease)) {
                        stop(a, StopReason.CANCELLED);
                    }
                }
            } else if (result.getStatus() == HeartbeatStatus.UNKNOWN_WORKER) {
                log.warn("Redis does not know worker {}; registering again", options.getWorkerId());
                core.register(registration);
            } else {
                log.error("another process registered worker id {}; stopping this worker's tasks", options.getWorkerId());
                held.forEach(a -> stop(a, StopReason.FENCED));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("heartbeat to Redis failed: {}", e.toString());
        }
        selfFence();
        sendHeartbeat(held);
    }

    /** Stops every attempt whose lease this worker could not renew for {@link #fenceAfter}. */
    private void selfFence() {
        long limit = fenceAfter.toNanos();
        long now = System.nanoTime();
        for (Attempt a : attempts.values()) {
            if (!a.isEnded() && now - a.getLastRenewNanos() > limit) {
                log.warn("task {} epoch {}: lease not renewed for {} ms; stopping it before the lease can expire",
                        a.getLease().getTaskId(), a.getLease().getEpoch(), TimeUnit.NANOSECONDS.toMillis(now - a.getLastRenewNanos()));
                stop(a, StopReason.FENCED);
            }
        }
    }

    private void sendHeartbeat(List<Attempt> held) {
        Channel channel = link == null ? null : link.readyChannel();
        if (channel == null) {
            return;
        }
        Heartbeat.Builder hb = Heartbeat.newBuilder().setWorkerId(options.getWorkerId()).setSessionId(sessionId)
                .setSequence(heartbeatSequence.incrementAndGet()).setSentAtUnixMs(System.currentTimeMillis())
                .setResources(probe.sample(options.getCpuSlots()));
        for (Attempt a : held) {
            hb.addRunningTasks(RunningTask.newBuilder().setTaskId(a.getLease().getTaskId()).setEpoch(a.getLease().getEpoch())
                    .setAttempt(a.getTask().getAttempt()).setLastLogSequence(a.getLogs().getLastSequence()));
        }
        channel.writeAndFlush(hb.build());
    }

    // ------------------------------------------------------------------------------------------
    // Lifecycle
    // ------------------------------------------------------------------------------------------

    /**
     * Stops taking tasks and lets the running attempts finish: each ends by itself, its end is
     * recorded in Redis and its report gets up to 10 s to reach a master; then the worker stops.
     * Nothing is killed. Idempotent; returns at once (see {@link #awaitTermination}).
     */
    public void shutdown() {
        switch (lifecycle.beginStop()) {
            case NEVER_STARTED -> releaseUnstarted();
            case BEGUN -> lifecycle.stopInBackground(stopperName(), () -> {
                try {
                    for (Attempt a : attempts.values()) {
                        TaskExecution e = a.getExecution();
                        if (e != null) {
                            e.completion().join();
                        }
                    }
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (attempts.values().stream().anyMatch(a -> !a.isEnded() || a.getReport() != null)
                            && System.nanoTime() < deadline) {
                        Thread.sleep(50); // shutdown's own pacing while reports drain
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

    /**
     * Stops every running attempt (TERM to its process group, KILL after the kill grace) and then
     * the worker, waiting for the attempts up to the kill grace plus 10 s. The stopped attempts'
     * ends are not recorded: their leases lapse and the reaper re-queues the tasks. Also cuts a
     * {@link #shutdown()} in progress short. Idempotent; returns at once (see
     * {@link #awaitTermination}).
     */
    public void shutdownNow() {
        if (lifecycle.beginStop() == Lifecycle.Stop.NEVER_STARTED) {
            releaseUnstarted();
            return;
        }
        if (lifecycle.isTerminated()) {
            return;
        }
        attempts.values().forEach(a -> stop(a, StopReason.SHUTDOWN));
        lifecycle.stopInBackground(stopperName(), () -> {
            long deadline = System.nanoTime() + options.getKillGrace().toNanos() + TimeUnit.SECONDS.toNanos(10);
            for (Attempt a : attempts.values()) {
                TaskExecution e = a.getExecution();
                if (e != null) {
                    try {
                        e.completion().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    } catch (Exception ignored) {
                        // bounded wait; stopAll goes on
                    }
                }
            }
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

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicLong n = new AtomicLong();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
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

        private Builder() {
        }

        /** Replaces every setting with those of {@code options}; later setters change the copy. */
        public Builder options(WorkerOptions options) {
            this.options = options.mutate();
            return this;
        }

        /** Sets the masters to connect to, as "host:port", tried in turn. Required. */
        public Builder masters(String... addresses) {
            options.masters(addresses);
            return this;
        }

        /** Sets the Redis server (the worker creates and owns its client); replaces a client given before. */
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

        /** Sets the worker id: stable for the machine (see {@link TaskIds}). Required. */
        public Builder workerId(String id) {
            options.workerId(id);
            return this;
        }

        /** Sets the shared secret; at least 16 bytes. Required. */
        public Builder secret(byte[] secret) {
            options.secret(secret);
            return this;
        }

        /** Sets the shared secret from a string (its UTF-8 bytes). */
        public Builder secret(String secret) {
            options.secret(secret);
            return this;
        }

        /** Sets the GPU ids this worker offers, distinct, each 0 to 1023; default those nvidia-smi reports (none without it). */
        public Builder gpuIds(Integer... ids) {
            options.gpuIds(ids);
            return this;
        }

        /** Sets the GPU ids this worker offers, distinct, each 0 to 1023. */
        public Builder gpuIds(List<Integer> ids) {
            options.gpuIds(ids);
            return this;
        }

        /** Sets the CPU slots offered, 1 or more; default the number of processors. */
        public Builder cpuSlots(int slots) {
            options.cpuSlots(slots);
            return this;
        }

        /** Sets the memory offered in bytes, 0 to 2^46; default the machine's physical memory. */
        public Builder memoryBytes(long bytes) {
            options.memoryBytes(bytes);
            return this;
        }

        /** Sets the labels task selectors match against, keys and values 1 to 63 of [A-Za-z0-9._/-]; default none. */
        public Builder labels(Map<String, String> labels) {
            options.labels(labels);
            return this;
        }

        /** Sets the directories scripts must resolve inside; default "scripts". */
        public Builder scriptRoots(Path... roots) {
            options.scriptRoots(roots);
            return this;
        }

        /** Sets the root of run directories; default "runs" (see {@link WorkerOptions.Builder#runRoot}). */
        public Builder runRoot(Path root) {
            options.runRoot(root);
            return this;
        }

        /** Sets the worker's state directory (launcher, process-group ids); default {@code <runRoot>/.worker/<workerId>}. */
        public Builder stateDirectory(Path dir) {
            options.stateDirectory(dir);
            return this;
        }

        /** Sets how tasks run; default a {@link PythonTaskExecutor} over the script roots. */
        public Builder executor(TaskExecutor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** Sets the lease core settings; must equal the master's (namespace, leases). */
        public Builder coreOptions(CoreOptions options) {
            this.options.coreOptions(options);
            return this;
        }

        /** Sets the grace between TERM and KILL when a task is stopped, 0 to 1 h; default 10 s. */
        public Builder killGrace(Duration grace) {
            options.killGrace(grace);
            return this;
        }

        /** Sets the first and the longest reconnect delay, each 1 ms to 1 h, min &lt;= max; defaults 100 ms and 10 s. */
        public Builder reconnectBackoff(Duration min, Duration max) {
            options.reconnectBackoff(min, max);
            return this;
        }

        /** Sets the most lines per log batch, 1 to 100,000; default 1,000 (see {@link WorkerOptions.Builder#logBatchLines}). */
        public Builder logBatchLines(int lines) {
            options.logBatchLines(lines);
            return this;
        }

        /** Sets the period of log batches, 1 ms to 1 h; default 50 ms (see {@link WorkerOptions.Builder#logFlushInterval}). */
        public Builder logFlushInterval(Duration interval) {
            options.logFlushInterval(interval);
            return this;
        }

        /** Sets the most unacknowledged lines kept per attempt before its output is slowed, at least 100; default 100,000. */
        public Builder maxBufferedLines(int lines) {
            options.maxBufferedLines(lines);
            return this;
        }

        /** Sets the nvidia-smi command (name on the PATH, or a path); default "nvidia-smi". */
        public Builder nvidiaSmi(String command) {
            options.nvidiaSmi(command);
            return this;
        }

        /** Sets the socket transport; default epoll where available, else NIO. */
        public Builder transport(NettyTransport transport) {
            options.transport(transport);
            return this;
        }

        /** Sets the codec settings; default {@link ProtocolOptions#defaults()}. */
        public Builder protocolOptions(ProtocolOptions options) {
            this.options.protocolOptions(options);
            return this;
        }

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
            return new SchedulerWorker(built, client, executor);
        }
    }
}
