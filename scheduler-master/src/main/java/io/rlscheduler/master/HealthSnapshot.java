package io.rlscheduler.master;

import io.rlscheduler.core.WorkerState;
import io.rlscheduler.protocol.RejectReason;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** A point-in-time view of a master's health, from {@link SchedulerMaster#health()}. Immutable. */
public final class HealthSnapshot {

    private final String masterId;
    private final boolean leader;
    private final String transport;
    private final int connectedWorkers;
    private final Map<WorkerState, Integer> workersByState;
    private final long queueDepth;
    private final long parkedTasks;
    private final long assignedTasks;
    private final long runningTasks;
    private final int eventLoops;
    private final long pendingEventLoopTasks;
    private final long dispatchRounds;
    private final long tasksDispatched;
    private final long reaperPasses;
    private final long reaperFailures;
    private final long eventGaps;
    private final int logWriteBacklog;
    private final int logSyncBacklog;
    private final int openLogFiles;
    private final int logFollowers;
    private final int logUploadsPending;
    private final long logUploadsRefused;
    private final List<WorkerUsage> connectedWorkerUsage;
    private final HolderRefusals holderRefusals;
    private final int knownAttemptHolders;
    private final LimitCounts limitCounts;

    /**
     * How often the limits on authenticated workers were met since start.
     *
     * @param throttledReads      pauses of a connection's reads for sending faster than its rate
     * @param openAttemptRefusals log batches refused for one attempt more than a connection may have open
     * @param logsCut             task logs cut at their size limit
     * @param idleCloses          authenticated connections closed for sending nothing for the idle timeout
     */
    record LimitCounts(long throttledReads, long openAttemptRefusals, long logsCut, long idleCloses) {
    }
    private final Map<RejectReason, Long> refusedHellos;
    private final SharingRepairs sharingRepairs;

    /**
     * The repair passes of the sharing between owners this master ran since start.
     *
     * @param passes      passes run, failed ones included
     * @param corrections figures that disagreed with the task records and were corrected
     * @param failures    passes that failed (Redis away)
     */
    public record SharingRepairs(long passes, long corrections, long failures) {
    }

    HealthSnapshot(String masterId, boolean leader, String transport, int connectedWorkers, Map<WorkerState, Integer> workersByState,
                   long queueDepth, long parkedTasks, long assignedTasks, long runningTasks, int eventLoops, long pendingEventLoopTasks,
                   long dispatchRounds, long tasksDispatched, long reaperPasses, long reaperFailures, long eventGaps, int logWriteBacklog,
                   int logSyncBacklog, int openLogFiles, int logFollowers, int logUploadsPending, long logUploadsRefused,
                   List<WorkerUsage> connectedWorkerUsage, HolderRefusals holderRefusals, int knownAttemptHolders,
                   LimitCounts limitCounts, Map<RejectReason, Long> refusedHellos, SharingRepairs sharingRepairs) {
        this.sharingRepairs = sharingRepairs;
        this.masterId = masterId;
        this.leader = leader;
        this.transport = transport;
        this.connectedWorkers = connectedWorkers;
        EnumMap<WorkerState, Integer> copy = new EnumMap<>(WorkerState.class);
        for (WorkerState s : WorkerState.values()) {
            copy.put(s, workersByState.getOrDefault(s, 0));
        }
        this.workersByState = Collections.unmodifiableMap(copy);
        this.queueDepth = queueDepth;
        this.parkedTasks = parkedTasks;
        this.assignedTasks = assignedTasks;
        this.runningTasks = runningTasks;
        this.eventLoops = eventLoops;
        this.pendingEventLoopTasks = pendingEventLoopTasks;
        this.dispatchRounds = dispatchRounds;
        this.tasksDispatched = tasksDispatched;
        this.reaperPasses = reaperPasses;
        this.reaperFailures = reaperFailures;
        this.eventGaps = eventGaps;
        this.logWriteBacklog = logWriteBacklog;
        this.logSyncBacklog = logSyncBacklog;
        this.openLogFiles = openLogFiles;
        this.logFollowers = logFollowers;
        this.logUploadsPending = logUploadsPending;
        this.logUploadsRefused = logUploadsRefused;
        this.connectedWorkerUsage = List.copyOf(connectedWorkerUsage);
        this.holderRefusals = holderRefusals;
        this.knownAttemptHolders = knownAttemptHolders;
        this.limitCounts = limitCounts;
        EnumMap<RejectReason, Long> refused = new EnumMap<>(RejectReason.class);
        refused.putAll(refusedHellos);
        this.refusedHellos = Collections.unmodifiableMap(refused);
    }

