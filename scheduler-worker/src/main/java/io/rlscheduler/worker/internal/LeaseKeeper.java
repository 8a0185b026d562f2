package io.rlscheduler.worker.internal;

import io.netty.channel.Channel;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.WorkerRevokedException;
import io.rlscheduler.core.internal.HeartbeatResult;
import io.rlscheduler.core.internal.HeartbeatStatus;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.RunningTask;
import io.rlscheduler.worker.StopReason;
import io.rlscheduler.worker.TaskExecution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of the attempts this worker runs. Every heartbeat interval it renews its
 * liveness and its attempts' task leases in Redis directly (not through the master, so losing the
 * master does not stop its work); but while it runs nothing and the master renews its liveness for
 * it (the acknowledgement of its last heartbeat says so, {@link #renewedByMaster}), it leaves the
 * liveness to the master, which renews many idle workers' in one script run, and renews it itself
 * again at the first heartbeat after one the master did not renew ({@link #leftToMaster}). It
 * passes each renewal on to the attempt's execution as a keepalive; stops the attempts whose lease Redis revoked or whose task a caller cancelled; stops
 * every attempt whose lease it could not renew for {@link #fenceAfter} (self-fencing, before the
 * lease can expire and the task run elsewhere); and sends the master a heartbeat naming the
 * attempts it holds. Runs on the worker's timer thread.
 */
public final class LeaseKeeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    private final WorkerRuntime runtime;
    private final WorkerRegistration registration;
    private final Attempts attempts;
    private final ResourceProbe probe;
    private final Duration fenceAfter;
    private final BiConsumer<Attempt, StopReason> stop;
    private final AtomicLong sequence = new AtomicLong();
    /**
     * How recent, in heartbeat intervals, the master's last renewal must be for this worker to
     * leave the next one to it: the acknowledgement of its previous heartbeat, half an interval
     * allowed for lateness. So a worker renews itself at the first heartbeat after one the master
     * did not renew, with about a third of a three-interval lease left, as when one of its own
     * renewals fails.
     */
    public static final double MASTER_RENEWAL_WITHIN = 1.5;
    /**
     * The shortest liveness lease, in heartbeat intervals, with which a worker leaves its renewals
     * to the master; with a shorter one it renews every time itself.
     */
    public static final int MASTER_RENEWAL_MIN_LEASE = 3;
    /**
     * {@link System#nanoTime()} when the newest heartbeat the master renewed the lease for was sent;
     * 0: never. Written under {@link #sent}'s lock.
     */
    private volatile long masterRenewedAt;
    /** The sequences and send times of the last heartbeats sent (by sequence modulo the size); guarded by itself. */
    private static final int SENT_SLOTS = 8;
    private final long[] sent = new long[SENT_SLOTS];
    private final long[] sentAt = new long[SENT_SLOTS];
    /** Whether a registration found this worker id revoked; touched on the timer thread only. */
    private boolean revoked;

    /**
     * @param stop stops an attempt for a reason (the attempt lifecycle's stop request)
     */
    public LeaseKeeper(WorkerRuntime runtime, WorkerRegistration registration, Attempts attempts, ResourceProbe probe,
                       BiConsumer<Attempt, StopReason> stop) {
        this.runtime = runtime;
        this.registration = registration;
        this.attempts = attempts;
        this.probe = probe;
        this.fenceAfter = fenceAfter(runtime.options().getCoreOptions(), runtime.options().getKillGrace());
        this.stop = stop;
    }

    /**
     * Returns how long an attempt may go without a lease renewal before it is stopped: the task
     * lease minus a margin for stopping it (the kill grace and two heartbeats), but never less
     * than half the lease. Stopping then ends well before the lease can expire in Redis.
     */
    public static Duration fenceAfter(CoreOptions options, Duration killGrace) {
        Duration lease = options.getTaskLease();
        Duration margin = killGrace.plus(options.getHeartbeatInterval().multipliedBy(2));
        Duration half = lease.dividedBy(2);
        return lease.minus(margin.compareTo(half) < 0 ? margin : half);
    }

    /** Starts the heartbeats on the timer thread. */
    public void start() {
        long hb = runtime.options().getCoreOptions().getHeartbeatInterval().toMillis();
        runtime.timers().scheduleWithFixedDelay(this::heartbeat, hb, hb, TimeUnit.MILLISECONDS);
    }

    private void heartbeat() {
        try {
            heartbeatOnce();
        } catch (RuntimeException | Error e) {
            // Thrown out of a scheduled task, it would cancel every later heartbeat, silently.
            log.error("worker {}: a heartbeat failed; the next one comes as scheduled", runtime.workerId(), e);
        }
    }

    /**
     * The master renewed this worker's liveness lease in Redis for the heartbeat of this sequence
     * (its acknowledgement said so). The renewal is dated from when that heartbeat was sent, not
     * from when the acknowledgement came: Redis ran it after the heartbeat left, however late the
     * answer. On the link's event loop.
     */
    public void renewedByMaster(long heartbeatSequence) {
        synchronized (sent) {
            int slot = (int) (heartbeatSequence & (SENT_SLOTS - 1));
            if (sent[slot] == heartbeatSequence && (masterRenewedAt == 0 || sentAt[slot] - masterRenewedAt > 0)) {
                masterRenewedAt = sentAt[slot];
            }
        }
    }

    /**
     * Whether the liveness lease may be left to the master this time: the worker runs nothing, the
     * master renews with a lease no shorter than this worker's (as it announced), the lease spans at
     * least {@link #MASTER_RENEWAL_MIN_LEASE} intervals, and the master renewed it for a heartbeat
     * sent within the last {@link #MASTER_RENEWAL_WITHIN} intervals.
     */
    private boolean leftToMaster(List<Attempt> held) {
        long at = masterRenewedAt;
        if (!held.isEmpty() || at == 0) {
            return false;
        }
        CoreOptions core = runtime.options().getCoreOptions();
        if (runtime.link().masterLivenessLeaseMillis() < core.getLivenessLease().toMillis()) {
            return false;
        }
        return leftToMaster(core, System.nanoTime() - at);
    }

    /**
     * The rule of {@link #leftToMaster(List)} for an idle worker whose master renewed its lease for
     * a heartbeat sent {@code sinceNanos} ago; the heartbeat benchmark's simulated workers follow
     * it too.
     */
    public static boolean leftToMaster(CoreOptions core, long sinceNanos) {
        long interval = core.getHeartbeatInterval().toNanos();
        return core.getLivenessLease().toNanos() >= MASTER_RENEWAL_MIN_LEASE * interval
                && sinceNanos <= MASTER_RENEWAL_WITHIN * interval;
    }

    private void heartbeatOnce() {
        List<Attempt> held = attempts.running();
        if (leftToMaster(held)) {
            send(held);
            return;
        }
        List<TaskLease> leases = new ArrayList<>(held.size());
        for (Attempt a : held) {
            leases.add(a.getLease());
        }
        long sentAt = System.nanoTime();
        try {
            HeartbeatResult result = runtime.core().heartbeat(runtime.workerId(), runtime.sessionId(), leases).get(
                    runtime.options().getCoreOptions().getHeartbeatInterval().toMillis() * 2, TimeUnit.MILLISECONDS);
            if (result.getStatus() == HeartbeatStatus.OK) {
                renewed(held, result, sentAt);
            } else if (result.getStatus() == HeartbeatStatus.UNKNOWN_WORKER) {
                if (!revoked) {
                    log.warn("Redis does not know worker {}; registering again", runtime.workerId());
                }
                runtime.core().register(registration).whenComplete((taken, error) -> {
                    if (error instanceof WorkerRevokedException || error != null && error.getCause() instanceof WorkerRevokedException) {
                        onTimers(this::revoked);
                    }
                });
            } else {
                log.error("another process registered worker id {}; stopping this worker's tasks", runtime.workerId());
                held.forEach(a -> stop.accept(a, StopReason.FENCED));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("heartbeat to Redis failed: {}", e.toString());
        }
        selfFence();
        send(held);
    }

    private void renewed(List<Attempt> held, HeartbeatResult result, long sentAt) {
        for (Attempt a : held) {
            TaskLease lease = a.getLease();
            if (result.getRevokedTasks().contains(lease)) {
                stop.accept(a, StopReason.FENCED);
            } else {
                a.renewed(sentAt);
                TaskExecution execution = a.getExecution();
                if (execution != null) {
                    execution.keepAlive();
                }
            }
            if (result.getCancelRequested().contains(lease)) {
                stop.accept(a, StopReason.CANCELLED);
            }
        }
    }

    /**
     * This worker id was revoked: its registration was removed and its tasks taken back (they may
     * run elsewhere already), so every attempt still running here stops at once.
     */
    private void revoked() {
        if (!revoked) {
            revoked = true;
            log.error("worker id {} was revoked: its tasks were taken back, and it cannot register or connect until an"
                    + " operator issues it a new key; stopping its attempts", runtime.workerId());
        }
        attempts.running().forEach(a -> stop.accept(a, StopReason.FENCED));
    }

    private void onTimers(Runnable task) {
        try {
            runtime.timers().execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // The worker is stopping: its attempts stop with it.
        }
    }

    /** Stops every attempt whose lease this worker could not renew for {@link #fenceAfter}. */
    private void selfFence() {
        for (Attempt a : attempts.running()) {
            long unrenewed = a.unrenewedNanos();
            if (unrenewed > fenceAfter.toNanos()) {
                log.warn("task {} epoch {}: lease not renewed for {} ms; stopping it before the lease can expire",
                        a.getLease().getTaskId(), a.getLease().getEpoch(), TimeUnit.NANOSECONDS.toMillis(unrenewed));
                stop.accept(a, StopReason.FENCED);
            }
        }
    }

    /** Sends the master the heartbeat of the wire: this worker's resources and the attempts it holds. */
    private void send(List<Attempt> held) {
        Channel channel = runtime.link().readyChannel();
        if (channel == null) {
            return;
        }
        long seq = sequence.incrementAndGet();
        synchronized (sent) {
            int slot = (int) (seq & (SENT_SLOTS - 1));
            sent[slot] = seq;
            sentAt[slot] = System.nanoTime();
        }
        Heartbeat.Builder hb = Heartbeat.newBuilder().setWorkerId(runtime.workerId()).setSessionId(runtime.sessionId())
                .setSequence(seq).setSentAtUnixMs(System.currentTimeMillis())
                .setResources(probe.sample(runtime.options().getCpuSlots()));
        for (Attempt a : held) {
            hb.addRunningTasks(RunningTask.newBuilder().setTaskId(a.getLease().getTaskId()).setEpoch(a.getLease().getEpoch())
                    .setAttempt(a.getTask().getAttempt()).setLastLogSequence(a.getLogs().getLastSequence()));
        }
        channel.writeAndFlush(hb.build());
    }
}
