package io.rlscheduler.chaos;

import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.store.DirectoryStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;

/**
 * Drives one chaos run through its phases: set up the workdir and the cluster, submit the tasks
 * while the faults run (and the {@link CheckpointWatch} records every checkpoint committed), bring
 * everything back, wait (bounded) for every task to end, check.
 * The seed feeds one random source, drawn in that order: the workload, the fault plan, then each
 * fault's victim and delay. Used by one thread; {@link #close()} may also come from a shutdown hook.
 */
final class ChaosDriver implements AutoCloseable {

    /** The tasks' end is awaited until this long before the budget runs out, which leaves time to check. */
    private static final Duration CHECK_RESERVE = Duration.ofSeconds(20);
    private static final long DRAIN_POLL_MILLIS = 500;
    private static final long LOG_POLL_MILLIS = 250;

    private final ChaosOptions opt;
    private final RunLog log;
    private volatile ChaosCluster cluster;

    ChaosDriver(ChaosOptions opt, RunLog log) {
        this.opt = opt;
        this.log = log;
    }

    /** Runs the whole drill and returns the verdict, whose summary is the last line printed. */
    ChaosReport execute() throws Exception {
        Path scripts = opt.getScripts().toAbsolutePath().normalize();
        for (String script : List.of(Workload.TASK_SCRIPT, "train.py")) {
            if (!Files.isRegularFile(scripts.resolve(script))) {
                throw new IllegalStateException(scripts.resolve(script) + " not found; run from the repository root or pass --scripts");
            }
        }
        Workdir work = Workdir.create(opt.getWorkdir());
        log.writeTo(work.chaosLog());
        String namespace = "chaos-" + opt.getSeed() + "-" + UUID.randomUUID().toString().substring(0, 6);
        log.say("seed %d (replay: scripts/chaos.sh --seed %d), %d tasks, chaos phase %d s, budget %d s", opt.getSeed(),
                opt.getSeed(), opt.getTasks(), opt.getDuration().toSeconds(), opt.getBudget().toSeconds());
        log.say("workdir %s", work.root());
        long deadline = log.startNanos() + opt.getBudget().toNanos();

        ChaosCluster c = new ChaosCluster(work, scripts, namespace, log);
        cluster = c;
        c.start();

        Random rnd = new Random(opt.getSeed());
        Workload workload = Workload.draw(rnd, opt.getTasks(), opt.getDuration());
        CheckpointLedger ledger = new CheckpointLedger();
        // The run's own handle on the workers' store: read-only here, for the checkpoints' contents.
        DirectoryStore store = new DirectoryStore(work.store());
        CheckpointWatch watch = new CheckpointWatch(c.artifacts(), store, workload.taskIds(), ledger);
        watch.start();
        TaskSubmitter submitter = new TaskSubmitter(c.api(), workload, deadline, log);
        submitter.start();
        FaultPlan plan = FaultPlan.draw(rnd, opt.getDuration(), !c.redis().isExternal());
        FaultInjector faults = new FaultInjector(c, rnd, log);
        faults.run(plan, opt.getDuration(), deadline);
        c.heal(deadline);
        submitter.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        if (submitter.isAlive()) {
            log.say("submitter still running at the deadline; stopping it");
            submitter.interrupt();
        }
        Evidence evidence = new Evidence(c, work, ledger);
        drain(evidence, workload.taskIds(), deadline - CHECK_RESERVE.toNanos());
        watch.finish();
        store.close();

        ChaosReport report = new ChaosChecks(evidence, log).check(workload.taskIds(), faults.counts(),
                c.unexpectedExits(), opt.getSeed());
        log.say("finished in %.1f s; workdir kept for inspection", log.elapsedSeconds());
        log.sayPlain(report.summary());
        return report;
    }

    /** Waits until every task has ended, and the log of each success holds its end line, or the deadline passes. */
    private void drain(Evidence evidence, List<String> taskIds, long deadline) throws InterruptedException {
        ChaosCluster c = cluster;
        log.say("waiting for the %d tasks to end (at most %d s)", taskIds.size(),
                Math.max(0, (deadline - System.nanoTime()) / 1_000_000_000));
        List<String> open = new ArrayList<>(taskIds);
        long lastNote = System.nanoTime();
        while (!open.isEmpty() && System.nanoTime() - deadline < 0) {
            c.pollProcesses();
            open.removeIf(id -> {
                try {
                    return c.api().getTask(id).map(r -> r.getState().isTerminal()).orElse(false);
                } catch (RuntimeException e) {
                    return false;
                }
            });
            if (System.nanoTime() - lastNote > Duration.ofSeconds(10).toNanos() && !open.isEmpty()) {
                log.say("  %d tasks not ended yet: %s", open.size(), open.size() <= 8 ? open : open.subList(0, 8) + "...");
                lastNote = System.nanoTime();
            }
            if (!open.isEmpty()) {
                Thread.sleep(DRAIN_POLL_MILLIS);
            }
        }
        if (open.isEmpty()) {
            log.say("every task has ended");
        } else {
            log.say("%d tasks had not ended at the deadline: %s", open.size(), open);
        }
        // The leader writes a log's last lines and its end marker just after the success is
        // recorded; give the files a moment to be complete.
        long logDeadline = Math.min(deadline + Duration.ofSeconds(10).toNanos(), System.nanoTime() + Duration.ofSeconds(15).toNanos());
        List<String> ids = new ArrayList<>(taskIds);
        while (System.nanoTime() - logDeadline < 0) {
            ids.removeIf(id -> {
                Optional<TaskRecord> r = evidence.record(id);
                return r.isEmpty() || r.get().getState() != TaskState.SUCCEEDED || evidence.attemptEnded(id, r.get().getEpoch());
            });
            if (ids.isEmpty()) {
                break;
            }
            Thread.sleep(LOG_POLL_MILLIS);
        }
    }

    /** Stops everything the run started; idempotent. */
    @Override
    public void close() {
        ChaosCluster c = cluster;
        if (c != null) {
            c.close();
        }
    }
}
