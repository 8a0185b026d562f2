package io.rlscheduler.master.internal;

import io.rlscheduler.core.Assignment;
import io.rlscheduler.core.ClaimResult;
import io.rlscheduler.core.ClaimStatus;
import io.rlscheduler.core.LeaseCore;
import io.rlscheduler.protocol.ExecuteTask;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves queued tasks to connected workers. Event-driven: {@link #trigger()} is called when a task
 * is submitted, a worker joins, capacity is freed or the reaper re-queued something (and by a
 * slow backstop timer); triggers that arrive while a round runs are coalesced into one more round.
 *
 * <p>A round claims for every connected worker at once through the lease core's claim script
 * (asynchronously: no thread waits on Redis) and sends each assignment to its worker's channel.
 * If the channel is gone by then, the assignment is not lost: its ack deadline passes and the
 * reaper puts it back in the queue. Thread-safe.
 */
public final class Dispatcher {

    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

    private final LeaseCore core;
    private final java.util.function.Supplier<io.rlscheduler.core.LeaderStatus> leadership;
    private final WorkerRegistry registry;
    private final LogOpener logs;
    private final int batchSize;
    private final AtomicBoolean requested = new AtomicBoolean();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private volatile boolean stopped;

    /** Opens a task's log file when an attempt is dispatched. */
    @FunctionalInterface
    public interface LogOpener {
        /** Called before the attempt is sent; must not block. */
        void open(String taskId, String traceId, long epoch, int attempt);
    }

    /**
     * @param leadership this master's current leadership; rounds run only while it says self, and
     *                   every claim carries its epoch so a deposed leader's claims are refused
     */
    public Dispatcher(LeaseCore core, java.util.function.Supplier<io.rlscheduler.core.LeaderStatus> leadership,
                      WorkerRegistry registry, LogOpener logs, int batchSize) {
        this.core = core;
        this.leadership = leadership;
        this.registry = registry;
        this.logs = logs;
        this.batchSize = batchSize;
    }

    /** Asks for a dispatch round soon. Never blocks; safe from any thread, event loops included. */
    public void trigger() {
        requested.set(true);
        if (!stopped && running.compareAndSet(false, true)) {
            round();
        }
    }

    /** Returns how many rounds ran. */
    public long getRounds() {
        return rounds.get();
    }

    /** Returns how many assignments were sent to workers. */
    public long getSent() {
        return sent.get();
    }

    /** Stops dispatching; rounds in flight finish. */
    public void stop() {
        stopped = true;
    }

    private void round() {
        requested.set(false);
        io.rlscheduler.core.LeaderStatus leader = leadership.get();
        if (leader == null || !leader.isSelf()) {
            running.set(false);
            return;
        }
        rounds.incrementAndGet();
        List<ConnectedWorker> workers = registry.snapshot();
        List<CompletableFuture<Boolean>> claims = new ArrayList<>(workers.size());
        for (ConnectedWorker worker : workers) {
            if (!worker.getChannel().isActive()) {
                continue;
            }
            claims.add(core.claim(worker.getWorkerId(), worker.getSessionId(), batchSize, "c-" + UUID.randomUUID(), leader)
                    .thenApply(result -> deliver(worker, result))
                    .exceptionally(e -> {
                        log.warn("claim for worker {} failed: {}", worker.getWorkerId(), e.toString());
                        return false;
                    }));
        }
        CompletableFuture.allOf(claims.toArray(new CompletableFuture<?>[0])).whenComplete((v, e) -> {
            boolean full = claims.stream().anyMatch(f -> f.getNow(false));
            running.set(false);
            if (full || requested.get()) {
                trigger();
            }
        });
    }

    /** Sends the assignments; returns whether the batch was full (more may fit). */
    private boolean deliver(ConnectedWorker worker, ClaimResult result) {
        if (result.getStatus() != ClaimStatus.OK) {
            log.debug("worker {} cannot claim: {}", worker.getWorkerId(), result.getStatus());
            return false;
        }
        for (Assignment a : result.getAssignments()) {
            try {
                ExecuteTask msg = SpecReader.executeTask(a);
                logs.open(a.getTaskId(), msg.getTraceId(), a.getEpoch(), a.getAttempt());
                worker.getChannel().writeAndFlush(msg);
                sent.incrementAndGet();
                log.debug("sent task {} epoch {} attempt {} to {}", a.getTaskId(), a.getEpoch(), a.getAttempt(),
                        worker.getWorkerId());
            } catch (java.io.IOException | RuntimeException e) {
                // The assignment stays ASSIGNED; the reaper re-queues it after its ack deadline.
                log.error("cannot send task {} to {}: {}", a.getTaskId(), worker.getWorkerId(), e.toString());
            }
        }
        return result.getAssignments().size() >= batchSize;
    }
}
