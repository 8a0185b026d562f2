package io.rlscheduler.master;

import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.internal.AttemptHolders;
import io.rlscheduler.master.internal.ConnectedWorker;
import io.rlscheduler.master.internal.Dispatcher;
import io.rlscheduler.master.internal.HolderStats;
import io.rlscheduler.master.internal.LeaderElector;
import io.rlscheduler.master.internal.Reaper;
import io.rlscheduler.master.internal.SharingRepair;
import io.rlscheduler.master.internal.RpcServer;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.master.internal.TaskWatcher;
import io.rlscheduler.master.internal.WorkerLimits;
import io.rlscheduler.master.internal.WorkerRegistry;
import io.rlscheduler.master.internal.auth.HelloRefusals;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.ResourceUsage;
import io.rlscheduler.protocol.RunningTask;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Assembles a {@link HealthSnapshot}: the Redis figures (workers by state, queue, parked,
 * assigned and running tasks) read in parallel, beside the master's own counters.
 */
final class MasterHealth {

    private final String masterId;
    private final LeaseCore core;
    private final WorkerRegistry registry;
    private final RpcServer rpc;
    private final LeaderElector elector;
    private final Dispatcher dispatcher;
    private final Reaper reaper;
    private final SharingRepair repair;
    private final TaskWatcher watcher;
    private final TaskLogManager logs;
    private final HolderStats holderStats;
    private final AttemptHolders holders;
    private final WorkerLimits workerLimits;
    private final HelloRefusals refusals;

    MasterHealth(String masterId, LeaseCore core, WorkerRegistry registry, RpcServer rpc, LeaderElector elector,
                 Dispatcher dispatcher, Reaper reaper, TaskWatcher watcher, TaskLogManager logs, HolderStats holderStats,
                 AttemptHolders holders, WorkerLimits workerLimits, HelloRefusals refusals, SharingRepair repair) {
        this.repair = repair;
        this.holderStats = holderStats;
        this.holders = holders;
        this.masterId = masterId;
        this.core = core;
        this.registry = registry;
        this.rpc = rpc;
        this.elector = elector;
        this.dispatcher = dispatcher;
        this.reaper = reaper;
        this.watcher = watcher;
        this.logs = logs;
        this.workerLimits = workerLimits;
        this.refusals = refusals;
    }

    /** Waits for one Redis answer within the API timeout. */
    interface Await {
        <T> T await(CompletableFuture<T> answer);
    }

    /** Reads the snapshot; {@code await} bounds each Redis answer. */
    HealthSnapshot read(Await await) {
        CompletableFuture<List<WorkerInfo>> workers = core.listWorkers();
        CompletableFuture<Long> queue = core.queueDepth();
        CompletableFuture<Long> parked = core.parkedCount();
        CompletableFuture<TaskPage> assigned = core.listTasks(TaskState.ASSIGNED, 0, 1);
        CompletableFuture<TaskPage> running = core.listTasks(TaskState.RUNNING, 0, 1);
        Map<WorkerState, Integer> byState = new EnumMap<>(WorkerState.class);
        for (WorkerInfo w : await.await(workers)) {
            byState.merge(w.getState(), 1, Integer::sum);
        }
        TaskLogManager.Load load = logs.load();
        TaskLogManager.Uploads uploads = logs.uploads();
        return new HealthSnapshot(masterId, elector.isLeader(), rpc.transportName(), registry.size(), byState,
                await.await(queue), await.await(parked), await.await(assigned).getTotal(),
                await.await(running).getTotal(), rpc.eventLoops(), rpc.pendingEventLoopTasks(),
                dispatcher.getRounds(), dispatcher.getSent(), reaper.getPasses(), reaper.getFailures(), watcher.getGaps(),
                load.writeBacklog(), load.syncBacklog(), load.openFiles(), load.followers(), uploads.pending(),
                uploads.refused(), usage(), new HolderRefusals(holderStats.notHolder(), holderStats.stale(),
                        holderStats.unknownTask(), holderStats.disconnects()), holders.size(),
                new HealthSnapshot.LimitCounts(workerLimits.getThrottledReads(),
                        workerLimits.getOpenAttemptRefusals(), logs.logsCut(), workerLimits.getIdleCloses()),
                refusals.snapshot(), new HealthSnapshot.SharingRepairs(repair.getPasses(), repair.getCorrections(),
                        repair.getFailures()));
    }

    /** What the connected workers' last heartbeats said of their machines, by worker id. */
    private List<WorkerUsage> usage() {
        List<WorkerUsage> usage = new ArrayList<>();
        for (ConnectedWorker w : registry.snapshot()) {
            Heartbeat hb = w.getLastHeartbeat();
            if (hb == null) {
                continue;
            }
            ResourceUsage r = hb.getResources();
            List<WorkerUsage.Gpu> gpus = new ArrayList<>(r.getGpusCount());
            for (GpuStatus g : r.getGpusList()) {
                gpus.add(new WorkerUsage.Gpu(g.getIndex(), g.getUuid(), g.getName(), g.getMemoryTotalBytes(),
                        g.getMemoryUsedBytes(), g.getUtilizationPercent()));
            }
            List<WorkerUsage.Running> running = new ArrayList<>(hb.getRunningTasksCount());
            for (RunningTask t : hb.getRunningTasksList()) {
                running.add(new WorkerUsage.Running(t.getTaskId(), t.getEpoch(), t.getAttempt(), t.getLastLogSequence()));
            }
            usage.add(new WorkerUsage(w.getWorkerId(), w.getSessionId(), w.getLastHeartbeatAtMillis(), hb.getSentAtUnixMs(),
                    r.getCpuCount(), r.getCpuSlots(), r.getCpuLoad(), r.getMemoryTotalBytes(), r.getMemoryUsedBytes(), gpus,
                    running));
        }
        usage.sort(Comparator.comparing(WorkerUsage::getWorkerId));
        return usage;
    }
}
