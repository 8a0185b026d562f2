package io.rlscheduler.worker.internal.provenance;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.WriteResult;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskExecutor;
import io.rlscheduler.worker.TaskOutput;
import io.rlscheduler.worker.internal.EndRecorder;
import io.rlscheduler.worker.internal.WorkerRuntime;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Has the provenance of every attempt the worker starts recorded in Redis. It wraps the worker's
 * {@link TaskExecutor}: once the wrapped executor has started an attempt (which the worker does
 * only after Redis accepted the attempt's acknowledgement, so this worker holds it), it collects
 * the attempt's provenance ({@link ProvenanceProbe}): on a task thread when the execution runs a
 * file (hashed, and git asked about its work tree), inline when it runs none (an in-JVM
 * execution: nothing to read or run). The start returns without waiting for a file's hash or git.
 *
 * <p>A collected provenance is held for {@value #HOLD_MILLIS} ms: an attempt that ends meanwhile
 * has it stored by the script run that records its end ({@link #take}, which the worker's end
 * recorder calls; {@code LeaseCore.finish}), so a short attempt costs one script run, not two.
 * Once held that long it is written alone ({@code ProvenanceRecords.record}), by a sweep on the
 * worker's event loop every {@value #SWEEP_MILLIS} ms; {@link #flush} writes what is held at once
 * (the worker stopping). Both paths are fenced by the attempt's epoch. A write Redis does not take
 * is retried {@value #TRIES} times in all, after pauses doubling from {@value #RETRY_MIN_MILLIS} ms,
 * timed on the event loop (never blocked); a write refused as stale (the attempt lost the task
 * meanwhile) is not. Thread-safe.
 */
public final class ProvenanceRecorder implements TaskExecutor, EndRecorder.HeldProvenance {

    private static final Logger log = LoggerFactory.getLogger(ProvenanceRecorder.class);
    /** How many times in all a provenance write that fails is tried. */
    static final int TRIES = 5;
    /** The first pause before a failed provenance write is tried again; doubles after each try. */
    static final long RETRY_MIN_MILLIS = 200;
    /** How long a collected provenance waits for its attempt's end to carry it before it is written alone. */
    static final long HOLD_MILLIS = 1_000;
    /** How often the held provenance is looked at for what has waited {@value #HOLD_MILLIS} ms. */
    static final long SWEEP_MILLIS = 200;
    /** The git command asked for the script's work tree: {@value}, looked up on the PATH. */
    static final String GIT = "git";

    private final TaskExecutor executor;
    private final WorkerRuntime runtime;
    private final ProvenanceProbe probe;
    /** Collected, not yet written nor taken by an end: the attempt's lease -> its provenance. */
    private final ConcurrentHashMap<TaskLease, AttemptProvenance> held = new ConcurrentHashMap<>();
    /** The held leases in the order they were held, with when: what the sweep writes alone. */
    private final ConcurrentLinkedQueue<Held> order = new ConcurrentLinkedQueue<>();

    private record Held(TaskLease lease, long atNanos) { }

    /**
     * @param executor the executor that starts the attempts
     * @param runtime  the started worker's parts: its Redis gateway, task threads and event loop
     *                 (where the sweep of held provenance is scheduled, from now until it stops)
     * @param gpus     the GPUs of the worker's last nvidia-smi probe (must not wait for one)
     */
    public ProvenanceRecorder(TaskExecutor executor, WorkerRuntime runtime, Supplier<List<GpuStatus>> gpus) {
        this.executor = executor;
        this.runtime = runtime;
        this.probe = new ProvenanceProbe(runtime.workerId(), gpus, GIT);
        runtime.loop().scheduleAtFixedRate(this::writeDue, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public TaskExecution start(TaskContext context, TaskOutput output) {
        TaskExecution execution = executor.start(context, output);
        if (execution.getScriptFile().isEmpty() && execution.getInterpreter().isEmpty()) {
            try {
                collect(context, execution);
            } catch (Throwable t) {
                // The attempt has started: whatever the collection throws must not reach the
                // worker as if the start had failed, leaving a running execution untracked.
                log.error("task {} attempt {}: its provenance could not be collected", context.getTaskId(),
                        context.getAttempt(), t);
            }
            return execution;
        }
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

    /**
     * Takes the held provenance of the attempt of {@code lease}, for the script run that records
     * the attempt's end to store; null when none is held (not collected yet, already written, or
     * taken before). Whoever takes it writes it: it is then never written alone.
     */
    @Override
    public AttemptProvenance take(TaskLease lease) {
        return held.remove(lease);
    }

    /** Writes a provenance taken by an end that could not carry it, now. */
    @Override
    public void writeAlone(AttemptProvenance provenance) {
        write(provenance, 1, RETRY_MIN_MILLIS);
    }

    /** Writes every provenance held now, without waiting for its attempt's end (the worker is stopping). */
    public void flush() {
        for (TaskLease lease : held.keySet()) {
            AttemptProvenance provenance = held.remove(lease);
            if (provenance != null) {
                write(provenance, 1, RETRY_MIN_MILLIS);
            }
        }
    }

    /** The sweep: writes alone what has been held {@value #HOLD_MILLIS} ms; on the event loop. */
    private void writeDue() {
        long now = System.nanoTime();
        for (Held h; (h = order.peek()) != null && now - h.atNanos() >= TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS); ) {
            order.poll();
            AttemptProvenance provenance = held.remove(h.lease());
            if (provenance != null) {
                write(provenance, 1, RETRY_MIN_MILLIS);
            }
        }
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
        TaskLease lease = new TaskLease(context.getTaskId(), context.getEpoch());
        held.put(lease, provenance);
        order.add(new Held(lease, System.nanoTime()));
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
