package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.JvmProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code failover}: how long after a worker's JVM is killed ({@code kill -9}) in the middle of a
 * task the task runs on another worker, against the configured task lease, which bounds it by
 * design: nothing re-queues a RUNNING task before its lease expires (the liveness lease only
 * marks the worker PENDING), so the time is about the lease left at the kill (the task lease
 * minus the time since the last renewal, at most a heartbeat), plus the wait for the next reaper
 * pass (at most {@code reapIntervalMs}), plus a dispatch: claim, ExecuteTask, acknowledge.
 *
 * <p>Set-up ({@link FailoverCluster}): one Redis, one master in this JVM, two workers each in a
 * JVM of its own ({@link BenchWorkerMain}: the default {@code PythonTaskExecutor}, with the
 * launcher and its keepalives) with a run root of its own, started with {@link JvmProcess}; no
 * artifact store; short leases so that a run takes seconds. Each
 * run submits a fresh task ({@code failover_task.py}: marks its start, then prints a line every
 * 0.1 s), waits until it is RUNNING on some worker A and its script has started, waits a random
 * part of a heartbeat period, kills A's JVM with SIGKILL, and measures from just before the kill
 * to the master's task listener receiving the task's RUNNING event for attempt 2 on the other
 * worker B. Then it cancels the task, waits a random part of the reaper's period, starts A again
 * (same worker id and state directory), and waits until both workers are connected before the
 * next run. The two random waits sample the time since the last renewal and the reaper's phase
 * evenly; without them the runs repeat nearly the same phases.
 *
 * <p>Checked for every run, else the benchmark fails: after the kill A's launcher and script
 * (the JVM's descendants, via /proc) die, and before B's attempt starts; the task is RUNNING
 * exactly twice, attempt 1 on A and attempt 2 on B, never a third time, with one lease loss; the
 * script of attempt 2 found no live process in attempt 1's process group when it started (its
 * own check, from /proc); the task ends CANCELLED after the cancel.
 *
 * <p>Where the time went, by the Redis clock (the task's history and its lease deadline read right
 * after the kill): the lease left at the kill, the reaper's delay after the deadline, the dispatch.
 */
public final class Failover implements EndToEndBenchmark {

    private static final Duration START_TIMEOUT = FailoverCluster.START_TIMEOUT;

    @Override
    public String name() {
        return "failover";
    }

    @Override
    public String description() {
        return "a worker JVM killed mid-task -> the task RUNNING on another worker, seconds; baseline the task lease";
    }

    @Override
    public List<Param> parameters() {
        return List.of(
                new Param("runs", "5", "kills measured (one fresh task each; the killed worker is restarted after)"),
                new Param("heartbeatMs", "1000", "workers' heartbeat interval (renews liveness and task leases)"),
                new Param("livenessMs", "3000", "liveness lease"),
                new Param("taskLeaseMs", "5000", "task lease: the baseline"),
                new Param("ackTimeoutMs", "5000", "ack timeout of a claimed task"),
                new Param("killGraceMs", "1000", "workers' grace between TERM and KILL"),
                new Param("reapIntervalMs", "500", "period of the master's reaper (its default)"),
                new Param("workerHeap", "256m", "-Xmx of each worker JVM"),
                new Param("aof", "off", "persistence of the started Redis: off, everysec or always"),
                new Param("workDir", System.getProperty("java.io.tmpdir"),
                        "where scripts, marks, logs, run directories and worker output go (deleted after a success)"));
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        int runs = p.getInt("runs", 1);
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        CoreOptions core = CoreOptions.builder().namespace("rls-bench-" + HexFormat.of().formatHex(random))
                .heartbeatInterval(Duration.ofMillis(p.getInt("heartbeatMs", 1)))
                .livenessLease(Duration.ofMillis(p.getInt("livenessMs", 1)))
                .taskLease(Duration.ofMillis(p.getInt("taskLeaseMs", 1)))
                .ackTimeout(Duration.ofMillis(p.getInt("ackTimeoutMs", 1))).build();
        Duration reapInterval = Duration.ofMillis(p.getInt("reapIntervalMs", 1));
        Duration killGrace = Duration.ofMillis(p.getInt("killGraceMs", 0));
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        Path dir = Files.createTempDirectory(Path.of(p.get("workDir")), "rls-bench-failover-");
        boolean keep = true;
        List<Sample> samples = new ArrayList<>();
        try (FailoverCluster nodes = new FailoverCluster(dir, core, reapInterval, killGrace, p.get("workerHeap"), p.get("aof"),
                null)) {
            System.out.println("# " + name() + ": Redis " + nodes.persistence() + "; 2 worker JVMs; leases: heartbeat "
                    + core.getHeartbeatInterval().toMillis() + " ms, liveness " + core.getLivenessLease().toMillis()
                    + " ms, task " + core.getTaskLease().toMillis() + " ms; reaper every " + reapInterval.toMillis() + " ms");
            for (int r = 1; r <= runs; r++) {
                Sample s = killOnce(nodes, core, reapInterval, "failover-" + r);
                samples.add(s);
                System.out.printf(Locale.ROOT, "# run %d: killed %s; task RUNNING on %s %.3f s later (processes gone after"
                                + " %.0f ms; lease left at the kill %d ms, reaper %d ms after the deadline, dispatch %d ms)%n",
                        r, s.killed, s.took, s.seconds, s.processesGoneMs, s.leaseLeftMs, s.reaperDelayMs, s.dispatchMs);
            }
            keep = false;
        } finally {
            if (keep) {
                System.out.println("# failover: keeping " + dir + " (worker output, marks, logs)");
            } else {
                LocalCluster.deleteTree(dir);
            }
        }
        double[] seconds = samples.stream().mapToDouble(s -> s.seconds).sorted().toArray();
        double median = median(seconds);
        double max = seconds[seconds.length - 1];
        double lease = core.getTaskLease().toMillis() / 1000.0;
        params.put("median_s", Stats.round3(median));
        params.put("max_s", Stats.round3(max));
        params.put("min_s", Stats.round3(seconds[0]));
        params.put("mean_s", Stats.round3(Arrays.stream(seconds).average().orElse(Double.NaN)));
        params.put("runs_s", samples.stream().map(s -> Stats.round3(s.seconds)).toList());
        params.put("per_run", samples.stream().map(Sample::asMap).toList());
        params.put("worker_fence_after_ms", fenceAfter(core, killGrace).toMillis());
        params.put("measured", "from just before SIGKILL of the worker JVM to the master's task listener receiving the"
                + " RUNNING event of attempt 2 on the other worker");
        params.put("checked", "per run: the killed worker's launcher and script died before attempt 2 started; RUNNING"
                + " exactly twice (attempt 1 on the killed worker, attempt 2 on the other), 1 lease loss; attempt 2's"
                + " script saw no live process of attempt 1's group; CANCELLED after the cancel");
        params.put("goal", "<= task lease + 1 s (" + Stats.round3(lease + 1) + " s)");
        params.put("goal_met", max <= lease + 1);
        params.put("goal_met_by_median", median <= lease + 1);
        params.put("machine", Machine.describe());
        return new BenchResult(name(), "s", Stats.round3(median), "configured task lease", lease, params);
    }

