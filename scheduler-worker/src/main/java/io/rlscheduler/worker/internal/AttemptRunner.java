package io.rlscheduler.worker.internal;

import io.rlscheduler.core.internal.MetricLines;
import io.rlscheduler.core.internal.Json;
import io.netty.channel.Channel;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.ExecuteTaskAck;
import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.PythonTaskExecutor;
import io.rlscheduler.worker.RunDirectories;
import io.rlscheduler.worker.StopReason;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskExecutor;
import io.rlscheduler.worker.internal.artifacts.CheckpointCommitter;
import io.rlscheduler.worker.internal.artifacts.CheckpointLine;
import io.rlscheduler.worker.internal.artifacts.WorkerArtifacts;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of each attempt on this worker: takes in an {@code ExecuteTask} (checks it,
 * acknowledges it in Redis fenced by its epoch, prepares its directories and launches it with the
 * {@link TaskExecutor}), takes its output lines (the launcher's fence line, metric lines, the log
 * buffer), stops it when asked (cancel, timeout, fencing, shutdown), and at its end classifies the
 * outcome ({@link AttemptOutcome}) and has it recorded in Redis ({@link EndRecorder}), whose
 * event tells the masters. Thread-safe; never blocks the event loop.
 */
public final class AttemptRunner {

    private static final Logger log = LoggerFactory.getLogger(AttemptRunner.class);
    /** The most metric objects kept in each attempt's series. */
    private static final int METRIC_SERIES_LIMIT = 1000;

    private final WorkerRuntime runtime;
    private final Attempts attempts;
    private final TaskExecutor executor;
    private final RunDirectories runDirectories;
    private final LogShipper shipper;
    private final EndRecorder recorder;
    private final Duration fenceAfter;
    private final BooleanSupplier accepting;
    private final WorkerArtifacts artifacts;

    /**
     * @param fenceAfter how long an attempt may go without a lease renewal (see {@link LeaseKeeper#fenceAfter})
     * @param accepting  whether the worker takes new attempts (false once it is shutting down)
     * @param artifacts  the checkpoint committer and restorer, or null where the worker has no artifact store
     */
    public AttemptRunner(WorkerRuntime runtime, Attempts attempts, TaskExecutor executor, RunDirectories runDirectories,
                         LogShipper shipper, EndRecorder recorder, Duration fenceAfter,
                         BooleanSupplier accepting, WorkerArtifacts artifacts) {
        this.runtime = runtime;
        this.attempts = attempts;
        this.executor = executor;
        this.runDirectories = runDirectories;
        this.shipper = shipper;
        this.recorder = recorder;
        this.fenceAfter = fenceAfter;
        this.accepting = accepting;
        this.artifacts = artifacts;
    }

    // ------------------------------------------------------------------------------------------
    // Intake and launch
    // ------------------------------------------------------------------------------------------

    /** Takes in a task the master sent on {@code channel}. On the event loop; does not block. */
    public void execute(Channel channel, ExecuteTask task) {
        if (!TaskIds.isValid(task.getTaskId())) {
            channel.writeAndFlush(refusal(task, ErrorCode.ERROR_CODE_INVALID_REQUEST, "invalid task id"));
            return;
        }
        if (attempts.find(task.getTaskId(), task.getEpoch()) != null) {
            channel.writeAndFlush(accepted(task));
            return;
        }
        if (!accepting.getAsBoolean()) {
            channel.writeAndFlush(refusal(task, ErrorCode.ERROR_CODE_RESOURCE_UNAVAILABLE, "worker is shutting down"));
            return;
        }
        TaskLease lease = new TaskLease(task.getTaskId(), task.getEpoch());
        // The task lease starts when the ack runs in Redis, not when the attempt is built here
        // (after the ack's round trip, a wait for a task thread and the run directory's set-up):
        // this worker's fence clock starts before the ack is sent, so it never counts from later
        // than the lease does. The launcher's own keepalive watchdog, the backstop for a frozen
        // JVM, counts from the process's start: a lag of the launch's set-up, well inside the
        // stopping margin.
        long ackSentAt = System.nanoTime();
        runtime.core().acknowledge(lease, runtime.workerId(), runtime.sessionId()).whenCompleteAsync((result, error) -> {
            if (error != null) {
                log.warn("cannot confirm task {} in Redis: {}", task.getTaskId(), error.toString());
                runtime.link().send(refusal(task, ErrorCode.ERROR_CODE_INTERNAL, "cannot reach Redis: " + error));
            } else if (!result.isAccepted()) {
                log.info("task {} epoch {} is no longer ours: {}", task.getTaskId(), task.getEpoch(), result.getStatus());
                runtime.link().send(refusal(task, ErrorCode.ERROR_CODE_STALE_EPOCH, result.getStatus().toString()));
            } else {
                launch(task, ackSentAt);
            }
        }, runtime.taskThreads());
    }

