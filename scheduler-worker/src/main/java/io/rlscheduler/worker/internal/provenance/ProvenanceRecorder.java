package io.rlscheduler.worker.internal.provenance;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.internal.WriteResult;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskExecutor;
import io.rlscheduler.worker.TaskOutput;
import io.rlscheduler.worker.internal.WorkerRuntime;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Has the provenance of every attempt the worker starts recorded in Redis. It wraps the worker's
 * {@link TaskExecutor}: once the wrapped executor has started an attempt (which the worker does
 * only after Redis accepted the attempt's acknowledgement, so this worker holds it), it collects
 * the attempt's provenance on a task thread ({@link ProvenanceProbe}) and stores it with
 * {@code ProvenanceRecords.record}, fenced by the attempt's epoch. The start returns at once: the
 * script runs while its file is hashed and git is asked, and the worker acknowledges the attempt
 * to the master without waiting for any of it. A write Redis does not take is retried
 * {@value #TRIES} times in all, after pauses doubling from {@value #RETRY_MIN_MILLIS} ms, timed on
 * the worker's event loop (never blocked); a write refused as stale (the attempt lost the task
 * meanwhile) is not. Thread-safe.
 */
public final class ProvenanceRecorder implements TaskExecutor {

    private static final Logger log = LoggerFactory.getLogger(ProvenanceRecorder.class);
    /** How many times in all a provenance write that fails is tried. */
    static final int TRIES = 5;
    /** The first pause before a failed provenance write is tried again; doubles after each try. */
    static final long RETRY_MIN_MILLIS = 200;
    /** The git command asked for the script's work tree: {@value}, looked up on the PATH. */
    static final String GIT = "git";

    private final TaskExecutor executor;
    private final WorkerRuntime runtime;
    private final ProvenanceProbe probe;

    /**
     * @param executor the executor that starts the attempts
     * @param runtime  the started worker's parts: its Redis gateway, task threads and event loop
     * @param gpus     the GPUs of the worker's last nvidia-smi probe (must not wait for one)
     */
    public ProvenanceRecorder(TaskExecutor executor, WorkerRuntime runtime, Supplier<List<GpuStatus>> gpus) {
        this.executor = executor;
        this.runtime = runtime;
        this.probe = new ProvenanceProbe(runtime.workerId(), gpus, GIT);
    }

    @Override
    public TaskExecution start(TaskContext context, TaskOutput output) {
        TaskExecution execution = executor.start(context, output);
        try {
            runtime.taskThreads().execute(() -> collect(context, execution));
        } catch (RejectedExecutionException stopping) {
            log.debug("worker {} is stopping: no provenance for task {} attempt {}", runtime.workerId(),
                    context.getTaskId(), context.getAttempt());
        }
        return execution;
    }

    @Override
    public boolean usesRunDirectories() {
        return executor.usesRunDirectories();
    }

    private void collect(TaskContext context, TaskExecution execution) {
        long started = System.nanoTime();
        AttemptProvenance provenance;
        try {
            provenance = probe.collect(context, execution);
        } catch (RuntimeException e) {
            log.warn("task {} attempt {}: its provenance could not be collected", context.getTaskId(),
                    context.getAttempt(), e);
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("task {} attempt {}: provenance collected in {} µs", context.getTaskId(), context.getAttempt(),
                    (System.nanoTime() - started) / 1_000);
        }
        write(provenance, 1, RETRY_MIN_MILLIS);
    }

    private void write(AttemptProvenance provenance, int tryNumber, long pauseMillis) {
        CompletableFuture<WriteResult> call;
        try {
            call = runtime.core().provenance().record(provenance, runtime.sessionId());
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        call.whenComplete((written, failure) -> {
            if (failure == null) {
                if (!written.isAccepted()) {
                    log.debug("task {} attempt {}: provenance not stored, Redis answered {}", provenance.getTaskId(),
                            provenance.getAttempt(), written.getStatus());
                }
                return;
            }
            if (tryNumber >= TRIES) {
                log.warn("task {} attempt {}: its provenance could not be stored: {}", provenance.getTaskId(),
                        provenance.getAttempt(), failure.toString());
                return;
            }
            try {
                runtime.loop().schedule(() -> write(provenance, tryNumber + 1, pauseMillis * 2), pauseMillis,
                        TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                log.debug("worker {} is stopping: the provenance of task {} is not stored", runtime.workerId(),
                        provenance.getTaskId());
            }
        });
    }
}
