package io.rlscheduler.worker.internal;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.WriteResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records how an attempt ended in Redis, retrying until Redis answers. A call that fails or is not
 * answered within {@value #CALL_TIMEOUT_SECONDS} s is retried after a pause that doubles from
 * {@value #RETRY_MIN_MILLIS} ms to {@value #RETRY_MAX_MILLIS} ms, for as long as the task lease
 * from the attempt's end; after that, or if the worker stops meanwhile, the end counts as not
 * taken (its lease lapses and the reaper takes the task back). A repeated call is harmless: Redis
 * answers a replay DUPLICATE. No thread waits: the calls are asynchronous and the pauses are
 * timers on the worker's event loop, which (unlike the timer thread, whose heartbeat waits for
 * Redis) is never blocked. The end carries the attempt's provenance when it is still held for it
 * (the worker's provenance recorder holds a collected one for a while): one script run stores
 * both. Thread-safe.
 */
public final class EndRecorder {

    private static final Logger log = LoggerFactory.getLogger(EndRecorder.class);
    /** Longest wait for one answer to the call that records an attempt's end; then it is retried. */
    static final long CALL_TIMEOUT_SECONDS = 10;
    /** First delay before recording an attempt's end is retried; doubles up to the maximum. */
    static final long RETRY_MIN_MILLIS = 100;
    /** Longest delay between retries of recording an attempt's end. */
    static final long RETRY_MAX_MILLIS = 2_000;

    private final WorkerRuntime runtime;
    private final HeldProvenance heldProvenance;

    /** Where an attempt's end gets the attempt's provenance to carry, and gives it back when it cannot. */
    public interface HeldProvenance {
        /** Takes the provenance still held for the attempt of {@code lease}; null when none. */
        AttemptProvenance take(TaskLease lease);

        /** Has a taken provenance written alone, now: its end could not carry it. */
        void writeAlone(AttemptProvenance provenance);
    }

    /**
     * @param runtime        the started worker's parts
     * @param heldProvenance the provenance held for attempts, which their ends then store
     */
    public EndRecorder(WorkerRuntime runtime, HeldProvenance heldProvenance) {
        this.runtime = runtime;
        this.heldProvenance = heldProvenance;
    }

    /**
     * Records {@code outcome} (which {@linkplain AttemptOutcome#isRecorded() is recorded}) for
     * {@code attempt}, then passes {@code then} the outcome as Redis took it: as given, or
     * {@linkplain AttemptOutcome#notTaken() not taken}. Returns at once.
     */
    public void record(Attempt attempt, AttemptOutcome outcome, Consumer<AttemptOutcome> then) {
        new Call(attempt, outcome, then).call();
    }

    /** One attempt's end, until Redis has answered or the time for it is up. */
    private final class Call {
        private final Attempt attempt;
        private final AttemptOutcome outcome;
        private final Consumer<AttemptOutcome> then;
        /** Taken once; every try of this end carries it; null once given back. */
        private AttemptProvenance provenance;
        private final long deadline = System.nanoTime() + runtime.options().getCoreOptions().getTaskLease().toNanos();
        private long pauseMillis = RETRY_MIN_MILLIS;

        Call(Attempt attempt, AttemptOutcome outcome, Consumer<AttemptOutcome> then) {
            this.attempt = attempt;
            this.outcome = outcome;
            this.then = then;
            this.provenance = heldProvenance.take(attempt.getLease());
        }

        void call() {
            CompletableFuture<WriteResult> call;
            try {
                call = finish();
            } catch (IllegalArgumentException refused) {
                if (provenance != null) {
                    // Perhaps the provenance, not the end, was refused: the end tries again without it.
                    log.warn("task {}: its end was refused with its provenance ({}); the provenance is written alone",
                            attempt.getLease().getTaskId(), refused.getMessage());
                    giveBack();
                    call();
                    return;
                }
                call = CompletableFuture.failedFuture(refused);
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            call.orTimeout(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).whenComplete(this::answered);
        }

        private CompletableFuture<WriteResult> finish() {
            return runtime.core().finish(attempt.getLease(), runtime.workerId(), runtime.sessionId(), outcome.state(),
                    outcome.exitCode(), outcome.error(), attempt.getMetrics().latestJson(),
                    attempt.getRunDir().toString(), attempt.getLogs().getLastSequence(), provenance);
        }

        /** The end is not carrying the provenance after all: it is written alone. */
        private void giveBack() {
            AttemptProvenance p = provenance;
            provenance = null;
            if (p != null) {
                heldProvenance.writeAlone(p);
            }
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
                giveBack();
                recorded(null);
                return;
            }
            log.warn("recording the end of task {} failed ({}); retrying in {} ms", taskId, cause.toString(), pauseMillis);
            long pause = pauseMillis;
            pauseMillis = Math.min(pauseMillis * 2, RETRY_MAX_MILLIS);
            try {
                runtime.loop().schedule(this::call, pause, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                log.warn("worker {} is stopping: the end of task {} was not recorded in Redis", runtime.workerId(), taskId);
                giveBack();
                recorded(null);
            }
        }

        private void recorded(WriteResult written) {
            if (written == null || !written.isAccepted()) {
                log.warn("task {} epoch {} ended {} but Redis answered {}: the attempt was fenced",
                        attempt.getLease().getTaskId(), attempt.getLease().getEpoch(), outcome.state(),
                        written == null ? "nothing" : written.getStatus());
                then.accept(outcome.notTaken());
                return;
            }
            then.accept(outcome);
        }
    }
}
