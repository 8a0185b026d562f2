package io.rlscheduler.bench.harness;

import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * {@code fair-share}: what the sharing between owners does for a colleague, and what it costs the
 * dispatch path.
 *
 * <p><b>Wait.</b> One owner submits a sweep of {@code sweep} tasks, each holding its CPU slot for
 * {@code taskMs} (an in-JVM executor: no process), on {@code waitWorkers} workers of one slot each;
 * once {@code sweepStarted} of them have started, another owner submits {@code colleagueTasks}
 * tasks, one at a time, each once the one before has started and after a pseudo-random part of a
 * task's length. The figure is the median of their waits from submission to start, in units of a
 * task's length (goal: at most 1, the next free slot); each wait is kept, with when the first
 * task ended after the submission was stored (from the tasks' start times), how long after that
 * the colleague's task started (negative: it took a slot that was between two tasks), and how many
 * sweep tasks started after the submission was stored and before the colleague's task (0: none
 * overtook it; one claimed just before the submission was stored can still start after it).
 * First-come would have put the first behind the rest of the sweep; that wait is printed beside it.
 *
 * <p><b>Cost, on against off, in the same run on one cluster</b> (no-op tasks, as
 * dispatch-throughput and dispatch-latency): "off" is every task of one owner with no limits, so
 * the sharing has one owner to order and nothing to check; "on" spreads the tasks over
 * {@code owners} owners of different weights, each with every limit set (high enough not to stop
 * anything: the checks run, the tasks flow). The claim scripts are the same code either way; there
 * is no switch that removes them. Throughput: {@code pairs} pairs of batches of {@code tasks},
 * alternating off and on, the median of the on/off ratios (goal ≥ 0.9). Latency: {@code pairs} pairs of paced
 * batches of {@code rate} tasks/s for {@code seconds}, alternating off and on, submit to start: the
 * medians of the p50s and p99s (goal: p99 within 1 ms of off).
 */
public final class FairShare implements EndToEndBenchmark {

    @Override
    public String name() {
        return "fair-share";
    }

    @Override
    public String description() {
        return "a colleague's one task behind another owner's sweep, its wait in task lengths; dispatch with"
                + " many owners and limits against one owner without";
    }

    @Override
    public List<Param> parameters() {
        List<Param> own = List.of(
                new Param("sweep", "2000", "tasks of the sweep"),
                new Param("sweepStarted", "100", "sweep tasks started before the colleague submits"),
                new Param("taskMs", "50", "how long each sweep task holds its slot, ms"),
                new Param("waitWorkers", "4", "workers of the wait part, one CPU slot each"),
                new Param("colleagueTasks", "5", "the colleague's tasks, one at a time, each submitted once the one before started"),
                new Param("owners", "8", "owners the 'on' batches are spread over"),
                new Param("tasks", "20000", "tasks per throughput batch"),
                new Param("pairs", "5", "off/on pairs of throughput batches, and of latency batches"),
                new Param("warmup", "5000", "tasks per warm-up round (not measured)"),
                new Param("warmupRounds", "8", "most warm-up rounds"),
                new Param("inflight", "2000", "most submissions awaiting their answer"),
                new Param("rate", "1000", "tasks/s of the latency batches (dispatch-latency's default)"),
                new Param("seconds", "5", "seconds of each latency batch"));
        return java.util.stream.Stream.concat(own.stream(), LocalCluster.PARAMETERS.stream()).toList();
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        double waitInTasks = waitPart(p, params);
        costPart(p, params);
        params.put("goal", "wait <= 1 task length; throughput on/off >= 0.9; latency p99 on - off <= 1 ms");
        params.put("machine", Machine.describe());
        return new BenchResult(name(), "task lengths", Stats.round3(waitInTasks), "one task's length (the next free slot)",
                1.0, params);
    }