    private static ExecuteTaskAck accepted(ExecuteTask task) {
        return ExecuteTaskAck.newBuilder().setTaskId(task.getTaskId()).setEpoch(task.getEpoch()).setAccepted(true).build();
    }

    private static ExecuteTaskAck refusal(ExecuteTask task, ErrorCode code, String message) {
        return ExecuteTaskAck.newBuilder().setTaskId(task.getTaskId()).setEpoch(task.getEpoch()).setAccepted(false)
                .setErrorCode(code).setMessage(message).build();
    }

    private Attempt newAttempt(ExecuteTask task, Path runDir) {
        return new Attempt(task, new LogBuffer(task.getTaskId(), task.getEpoch(), runtime.options().getMaxBufferedLines()),
                new MetricsCollector(METRIC_SERIES_LIMIT), runDir);
    }

    /** Prepares and starts an attempt acknowledged in Redis; on a task thread. */
    private void launch(ExecuteTask task, long leaseStartNanos) {
        Attempt attempt = null;
        TaskExecution execution;
        try {
            String json = task.getParametersJson();
            Map<String, Object> parameters = json.isEmpty() || json.equals("{}") ? new LinkedHashMap<>()
                    : Json.exactMap(json);
            RunDirectories.Attempt dirs = executor.usesRunDirectories()
                    ? runDirectories.prepare(task.getTaskId(), task.getAttempt(), parameters)
                    : runDirectories.locate(task.getTaskId(), task.getAttempt());
            attempt = newAttempt(task, dirs.getRunDir());
            attempt.renewed(leaseStartNanos);
            track(attempt);
            if (artifacts != null && executor.usesRunDirectories()) {
                resume(attempt, dirs.getCheckpointDir());
            }
            TaskContext context = new TaskContext(task.getTaskId(), task.getEpoch(), task.getAttempt(), task.getTraceId(),
                    task.getScript(), task.getArgumentsList(), parameters, task.getResources().getGpuIdsList(),
                    task.getEnvironmentMap(), dirs.getRunDir(), dirs.getCheckpointDir(), dirs.getParametersFile(),
                    task.getTimeoutMs() > 0 ? Duration.ofMillis(task.getTimeoutMs()) : null);
            execution = executor.start(context, new AttemptOutput(attempt));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.info("task {} was not started: the worker is stopping", task.getTaskId());
            return;
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
                attempt = newAttempt(task, runtime.options().getRunRoot().resolve(task.getTaskId()));
                track(attempt);
            }
            output(attempt, LogStream.LOG_STREAM_STDERR, LineBlock.of("rl-scheduler: task could not be started: " + e.getMessage()));
            runtime.link().send(refusal(task, e instanceof Error ? ErrorCode.ERROR_CODE_INTERNAL
                    : ErrorCode.ERROR_CODE_INVALID_REQUEST, String.valueOf(e.getMessage())));
            ended(attempt, AttemptOutcome.launchFailed(e.getMessage()));
            return;
        }
        started(attempt, execution);
    }

    /**
     * Puts the task's latest committed checkpoint into the checkpoint directory and starts
     * committing the attempt's own; on the launch's task thread, before the script starts.
     */
    private void resume(Attempt attempt, Path checkpointDir) throws InterruptedException {
        Consumer<String> say = line -> output(attempt, LogStream.LOG_STREAM_STDERR, LineBlock.of(line));
        int number = attempt.getTask().getAttempt();
        String restored = artifacts.restorer().restore(attempt.getLease(), number, checkpointDir, say,
                () -> attempt.getRequestedStop() != StopReason.NONE);
        io.rlscheduler.protocol.CheckpointPolicy policy = attempt.getTask().getCheckpoints();
        attempt.setCheckpoints(artifacts.committer().open(attempt.getLease(), number, checkpointDir, restored, say,
                policy.getKeep(), policy.getMaxBytes()));
    }

    private void track(Attempt attempt) {
        Attempt replaced = attempts.put(attempt);
        if (replaced != null) {
            stop(replaced, StopReason.FENCED);
        }
    }

    /** The attempt is running: it is acknowledged, its timeout set, and its end awaited. */
    private void started(Attempt attempt, TaskExecution execution) {
        ExecuteTask task = attempt.getTask();
        attempt.setExecution(execution);
        runtime.link().send(accepted(task));
        if (log.isDebugEnabled()) {
            log.debug("task {} attempt {} started (epoch {}, GPUs {})", task.getTaskId(), task.getAttempt(),
                    task.getEpoch(), task.getResources().getGpuIdsList());
        }
        if (task.getTimeoutMs() > 0) {
            attempt.setTimeout(runtime.timers().schedule(() -> stop(attempt, StopReason.TIMED_OUT), task.getTimeoutMs(),
                    TimeUnit.MILLISECONDS));
        }
        if (attempt.getRequestedStop() != StopReason.NONE) {
            // Asked to stop before the execution existed to be told.
            execution.stop(attempt.getRequestedStop(), runtime.options().getKillGrace());
        }
        CompletableFuture<ExecutionResult> completion = execution.completion();
        if (completion.isDone()) {
            // Already over (an executor that runs its work inline): exited() does not block, so
            // it runs here rather than on yet another task thread.
            completion.thenAccept(result -> exited(attempt, result)).exceptionally(e -> exitFailed(attempt, e));
        } else {
            // Not on the thread that completes the execution: an executor's own thread (the
            // process supervisor's, for PythonTaskExecutor) is not ours to hold up.
            // While the worker stops, its task threads may be gone before the process has exited:
            // the end is then handled here, with its real result (SHUTDOWN: not recorded), rather
            // than taken for an executor failure and recorded FAILED.
            completion.thenAcceptAsync(result -> exited(attempt, result), command -> {
                try {
                    runtime.taskThreads().execute(command);
                } catch (RejectedExecutionException stopping) {
                    command.run();
                }
            }).exceptionally(e -> exitFailed(attempt, e));
        }
    }

    // ------------------------------------------------------------------------------------------
    // Output
    // ------------------------------------------------------------------------------------------

    /**
     * Takes an attempt's output lines: notes the launcher's fence line and metric lines, keeps
     * the lines until acknowledged, and has them sent at once when a full batch waits.
     */
    private void output(Attempt attempt, LogStream stream, LineBlock lines) {
        LogBuffer logs = attempt.getLogs();
        try {
            if (logs.isSealed()) {
                // After the attempt's end: the buffer drops the lines; its metrics must not change either.
                logs.add(stream, lines);
                return;
            }
            for (int i = 0, n = lines.lineCount(); i < n; i++) {
                if (stream == LogStream.LOG_STREAM_STDERR && lines.startsWith(i, PythonTaskExecutor.KEEPALIVE_FENCE_LINE)) {
                    // The launcher stopped the task itself: keepalives stopped, so the lease may lapse.
                    attempt.setLauncherFenced();
                } else if (lines.startsWith(i, MetricLines.PREFIX)) {
                    attempt.getMetrics().offer(lines.text(i));
                } else if (lines.startsWith(i, CheckpointLine.PREFIX)) {
                    checkpointLine(attempt, lines.text(i));
                }
            }
            shipper.added(logs, logs.add(stream, lines));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void checkpointLine(Attempt attempt, String text) {
        CheckpointCommitter.Slot checkpoints = attempt.getCheckpoints();
        if (checkpoints != null && CheckpointLine.is(text)) {
            checkpoints.line(text);
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
            output(attempt, stream, LineBlock.of(text));
        }

        @Override
        public void lines(LogStream stream, LineBlock lines) {
            output(attempt, stream, lines);
        }

        @Override
        public CompletableFuture<String> checkpoint(String path) {
            CheckpointCommitter.Slot checkpoints = attempt.getCheckpoints();
            return checkpoints != null ? checkpoints.commit(path) : CompletableFuture.failedFuture(
                    new io.rlscheduler.core.SchedulerException("this worker has no artifact store: checkpoints stay on its disk"));
        }
    }

    // ------------------------------------------------------------------------------------------
    // Stop requests
    // ------------------------------------------------------------------------------------------

    /** Asks the attempt to stop (TERM, KILL after the kill grace); the first reason given is the one that counts. */
    public void stop(Attempt attempt, StopReason reason) {
        if (attempt.requestStop(reason)) {
            log.info("stopping task {} epoch {}: {}", attempt.getLease().getTaskId(), attempt.getLease().getEpoch(), reason);
            TaskExecution execution = attempt.getExecution();
            if (execution != null) {
                execution.stop(reason, runtime.options().getKillGrace());
            }
        }
    }

    /** Stops the attempt of {@code taskId} at {@code epoch}, if this worker holds it: a caller cancelled it. */
    public void cancel(String taskId, long epoch) {
        Attempt a = attempts.find(taskId, epoch);
        if (a != null) {
            stop(a, StopReason.CANCELLED);
        }
    }

    // ------------------------------------------------------------------------------------------
    // The end
    // ------------------------------------------------------------------------------------------

    private void exited(Attempt attempt, ExecutionResult result) {
        if (attempt.getTimeout() != null) {
            attempt.getTimeout().cancel(false);
        }
        // The launcher's own fence line is the sure sign: a renewal may succeed after the
        // launcher gave up and before the exit is handled here, so the time since the last
        // renewal alone is not enough.
        ended(attempt, AttemptOutcome.classify(result, attempt.isLauncherFenced(),
                attempt.unrenewedNanos() > fenceAfter.toNanos(), Duration.ofMillis(attempt.getTask().getTimeoutMs())));
    }

    /**
     * The attempt's completion failed (an executor whose future completed exceptionally) or
     * handling its end threw. An attempt that is not marked ended would be reported as held at
     * every heartbeat and keep its lease forever, so it is ended as FAILED here.
     */
    private Void exitFailed(Attempt attempt, Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        log.error("task {} epoch {}: the attempt's end could not be handled normally", attempt.getLease().getTaskId(),
                attempt.getLease().getEpoch(), cause);
        if (!attempt.isEnded()) {
            try {
                ended(attempt, AttemptOutcome.executorFailed(cause));
            } catch (RuntimeException again) {
                log.error("task {} epoch {}: could not record the failure either", attempt.getLease().getTaskId(),
                        attempt.getLease().getEpoch(), again);
            }
        }
        return null;
    }

    /**
     * Records the outcome in Redis unless it is not this worker's to record, then marks the
     * attempt ended. Returns at once: no thread waits for Redis.
     */
    private void ended(Attempt attempt, AttemptOutcome outcome) {
        CheckpointCommitter.Slot checkpoints = attempt.getCheckpoints();
        if (checkpoints == null) {
            record(attempt, outcome);
            return;
        }
        // The checkpoints still being sent are committed or refused before the end is recorded,
        // and their notes are among the log's lines: the end is the log's last word on them.
        Duration wait = artifacts.transfers().options().getCheckpointEndWait();
        CompletableFuture<Void> settled = checkpoints.ended(outcome.isRecorded());
        if (wait.isZero() || settled.isDone()) {
            record(attempt, outcome);
            return;
        }
        settled.completeOnTimeout(null, wait.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((v, e) -> {
                    try {
                        record(attempt, outcome);
                    } catch (RuntimeException | Error failed) {
                        exitFailed(attempt, failed);
                    }
                });
    }

    private void record(Attempt attempt, AttemptOutcome outcome) {
        // The end states the attempt's last line: no line may be added after it is taken, even by
        // a reader that was blocked in the buffer while the attempt ended (OutputPump#detach).
        attempt.getLogs().seal();
        if (outcome.isRecorded()) {
            recorder.record(attempt, outcome, recorded -> finished(attempt, recorded));
        } else {
            finished(attempt, outcome);
        }
    }

    /**
     * Marks the attempt ended and sends its last lines now, on the event loop. The master learns
     * of the end from Redis (the event of the recorded end carries the line count its log ends
     * at), not from this worker.
     */
    private void finished(Attempt attempt, AttemptOutcome outcome) {
        if (attempt.getCheckpoints() != null) {
            // The attempt ran in its run directory on a worker with a store: its outputs go there.
            artifacts.outputs().upload(attempt.getLease(), attempt.getTask().getAttempt(), attempt.getRunDir(), outcome.isRecorded());
        }
        Runnable finish = () -> {
            attempt.setEnded();
            attempt.getLogs().close();
            logEnd(attempt, outcome);
            if (!attempts.forgetIfDelivered(attempt)) {
                shipper.flush(); // the last lines; the master's acknowledgement of them forgets the attempt
            }
        };
        if (runtime.loop().next().inEventLoop()) {
            finish.run();
            return;
        }
        try {
            runtime.loop().execute(finish);
        } catch (RejectedExecutionException stopping) {
            finish.run(); // the worker is stopping: no channel to write to, but the attempt ends
        }
    }

    private static void logEnd(Attempt attempt, AttemptOutcome outcome) {
        String taskId = attempt.getLease().getTaskId();
        int number = attempt.getTask().getAttempt();
        long dropped = attempt.getLogs().droppedAfterSeal();
        if (dropped > 0) {
            log.warn("task {} attempt {}: {} output lines came after the attempt ended and were dropped",
                    taskId, number, dropped);
        }
        if (outcome.state() != TaskState.SUCCEEDED) {
            log.info("task {} attempt {} ended: {} (exit {})", taskId, number, outcome.label(), outcome.exitCode());
        } else if (log.isDebugEnabled()) {
            log.debug("task {} attempt {} ended: {} (exit {})", taskId, number, outcome.label(), outcome.exitCode());
        }
    }
}