    /** The worker's self-fencing limit, as SchedulerWorker computes it (for the record). */
    private static Duration fenceAfter(CoreOptions options, Duration killGrace) {
        Duration lease = options.getTaskLease();
        Duration margin = killGrace.plus(options.getHeartbeatInterval().multipliedBy(2));
        Duration half = lease.dividedBy(2);
        return lease.minus(margin.compareTo(half) < 0 ? margin : half);
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** One kill and its figures. */
    private static final class Sample {
        String taskId;
        String killed;
        String took;
        double seconds;
        double processesGoneMs;
        long leaseLeftMs;
        long reaperDelayMs;
        long dispatchMs;
        long redisKillToRunningMs;
        long sinceRenewalMs;

        Map<String, Object> asMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("task", taskId);
            m.put("killed_worker", killed);
            m.put("running_on", took);
            m.put("kill_to_running_s", Stats.round3(seconds));
            m.put("kill_to_processes_gone_ms", Stats.round1(processesGoneMs));
            m.put("since_last_renewal_at_kill_ms", sinceRenewalMs);
            m.put("lease_left_at_kill_ms", leaseLeftMs);
            m.put("requeued_after_deadline_ms", reaperDelayMs);
            m.put("requeued_to_running_ms", dispatchMs);
            m.put("kill_to_running_redis_clock_ms", redisKillToRunningMs);
            return m;
        }
    }