    /** The colleague's wait behind the sweep, in task lengths. */
    private double waitPart(BenchParams p, Map<String, Object> params) throws Exception {
        int sweep = p.getInt("sweep", 1);
        int started = Math.min(p.getInt("sweepStarted", 1), sweep - 1);
        int taskMs = p.getInt("taskMs", 1);
        int workers = p.getInt("waitWorkers", 1);
        NoopExecutor executor = new NoopExecutor(Duration.ofMillis(taskMs));
        LocalCluster.Settings base = LocalCluster.Settings.from(p, executor);
        LocalCluster.Settings settings = new LocalCluster.Settings(workers, 1, executor, base.dispatchBatch(), base.aof(),
                base.workParent(), base.tls());
        try (LocalCluster cluster = LocalCluster.start(settings)) {
            SchedulerMaster master = cluster.master();
            System.out.printf(Locale.ROOT, "# %s, wait: %d workers x 1 slot; a sweep of %,d tasks of %d ms by 'sweep',"
                    + " then one task by 'colleague' once %d have started%n", name(), workers, sweep, taskMs, started);
            Semaphore window = new Semaphore(1000);
            for (int i = 0; i < sweep; i++) {
                window.acquire();
                master.submitAsync(TaskSpec.python("noop.py").taskId(DispatchThroughput.taskId("sweep-", i)).cpuSlots(1)
                        .gpus(0).owner("sweep").build()).whenComplete((h, e) -> window.release());
            }
            window.acquire(1000);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (executor.distinctTasks() < started) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the sweep did not start " + started + " tasks in 120 s");
                }
                Thread.sleep(5); // polling the executor's count, outside any measured interval
            }
            int samples = p.getInt("colleagueTasks", 1);
            Random offsets = new Random(20);
            List<Double> waits = new ArrayList<>();
            List<Double> slotWaits = new ArrayList<>();
            List<Double> afterSlot = new ArrayList<>();
            List<Long> overtaken = new ArrayList<>();
            double firstCome = 0;
            for (int k = 0; k < samples; k++) {
                if (k > 0) {
                    // A pseudo-random phase against the slots' ends, so that the samples do not all
                    // land at the same point of a task's length.
                    Thread.sleep(offsets.nextInt(taskMs));
                }
                String colleague = "colleague-" + k;
                long submitted = System.nanoTime();
                master.submit(TaskSpec.python("noop.py").taskId(colleague).cpuSlots(1).gpus(0).owner("colleague").build());
                long stored = System.nanoTime();
                while (executor.startNanos(colleague) < 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the colleague's task " + colleague + " did not start");
                    }
                    Thread.sleep(1); // polling the executor's record; the start time is the executor's own
                }
                long start = executor.startNanos(colleague);
                if (k == 0) {
                    firstCome = (double) (sweep - (executor.distinctTasks() - 1)) / workers;
                }
                SlotView slots = SlotView.of(executor, sweep, k, submitted, stored, start,
                        TimeUnit.MILLISECONDS.toNanos(taskMs));
                waits.add(Stats.round3((start - submitted) / 1e6 / taskMs));
                slotWaits.add(Stats.round3(slots.nextFreeNanos() / 1e6));
                afterSlot.add(Stats.round3((start - submitted - slots.nextFreeNanos()) / 1e6));
                overtaken.add(slots.sweepStartedMeanwhile());
                System.out.printf(Locale.ROOT, "# colleague task %d: started %.1f ms after its submission (%.2f task"
                        + " lengths); the first task to end after it was stored ended %.1f ms after it; sweep tasks"
                        + " started after it was stored and before it: %d%n", k + 1,
                        (start - submitted) / 1e6, waits.get(k), slotWaits.get(k), slots.sweepStartedMeanwhile());
            }
            double inTasks = median(waits);
            System.out.printf(Locale.ROOT, "# measured: the colleague's %d tasks waited %s task lengths, median %.2f (goal <= 1);"
                    + " first-come, the first would have waited behind about %.0f task lengths%n", samples, waits, inTasks,
                    firstCome);
            params.put("wait_task_lengths", Stats.round3(inTasks));
            params.put("wait_task_lengths_each", waits);
            params.put("wait_task_lengths_max", Collections.max(waits));
            params.put("next_free_slot_ms_each", slotWaits);
            params.put("start_after_free_slot_ms_each", afterSlot);
            params.put("sweep_started_meanwhile_each", overtaken);
            params.put("first_come_wait_task_lengths", Stats.round1(firstCome));
            params.put("wait_goal_met", inTasks <= 1.0);
            for (int i = 0; i < sweep; i++) {
                String id = DispatchThroughput.taskId("sweep-", i);
                if (executor.startNanos(id) < 0) {
                    master.task(id).cancel();
                }
            }
            if (executor.repeatedStarts() != 0) {
                throw new IllegalStateException(executor.repeatedStarts() + " tasks started more than once");
            }
        }
        return ((Number) params.get("wait_task_lengths")).doubleValue();
    }

    /** Throughput and latency with many owners and limits against one owner without, on one cluster. */
    private void costPart(BenchParams p, Map<String, Object> params) throws Exception {
        int owners = p.getInt("owners", 1);
        int tasks = p.getInt("tasks", 1);
        int pairs = p.getInt("pairs", 1);
        int warmup = p.getInt("warmup", 0);
        int warmupRounds = p.getInt("warmupRounds", 1);
        int inflight = p.getInt("inflight", 1);
        int rate = p.getInt("rate", 1);
        int seconds = p.getInt("seconds", 1);
        NoopExecutor executor = new NoopExecutor();
        LocalCluster.Settings settings = LocalCluster.Settings.from(p, executor);
        IntFunction<String> one = i -> "anonymous";
        IntFunction<String> many = i -> "owner-" + (i % owners);
        try (LocalCluster cluster = LocalCluster.start(settings)) {
            SchedulerMaster master = cluster.master();
            for (int o = 0; o < owners; o++) {
                master.sharing().setLimits("owner-" + o, OwnerLimits.builder().weight(1.0 + o % 3).maxGpus(1000)
                        .maxRunning(100_000).maxQueued(1_000_000).maxGpusPerTask(8).rate(1_000_000.0).burst(1_000_000)
                        .build());
            }
            System.out.printf(Locale.ROOT, "# %s, cost: %d workers x %d slots; off = one owner, no limits; on = %d owners"
                    + " of weights 1-3, every limit set%n", name(), settings.workers(), settings.cpuSlotsPerWorker(), owners);
            long run = 0;
            for (int round = 1; warmup > 0 && round <= warmupRounds; round++) {
                long jit = Jit.cpuMillis();
                long t = DispatchThroughput.runBatch(master, "fs-w" + round + "-", warmup, inflight,
                        round % 2 == 0 ? many : one);
                run += warmup;
                double share = (Jit.cpuMillis() - jit) / (t / 1e6);
                System.out.printf(Locale.ROOT, "# warm-up round %d: %,.0f tasks/s, JIT CPU %.0f%% of a core%n", round,
                        warmup / (t / 1e9), 100 * share);
                if (share < Jit.SETTLED_SHARE && round >= 2) {
                    break;
                }
            }
            List<Double> ratios = new ArrayList<>();
            List<Double> offRates = new ArrayList<>();
            List<Double> onRates = new ArrayList<>();
            for (int pair = 1; pair <= pairs; pair++) {
                double off = tasks / (DispatchThroughput.runBatch(master, "fs-off" + pair + "-", tasks, inflight, one) / 1e9);
                double on = tasks / (DispatchThroughput.runBatch(master, "fs-on" + pair + "-", tasks, inflight, many) / 1e9);
                run += 2L * tasks;
                offRates.add(Stats.round1(off));
                onRates.add(Stats.round1(on));
                ratios.add(on / off);
                System.out.printf(Locale.ROOT, "# pair %d: off %,.0f tasks/s, on %,.0f tasks/s, on/off %.3f%n", pair, off, on,
                        on / off);
            }
            double ratio = median(ratios);
            // Latency: pairs of paced batches, alternating off and on, each pair's p50 and p99 kept.
            List<Double> p50Off = new ArrayList<>();
            List<Double> p99Off = new ArrayList<>();
            List<Double> p50On = new ArrayList<>();
            List<Double> p99On = new ArrayList<>();
            boolean saturated = false;
            for (int pair = 1; pair <= pairs; pair++) {
                DispatchLatency.Run off = DispatchLatency.paced(master, executor, "fs-loff" + pair + "-", rate * seconds, rate, one);
                DispatchLatency.Run on = DispatchLatency.paced(master, executor, "fs-lon" + pair + "-", rate * seconds, rate, many);
                run += 2L * rate * seconds;
                saturated |= off.saturated(rate) || on.saturated(rate);
                p50Off.add(Stats.round3(off.latency().percentileMillis(50)));
                p99Off.add(Stats.round3(off.latency().percentileMillis(99)));
                p50On.add(Stats.round3(on.latency().percentileMillis(50)));
                p99On.add(Stats.round3(on.latency().percentileMillis(99)));
                System.out.printf(Locale.ROOT, "# latency pair %d at %d/s: off p50 %.3f ms p99 %.3f ms, on p50 %.3f ms p99"
                        + " %.3f ms%n", pair, rate, p50Off.get(pair - 1), p99Off.get(pair - 1), p50On.get(pair - 1),
                        p99On.get(pair - 1));
            }
            double p99Difference = median(p99On) - median(p99Off);
            System.out.printf(Locale.ROOT, "# measured: throughput on/off median %.3f (goal >= 0.9); latency medians: off p50"
                    + " %.3f ms p99 %.3f ms, on p50 %.3f ms p99 %.3f ms: p99 on - off %.3f ms (goal <= 1 ms)%n", ratio,
                    median(p50Off), median(p99Off), median(p50On), median(p99On), p99Difference);
            long succeeded = master.listTasks(TaskState.SUCCEEDED, 0, 1).getTotal();
            if (succeeded != run || executor.repeatedStarts() != 0 || master.queueDepth() != 0) {
                throw new IllegalStateException("the run was not correct: " + succeeded + " of " + run + " SUCCEEDED, "
                        + executor.repeatedStarts() + " started twice, queue " + master.queueDepth());
            }
            System.out.println("# checked: " + run + " tasks SUCCEEDED in Redis, each started exactly once");
            params.put("throughput_off_tasks_per_s", offRates);
            params.put("throughput_on_tasks_per_s", onRates);
            params.put("throughput_on_off_ratios", ratios.stream().map(Stats::round3).toList());
            params.put("throughput_on_off_median", Stats.round3(ratio));
            params.put("latency_off_p50_ms", p50Off);
            params.put("latency_off_p99_ms", p99Off);
            params.put("latency_on_p50_ms", p50On);
            params.put("latency_on_p99_ms", p99On);
            params.put("latency_p99_on_minus_off_median_ms", Stats.round3(p99Difference));
            params.put("latency_saturated", saturated);
            params.put("cost_goal_met", ratio >= 0.9 && p99Difference <= 1.0);
        }
    }

    /**
     * The slots as one colleague task saw them, from the executor's start times (each task holds
     * its slot for one task length from its start): when the first task, of the sweep or an earlier
     * one of the colleague's, ended after the submission was stored, as nanoseconds from the
     * submission (a slot between two tasks then, its next already claimed or not, does not count
     * as freed), and how many sweep tasks started between the storing and the colleague's start.
     */
    private record SlotView(long nextFreeNanos, long sweepStartedMeanwhile) {
        static SlotView of(NoopExecutor executor, int sweep, int colleague, long submitted, long stored,
                long colleagueStart, long holdNanos) {
            long nextEnd = Long.MAX_VALUE;
            long meanwhile = 0;
            for (int i = 0; i < sweep; i++) {
                long start = executor.startNanos(DispatchThroughput.taskId("sweep-", i));
                if (start < 0) {
                    continue;
                }
                if (start + holdNanos > stored) {
                    nextEnd = Math.min(nextEnd, start + holdNanos);
                }
                if (start > stored && start < colleagueStart) {
                    meanwhile++;
                }
            }
            for (int k = 0; k < colleague; k++) { // the colleague's earlier tasks hold slots too
                long end = executor.startNanos("colleague-" + k) + holdNanos;
                if (end > stored) {
                    nextEnd = Math.min(nextEnd, end);
                }
            }
            return new SlotView(nextEnd == Long.MAX_VALUE ? 0 : nextEnd - submitted, meanwhile); // none held: free at once
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