    /**
     * Returns the repair passes of the sharing between owners this master ran (the leader runs one
     * every {@code sharingRepairInterval}) and how many figures they corrected: above zero, something
     * outside the scripts changed the owners' counters (see the master's WARN log for which).
     */
    public SharingRepairs getSharingRepairs() { return sharingRepairs; }

    /** Returns this master's id. */
    public String getMasterId() { return masterId; }
    /** Returns whether this master holds the leadership lease (dispatches and reaps). */
    public boolean isLeader() { return leader; }
    /** Returns the socket transport in use, "epoll" or "nio". */
    public String getTransport() { return transport; }
    /** Returns how many workers hold an authenticated connection to this master. */
    public int getConnectedWorkers() { return connectedWorkers; }
    /** Returns the registered workers by derived state (all states present, zero where none). */
    public Map<WorkerState, Integer> getWorkersByState() { return workersByState; }
    /** Returns how many tasks wait in the queue, parked ones included. */
    public long getQueueDepth() { return queueDepth; }
    /**
     * Returns how many of the queued tasks are parked: no registered worker could run them (more
     * GPUs, CPU slots or memory than any has in all, or labels none has), so claims pass them over
     * until a worker that could registers. Above zero: look at their {@code whyPending()}; cancel
     * them, or add such a worker.
     */
    public long getParkedTasks() { return parkedTasks; }
    /** Returns how many tasks are assigned but not yet started. */
    public long getAssignedTasks() { return assignedTasks; }
    /** Returns how many tasks are running. */
    public long getRunningTasks() { return runningTasks; }
    /** Returns the number of I/O event loops. */
    public int getEventLoops() { return eventLoops; }
    /** Returns the tasks waiting in the event loops' queues, summed: a backlog here means overload. */
    public long getPendingEventLoopTasks() { return pendingEventLoopTasks; }
    /** Returns how many dispatch rounds ran since start. */
    public long getDispatchRounds() { return dispatchRounds; }
    /** Returns how many assignments were sent to workers since start. */
    public long getTasksDispatched() { return tasksDispatched; }
    /** Returns how many reaper passes ran since start, failed ones included. */
    public long getReaperPasses() { return reaperPasses; }
    /**
     * Returns how many reaper passes failed since start (Redis unreachable or too slow; each is
     * logged). While they fail, expired leases are not taken back: tasks of dead workers wait.
     */
    public long getReaperFailures() { return reaperFailures; }
    /**
     * Returns how many times since start this master found task events trimmed from the stream
     * before it read them (it then re-read the tasks it waits on; see operations.md, failure
     * modes). Above zero: raise {@code eventStreamMaxLength}, or find what held the master's
     * event thread (a task listener that blocks) or its connection to Redis.
     */
    public long getEventGaps() { return eventGaps; }
    /**
     * Returns the jobs waiting for the log I/O threads (batches of lines, attempt starts and ends,
     * follower attaches and detaches, record look-ups' answers: queued, not yet begun). Near zero in health; a number that keeps growing
     * means the log disk or threads cannot keep up, and the lines wait in the master's memory.
     */
    public int getLogWriteBacklog() { return logWriteBacklog; }
    /**
     * Returns the ended log files waiting to be forced to disk (queued, not yet begun). Their
     * followers get END_OF_STREAM only once forced; a growing number means a slow disk.
     */
    public int getLogSyncBacklog() { return logSyncBacklog; }
    /** Returns the log files open for appending (about the log manager's open-file limit at most, by default 256). */
    public int getOpenLogFiles() { return openLogFiles; }
    /** Returns the live log follows (followLogs and followMetrics calls not ended). */
    public int getLogFollowers() { return logFollowers; }
    /**
     * Returns the ended logs this master has not yet copied into the artifact store (queued, being
     * sent, or waiting to retry after the store refused); their files are only in this master's
     * log directory meanwhile. Near zero in health; a number that stays up means the store is down.
     */
    public int getLogUploadsPending() { return logUploadsPending; }
    /**
     * Returns how many log uploads the artifact store refused since start (each is retried, 1 s
     * doubling to 1 min apart; the first refusal of each log is logged).
     */
    public long getLogUploadsRefused() { return logUploadsRefused; }