    /** One kill: a fresh task, its worker killed mid-run, the task RUNNING on the other; the killed one restarted. */
    private static Sample killOnce(FailoverCluster nodes, CoreOptions core, Duration reapInterval, String taskId)
            throws Exception {
        Sample s = new Sample();
        s.taskId = taskId;
        int mark = nodes.eventCount();
        nodes.master().submit(TaskSpec.python(FailoverCluster.SCRIPT).taskId(taskId).param("marks", nodes.marks().toString()).param("seconds", 600L)
                .cpuSlots(1).gpus(0).build());
        FailoverCluster.Seen first = nodes.await(mark, FailoverCluster.running(taskId, 1), START_TIMEOUT, "attempt 1 RUNNING");
        s.killed = first.event().getFields().get("worker");
        JvmProcess a = nodes.worker(s.killed);
        JsonNode mark1 = nodes.awaitMark(taskId, Long.parseLong(first.event().getFields().get("epoch")));
        List<Long> processes = a.descendants();
        if (processes.isEmpty() || !processes.contains(mark1.path("pid").asLong())) {
            throw new IllegalStateException(taskId + ": the script (pid " + mark1.path("pid").asLong()
                    + ") is not among the descendants of " + s.killed + "'s JVM: " + processes);
        }

        // The kill at a random point of the heartbeat period, so that the lease left at the kill
        // (the task lease minus the time since the last renewal) is sampled evenly.
        Thread.sleep(ThreadLocalRandom.current().nextLong(core.getHeartbeatInterval().toMillis()));
        List<String> time = nodes.admin().time();
        long redisAtKill = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        long killedAt = System.nanoTime();
        a.kill();
        TaskRecord held = nodes.master().getTask(taskId).orElseThrow();
        if (held.getState() != TaskState.RUNNING || held.getAttempt() != 1) {
            throw new IllegalStateException(taskId + " was not RUNNING its attempt 1 right after the kill: " + held);
        }
        long deadline = held.getDeadlineMillis();
        long goneAt = FailoverCluster.awaitGone(processes, killedAt, taskId);
        s.processesGoneMs = (goneAt - killedAt) / 1e6;

        FailoverCluster.Seen second = nodes.await(mark, FailoverCluster.running(taskId, 2),
                core.getTaskLease().plus(START_TIMEOUT), "attempt 2 RUNNING");
        s.seconds = (second.nanos() - killedAt) / 1e9;
        s.took = second.event().getFields().get("worker");
        if (s.took.equals(s.killed)) {
            throw new IllegalStateException(taskId + ": attempt 2 RUNNING on the killed worker " + s.killed);
        }
        if (goneAt > second.nanos()) {
            throw new IllegalStateException(taskId + ": attempt 2 started before the killed worker's processes"
                    + " were gone");
        }
        JsonNode mark2 = nodes.awaitMark(taskId, Long.parseLong(second.event().getFields().get("epoch")));
        if (mark2.path("earlier_groups_alive").size() != 0 || mark2.path("earlier_groups").size() != 1
                || mark2.path("earlier_groups").get(0).asLong() != mark1.path("pgid").asLong()) {
            throw new IllegalStateException(taskId + ": attempt 2's script saw " + mark2 + " (attempt 1: " + mark1 + ")");
        }

        if (!nodes.master().task(taskId).cancel()) {
            throw new IllegalStateException(taskId + " could not be cancelled");
        }
        TaskResult result = nodes.master().task(taskId).result().get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (result.getState() != TaskState.CANCELLED || result.getAttempts() != 2
                || result.getRecord().getLeaseLosses() != 1 || !s.took.equals(result.getWorkerId())) {
            throw new IllegalStateException(taskId + " ended " + result.getState() + " after " + result.getAttempts()
                    + " attempts, " + result.getRecord().getLeaseLosses() + " lease losses, on "
                    + result.getWorkerId() + "; expected CANCELLED after 2 attempts, 1 loss, on " + s.took);
        }
        // A requested cancel is recorded as RUNNING -> RUNNING: count the starts, from ASSIGNED.
        List<FailoverCluster.Seen> runningEvents = nodes.since(mark, e -> taskId.equals(e.getTaskId()) && e.getTo() == TaskState.RUNNING
                && "ASSIGNED".equals(e.getFields().get("from")));
        if (runningEvents.size() != 2) {
            throw new IllegalStateException(taskId + " was RUNNING " + runningEvents.size() + " times: " + runningEvents);
        }

        // Where the time went, by the Redis clock.
        List<TaskTransition> history = result.getRecord().getHistory();
        TaskTransition requeued = find(history, t -> t.getFrom() == TaskState.RUNNING && t.getTo() == TaskState.QUEUED,
                taskId, "RUNNING -> QUEUED");
        TaskTransition running2 = history.stream()
                .filter(t -> t.getFrom() == TaskState.ASSIGNED && t.getTo() == TaskState.RUNNING).reduce((x, y) -> y)
                .orElseThrow();
        s.leaseLeftMs = deadline - redisAtKill;
        s.sinceRenewalMs = core.getTaskLease().toMillis() - s.leaseLeftMs;
        s.reaperDelayMs = requeued.getAtMillis() - deadline;
        s.dispatchMs = running2.getAtMillis() - requeued.getAtMillis();
        s.redisKillToRunningMs = running2.getAtMillis() - redisAtKill;

        a.close();
        // The restarted worker's heartbeats (hence its lease deadlines) at a random phase of the
        // reaper's period: its restart follows a reaper pass by a nearly constant time otherwise,
        // and every later run would see about the same reaper delay.
        Thread.sleep(ThreadLocalRandom.current().nextLong(reapInterval.toMillis()));
        nodes.restart(s.killed);
        return s;
    }

    private static TaskTransition find(List<TaskTransition> history, Predicate<TaskTransition> which, String taskId,
                                       String what) {
        List<TaskTransition> found = history.stream().filter(which).toList();
        if (found.size() != 1) {
            throw new IllegalStateException(taskId + ": expected one " + what + " in its history, found " + history);
        }
        return found.get(0);
    }
}
