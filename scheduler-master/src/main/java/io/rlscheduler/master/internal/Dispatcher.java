package io.rlscheduler.master.internal;

import io.netty.channel.Channel;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.ClaimResult;
import io.rlscheduler.core.internal.ClaimStatus;
import io.rlscheduler.core.OwnerLimitExceededException;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.SubmitAndClaimResult;
import io.rlscheduler.core.internal.SubmitResult;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerSession;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.protocol.ExecuteTask;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves queued tasks to connected workers. Event-driven: {@link #trigger()} is called when a task
 * is submitted, a worker joins, capacity is freed or the reaper re-queued something (and by a
 * slow backstop timer); triggers that arrive while a round runs are coalesced into one more round.
 *
 * <p>A round claims for every connected worker through the lease core's claim script, one script
 * run per {@value #CLAIM_CHUNK} workers, the order rotated each round (asynchronously: no thread
 * waits on Redis), and sends each assignment to its worker's channel.
 * If the channel is gone by then, the assignment is not lost: its ack deadline passes and the
 * reaper puts it back in the queue. Thread-safe.
 *
 * <p>An idle cluster costs Redis nothing per worker: each claim answers how many tasks are left
 * in the queue, and once a round has seen it empty, rounds claim nothing until {@link #taskQueued()}
 * says work arrived (a submission, a re-queue, or a QUEUED event from the event stream, which also
 * covers other masters). The backstop, {@link #backstop()}, checks the queue's length with one
 * command in case a signal was missed (an event trimmed from the stream while disconnected).
 * Parked tasks (parking.lua: no registered worker could run them) count as none: claims do not see
 * them. A claim that parks tasks publishes a QUEUED event for each (via "park"), which signals
 * work as any QUEUED event does, so that rounds go on past a head of the queue made of such tasks;
 * so does a worker registration that brings parked tasks back (via "unpark").
 */
public final class Dispatcher {

    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

    /** Workers per claim script run. */
    static final int CLAIM_CHUNK = 64;

    private final AttemptHolders holders;
    private final LeaseCore core;
    private final java.util.function.Supplier<io.rlscheduler.core.internal.LeaderStatus> leadership;
    private final WorkerRegistry registry;
    private final LogOpener logs;
    private final int batchSize;
    private final AtomicBoolean requested = new AtomicBoolean();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    /** Counts work signals ({@link #taskQueued()}); the queue is known empty while it equals {@link #emptyAt}. */
    private final AtomicLong workSignals = new AtomicLong();
    private volatile long emptyAt = -1;
    private final AtomicLong skipped = new AtomicLong();
    private final AtomicLong onSubmit = new AtomicLong();
    /**
     * The most submissions claiming in their own runs on their way at once: further ones are sent
     * plain and batched. More than one, so that a steady stream whose runs take longer to answer
     * than the gap between two submissions (a loaded machine) still claims in its own runs.
     */
    static final int MAX_SUBMIT_CLAIMS_IN_FLIGHT = 4;
    /** Submissions claiming in their own runs now on their way (at most {@link #MAX_SUBMIT_CLAIMS_IN_FLIGHT}). */
    private final AtomicInteger submitClaimsInFlight = new AtomicInteger();
    /** Task ids this master submitted whose QUEUED event has not come yet (see {@link #submitting}). */
    private final java.util.Set<String> ownSubmissions = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final int MAX_OWN_SUBMISSIONS = 100_000;
    private final AtomicLong claimedOnSubmit = new AtomicLong();
    /**
     * Whether the claim answered last (a round's or a submission's own) left no claimable task in
     * the queue: what a submission's own claim would then find is at most the work signalled since,
     * which a claim takes in queue order as a round would (see {@link #claimOnSubmit()}).
     */
    private volatile boolean drained;
    private volatile boolean stopped;

    /** Starts the logs of the attempts a claim dispatches to one worker. */
    @FunctionalInterface
    public interface LogOpener {
        /** Called before the attempts are sent; must not block. */
        void openAll(List<TaskLogManager.AttemptStart> starts);
    }

    /**
     * @param leadership this master's current leadership; rounds run only while it says self, and
     *                   every claim carries its epoch so a deposed leader's claims are refused
     */
    public Dispatcher(LeaseCore core, java.util.function.Supplier<io.rlscheduler.core.internal.LeaderStatus> leadership,
                      WorkerRegistry registry, LogOpener logs, int batchSize) {
        this(core, leadership, registry, logs, batchSize, new AttemptHolders(core.holders()::of));
    }

    /** As above, recording each assignment it sends in {@code holders}. */
    public Dispatcher(LeaseCore core, java.util.function.Supplier<io.rlscheduler.core.internal.LeaderStatus> leadership,
                      WorkerRegistry registry, LogOpener logs, int batchSize, AttemptHolders holders) {
        this.holders = holders;
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

    /**
     * Says a task entered the queue (submitted, re-queued, or seen QUEUED in the event stream), so
     * rounds must claim again, and asks for one. Never blocks.
     */
    public void taskQueued() {
        workSignals.incrementAndGet();
        trigger();
    }

    /**
     * The periodic safety net: when the queue is believed empty, asks Redis for its length (one
     * command) and claims if anything is there after all; otherwise the same as {@link #trigger()}.
     */
    public void backstop() {
        if (stopped) {
            return;
        }
        if (emptyAt != workSignals.get()) {
            trigger();
            return;
        }
        io.rlscheduler.core.internal.LeaderStatus leader = leadership.get();
        if (leader == null || !leader.isSelf()) {
            return;
        }
        // Parked tasks are not counted: no claim can take them, so they are no work for a round.
        core.claimableCount().whenComplete((depth, error) -> {
            if (error != null) {
                log.warn("queue length check failed: {}", error.toString());
            } else if (depth > 0) {
                taskQueued();
            }
        });
    }

    /**
     * Submits a task and signals the work it brings. While the last claim left the queue without
     * claimable tasks and a worker is connected (see {@link #claimOnSubmit()}), the submission's own script run also claims,
     * so the task is assigned one Redis round trip sooner than by the round a signal starts. A
     * call that failed in transit may have run, so it is repeated once with the same request id,
     * which answers EXISTS and the first claim's answer; if the repeat fails too, the rounds take
     * what it may have queued, and what it may have assigned goes back to the queue at its
     * acknowledgement deadline. A refusal by the owner's limits is the script's answer, not a
     * failure in transit: it stored and claimed nothing, and is neither repeated nor followed by a
     * round. Otherwise the task is only queued and a round is asked for. Never blocks.
     *
     * @return the submission's answer; completes exceptionally if Redis refused or failed it
     * @throws IllegalArgumentException if the task cannot be sent as it is (nothing was written)
     */
    public CompletableFuture<SubmitResult> submit(TaskDefinition task) {
        submitting(task.getTaskId());
        SubmitClaim claim = claimOnSubmit();
        if (claim == null) {
            return core.submit(task).handle((result, e) -> {
                if (e != null) {
                    refused(task, e);
                    throw e instanceof CompletionException c ? c : new CompletionException(e);
                }
                taskQueued();
                return result;
            });
        }
        CompletableFuture<SubmitAndClaimResult> call;
        try {
            call = core.submitAndClaim(task, claim.sessions(), claim.batchSize(), claim.requestId(), claim.leader());
        } catch (RuntimeException invalid) {
            claimOnSubmitFailed(claim);
            throw invalid;
        }
        return call
                .exceptionallyCompose(e -> refusedByLimits(e) ? CompletableFuture.failedFuture(e)
                        : core.submitAndClaim(task, claim.sessions(), claim.batchSize(), claim.requestId(), claim.leader()))
                .handle((SubmitAndClaimResult result, Throwable e) -> {
                    if (e != null) {
                        if (refused(task, e)) {
                            submitClaimsInFlight.decrementAndGet();
                        } else {
                            claimOnSubmitFailed(claim);
                        }
                        throw e instanceof CompletionException c ? c : new CompletionException(e);
                    }
                    claimedOnSubmit(claim, result.getClaims());
                    return result.getSubmit();
                });
    }

    /**
     * Whether a submission failed because its owner's limits refuse it; if so its id is forgotten
     * as this master's own submission ({@link #submitting}): no QUEUED event of it will come, and
     * a later submission of the id by another master must signal.
     */
    private boolean refused(TaskDefinition task, Throwable e) {
        if (!refusedByLimits(e)) {
            return false;
        }
        ownSubmissions.remove(task.getTaskId());
        return true;
    }

    /** Whether a submission's run answered that the owner's limits refuse it (it changed nothing). */
    private static boolean refusedByLimits(Throwable e) {
        Throwable t = e;
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) { // bounded: causes may loop
            if (t instanceof OwnerLimitExceededException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The workers a submission may claim for in its own script run, with the leadership and a
     * request id (see {@link #claimOnSubmit()}).
     */
    record SubmitClaim(List<ConnectedWorker> workers, List<WorkerSession> sessions,
                              io.rlscheduler.core.internal.LeaderStatus leader, String requestId, int batchSize) {
    }

    /**
     * Returns what a submission needs to claim in its own script run, or null when it should only
     * queue its task and signal ({@link #taskQueued()}): this master must lead, the last claim
     * answered must have left no claimable task in the queue (so the claim serves the new task and
     * what was signalled since, not a backlog that batched rounds serve for less), a worker must be
     * connected, no plain submission may be on its way (a burst goes faster batched, and claimed
     * by rounds), and fewer than {@link #MAX_SUBMIT_CLAIMS_IN_FLIGHT} claiming ones. Neither a
     * round nor another claiming submission running stops it: the claims run one after the other
     * in Redis, each taking the queue in order, so nothing is claimed twice or passed over; and a
     * submission sent plain because one of them was running would signal the next round, whose
     * submissions would then do the same, at every rate where a round outlasts the gap between
     * two submissions. A non-null answer is followed by {@link #claimedOnSubmit} or
     * {@link #claimOnSubmitFailed} ({@link #submit} does both), or, when the owner's limits refuse
     * the submission, by the slot alone given back. Never blocks.
     */
    SubmitClaim claimOnSubmit() {
        if (stopped || !drained || core.submissionsInFlight() > 0) {
            return null;
        }
        io.rlscheduler.core.internal.LeaderStatus leader = leadership.get();
        if (leader == null || !leader.isSelf()) {
            return null;
        }
        if (submitClaimsInFlight.getAndIncrement() >= MAX_SUBMIT_CLAIMS_IN_FLIGHT) {
            submitClaimsInFlight.decrementAndGet();
            return null;
        }
        try {
            return claimFor(leader);
        } catch (RuntimeException e) {
            submitClaimsInFlight.decrementAndGet();
            throw e;
        }
    }

    /** The rest of {@link #claimOnSubmit()}, a slot taken: null (the slot given back) when no worker is connected. */
    private SubmitClaim claimFor(io.rlscheduler.core.internal.LeaderStatus leader) {
        List<ConnectedWorker> workers = new ArrayList<>(CLAIM_CHUNK);
        for (ConnectedWorker w : registry.snapshot()) {
            if (w.getChannel().isActive()) {
                workers.add(w);
            }
        }
        if (workers.isEmpty()) {
            submitClaimsInFlight.decrementAndGet();
            return null;
        }
        // Rotated as rounds rotate, so that light traffic does not always go to the same worker.
        java.util.Collections.rotate(workers, -(int) (onSubmit.getAndIncrement() % workers.size()));
        if (workers.size() > CLAIM_CHUNK) {
            workers = new ArrayList<>(workers.subList(0, CLAIM_CHUNK));
        }
        List<WorkerSession> sessions = new ArrayList<>(workers.size());
        for (ConnectedWorker w : workers) {
            sessions.add(new WorkerSession(w.getWorkerId(), w.getSessionId()));
        }
        return new SubmitClaim(workers, sessions, leader, "c-" + UUID.randomUUID(), batchSize);
    }

    /**
     * Takes the claim answers of a submission's own run ({@link #claimOnSubmit()}): sends the
     * assignments, and signals work when tasks are left in the queue (none of the workers had room
     * for the new task, or the claim was refused) so that rounds pick them up.
     */
    void claimedOnSubmit(SubmitClaim claim, List<ClaimResult> results) {
        boolean left = false;
        boolean handled = false;
        try {
            for (int i = 0; i < results.size(); i++) {
                ClaimResult r = results.get(i);
                deliver(claim.workers().get(i), r);
                left |= r.getStatus() != ClaimStatus.OK || r.getQueued() != 0;
            }
            handled = true;
        } finally {
            // Whatever happened above, the slot is given back, and work not known to be taken goes to the rounds.
            left |= !handled;
            drained = !left;
            submitClaimsInFlight.decrementAndGet();
            claimedOnSubmit.incrementAndGet();
            if (left) {
                taskQueued();
            }
        }
    }

    /**
     * Notes a submission by this master, which signals its own work ({@link #taskQueued()} after
     * a plain submit, {@link #claimedOnSubmit} after one that claimed): its QUEUED event, when it
     * comes through the event stream, then need not signal again ({@link #queuedEvent}). Without
     * this, every task assigned in its submission's own run would still cost a claim round when
     * its event arrived.
     */
    void submitting(String taskId) {
        if (ownSubmissions.size() >= MAX_OWN_SUBMISSIONS) {
            ownSubmissions.clear(); // events were missed (trimmed, a reconnect): at worst a spare round each
        }
        ownSubmissions.add(taskId);
    }

    /** A QUEUED event from the event stream: a signal, unless it is of this master's own submission. */
    public void queuedEvent(String taskId, TaskEvent.Via via) {
        if (via == TaskEvent.Via.SUBMIT && ownSubmissions.remove(taskId)) {
            return;
        }
        taskQueued();
    }

    /** The submission's own run failed: whatever it left in the queue, rounds take. */
    void claimOnSubmitFailed(SubmitClaim claim) {
        drained = false;
        submitClaimsInFlight.decrementAndGet();
        taskQueued();
    }

    /** Returns how many submissions claimed in their own script run. */
    public long getClaimedOnSubmit() {
        return claimedOnSubmit.get();
    }

    /** Returns whether a round is in progress. */
    public boolean isRunning() {
        return running.get();
    }

    /** Returns how many rounds ran. */
    public long getRounds() {
        return rounds.get();
    }

    /** Returns how many rounds claimed nothing because the queue was known to be empty. */
    public long getSkippedRounds() {
        return skipped.get();
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
        io.rlscheduler.core.internal.LeaderStatus leader = leadership.get();
        if (leader == null || !leader.isSelf()) {
            running.set(false);
            return;
        }
        long signals = workSignals.get();
        if (emptyAt == signals) {
            // The queue was empty after the last claims and no work arrived since.
            skipped.incrementAndGet();
            running.set(false);
            if (requested.get()) {
                trigger();
            }
            return;
        }
        rounds.incrementAndGet();
        List<ConnectedWorker> all = registry.snapshot();
        List<ConnectedWorker> workers = new ArrayList<>(all.size());
        for (ConnectedWorker w : all) {
            if (w.getChannel().isActive()) {
                workers.add(w);
            }
        }
        // Rotated each round, so that when there is less work than room the first workers in the
        // registry do not always get it; claimed in chunks, one script run each.
        if (!workers.isEmpty()) {
            java.util.Collections.rotate(workers, -(int) (rounds.get() % workers.size()));
        }
        List<CompletableFuture<List<ClaimResult>>> claims = new ArrayList<>();
        for (int from = 0; from < workers.size(); from += CLAIM_CHUNK) {
            List<ConnectedWorker> chunk = workers.subList(from, Math.min(workers.size(), from + CLAIM_CHUNK));
            List<WorkerSession> targets = new ArrayList<>(chunk.size());
            for (ConnectedWorker w : chunk) {
                targets.add(new WorkerSession(w.getWorkerId(), w.getSessionId()));
            }
            // A claim that failed in transit (a timeout, a reconnect) may have run in Redis: retried
            // once with the same request id, it returns that answer instead of leaving its tasks
            // ASSIGNED to no one until their ack deadline (each costing an attempt).
            String request = "c-" + UUID.randomUUID();
            claims.add(core.claim(targets, batchSize, request, leader)
                    .exceptionallyCompose(e -> {
                        log.info("claim {} for {} workers failed ({}); asking again", request, chunk.size(), e.toString());
                        return core.claim(targets, batchSize, request, leader);
                    })
                    .thenApply(results -> {
                        for (int i = 0; i < chunk.size(); i++) {
                            deliver(chunk.get(i), results.get(i));
                        }
                        return results;
                    })
                    .exceptionally(e -> {
                        log.warn("claim for {} workers failed: {}", chunk.size(), e.toString());
                        return List.of();
                    }));
        }
        CompletableFuture.allOf(claims.toArray(new CompletableFuture<?>[0])).whenComplete((v, e) -> {
            boolean full = false;
            boolean sawEmpty = false;
            for (CompletableFuture<List<ClaimResult>> f : claims) {
                for (ClaimResult r : f.getNow(List.of())) {
                    if (r.getStatus() == ClaimStatus.OK) {
                        full |= r.getAssignments().size() >= batchSize;
                        sawEmpty |= r.getQueued() == 0;
                    }
                }
            }
            if (sawEmpty && !full) {
                // Work that arrives from now on bumps the signal count, so this cannot hide it.
                emptyAt = signals;
            }
            drained = sawEmpty;
            running.set(false);
            if (full || requested.get()) {
                trigger();
            }
        });
    }

    /** Sends the assignments. */
    private void deliver(ConnectedWorker worker, ClaimResult result) {
        if (result.getStatus() != ClaimStatus.OK) {
            log.debug("worker {} cannot claim: {}", worker.getWorkerId(), result.getStatus());
            return;
        }
        List<ExecuteTask> batch = new ArrayList<>(result.getAssignments().size());
        List<TaskLogManager.AttemptStart> starts = new ArrayList<>(result.getAssignments().size());
        for (Assignment a : result.getAssignments()) {
            try {
                ExecuteTask msg = SpecReader.executeTask(a);
                holders.assigned(a.getTaskId(), a.getEpoch(), worker.getWorkerId(), worker.getSessionId());
                starts.add(new TaskLogManager.AttemptStart(a.getTaskId(), msg.getTraceId(), a.getEpoch(), a.getAttempt()));
                batch.add(msg);
            } catch (java.io.IOException | RuntimeException e) {
                // The assignment stays ASSIGNED; the reaper re-queues it after its ack deadline.
                log.error("cannot send task {} to {}: {}", a.getTaskId(), worker.getWorkerId(), e.toString());
            }
        }
        if (!batch.isEmpty()) {
            try {
                logs.openAll(starts);
            } catch (RuntimeException e) {
                // Task ids and epochs come from the claim script: this would be a bug. The lines
                // still reach the log: a batch of an attempt not started here starts it (after the
                // log manager read the task's record).
                log.error("cannot start the logs of {} tasks for {}: {}", starts.size(), worker.getWorkerId(), e.toString());
            }
            send(worker, batch);
        }
    }

    /**
     * Writes a claim's assignments to the worker's channel in one task on its event loop, with one
     * flush: one system call and one wake-up of the worker for the batch, not one per task.
     */
    private void send(ConnectedWorker worker, List<ExecuteTask> batch) {
        Channel channel = worker.getChannel();
        try {
            channel.eventLoop().execute(() -> {
                for (ExecuteTask msg : batch) {
                    channel.write(msg);
                }
                channel.flush();
            });
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // The connection's event loop is stopping: as for a closed channel, the assignments
            // stay ASSIGNED and the reaper re-queues them after their ack deadline.
            log.debug("worker {}: its connection is closing; {} assignments not sent", worker.getWorkerId(), batch.size());
            return;
        }
        sent.addAndGet(batch.size());
        if (log.isDebugEnabled()) {
            for (ExecuteTask msg : batch) {
                log.debug("sent task {} epoch {} attempt {} to {}", msg.getTaskId(), msg.getEpoch(), msg.getAttempt(),
                        worker.getWorkerId());
            }
        }
    }
}