    /**
     * Returns what each worker connected to this master said of its machine in its last
     * heartbeat (CPU load, memory, each GPU's memory and utilisation), by worker id; a worker
     * connected but not heard from yet is left out. Unmodifiable.
     */
    public List<WorkerUsage> getWorkerUsage() { return connectedWorkerUsage; }

    /**
     * Returns the workers' task-scoped frames refused since start because the sender did not
     * hold their attempt, by reason, and the connections closed for them.
     */
    public HolderRefusals getHolderRefusals() { return holderRefusals; }
    /**
     * Returns how many attempts this master keeps the holder of in memory, to check their workers'
     * frames without reading Redis: about the attempts in flight (an entry goes once its holder
     * acknowledged it and its log ended), plus those whose acknowledgement or log end did not come
     * here (kept up to a minute after the task's end, ten minutes without a frame).
     */
    public int getKnownAttemptHolders() { return knownAttemptHolders; }
    /**
     * Returns how often since start an authenticated worker connection's reads were paused for
     * sending faster than {@code workerInboundRate} allows beyond its burst. Growing while no
     * worker should send that much: a peer that floods the master.
     */
    public long getThrottledReads() { return limitCounts.throttledReads(); }
    /**
     * Returns how many log batches were refused since start because their connection had
     * {@code maxOpenAttemptsPerWorker} attempts open already (each answered {@code LIMIT_EXCEEDED}).
     */
    public long getOpenAttemptRefusals() { return limitCounts.openAttemptRefusals(); }
    /** Returns how many task logs this master cut at {@code maxLogBytesPerTask} since start. */
    public long getLogsCut() { return limitCounts.logsCut(); }
    /** Returns how many authenticated connections were closed since start for sending nothing for {@code workerIdleTimeout}. */
    public long getIdleCloses() { return limitCounts.idleCloses(); }
    /**
     * Returns the hellos this master refused since start, by reason (every reason present, zero
     * where none; unmodifiable): {@code DUPLICATE_SESSION} (another process said hello with the id
     * of a registered worker), {@code KEY_REVOKED}, {@code BAD_KEY}, {@code UNKNOWN_WORKER},
     * {@code AUTHENTICATION_FAILED} and the others; {@code NOT_LEADER} counts the workers a
     * standby sent on to the leader, and {@code UNSPECIFIED} the hellos it could not check (Redis
     * away, too many signature checks waiting). Each refusal is also logged with the peer.
     */
    public Map<RejectReason, Long> getRefusedHellos() { return refusedHellos; }

    /** Returns how many hellos were refused for {@code reason} since start. */
    public long getRefusedHellos(RejectReason reason) { return refusedHellos.getOrDefault(reason, 0L); }

    @Override
    public String toString() {
        return "HealthSnapshot{master=" + masterId + ", leader=" + leader + ", transport=" + transport + ", connectedWorkers=" + connectedWorkers
                + ", workersByState=" + workersByState + ", queueDepth=" + queueDepth + ", parked=" + parkedTasks
                + ", assigned=" + assignedTasks
                + ", running=" + runningTasks + ", eventLoops=" + eventLoops + ", pendingEventLoopTasks="
                + pendingEventLoopTasks + ", dispatchRounds=" + dispatchRounds + ", tasksDispatched=" + tasksDispatched
                + ", reaperPasses=" + reaperPasses + ", reaperFailures=" + reaperFailures + ", eventGaps=" + eventGaps + ", logWriteBacklog=" + logWriteBacklog
                + ", logSyncBacklog=" + logSyncBacklog + ", openLogFiles=" + openLogFiles + ", logFollowers=" + logFollowers
                + ", logUploadsPending=" + logUploadsPending + ", logUploadsRefused=" + logUploadsRefused + ", limits=" + limitCounts
                + ", workerUsage=" + connectedWorkerUsage + ", holderRefusals=" + holderRefusals
                + ", refusedHellos=" + refusedHellos + ", sharingRepairs=" + sharingRepairs + '}';
    }
}
