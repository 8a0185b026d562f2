package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.testkit.JvmProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * {@code resume}: how long after a worker's JVM is killed ({@code kill -9}) the task's next
 * attempt's script starts on the other worker, when the task has a committed checkpoint (default
 * 1 GiB in 8 files) that the other worker fetches from the directory store and verifies before
 * the script starts, against the same failover without a checkpoint, measured in the same run.
 * Seconds, lower is better; the difference is the resume's cost.
 *
 * <p>Set-up: a {@link FailoverCluster} whose two workers have run roots of their own and share a
 * {@link DirectoryStore} in the work directory (as workers share an NFS mount). Each run submits a
 * fresh {@code failover_task.py}; with a checkpoint its first attempt hard-links the prepared
 * files into its {@code RLS_CHECKPOINT_DIR} and prints {@code RLS_CHECKPOINT {}}, and the run waits
 * until Redis lists the commit. Then, as {@link Failover} does, it waits a random part of a
 * heartbeat period, kills the JVM of the worker A running the task, and measures from just before
 * the kill to the start of attempt 2's script on the other worker B (the wall-clock time the
 * script takes as its first statement, in its start mark). Runs alternate with and without a
 * checkpoint (the order swapped every other pair); medians. After each run the task is cancelled,
 * its objects and both workers' directories of it deleted, and A started again.
 *
 * <p>Checked for every run, else the benchmark fails: A's processes die before attempt 2 starts,
 * attempt 2 runs on B, its script found exactly the checkpoint's files with their sizes in its
 * checkpoint directory (none without a checkpoint), and the task ends CANCELLED after 2 attempts.
 * Recorded per run: kill to RUNNING (as {@code failover} measures), kill to script start, the
 * restore's own time as the worker noted it in Redis, and how long the commit took.
 */
public final class Resume implements EndToEndBenchmark {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration START_TIMEOUT = FailoverCluster.START_TIMEOUT;
    private static final Duration COMMIT_TIMEOUT = Duration.ofMinutes(3);

    @Override
    public String name() {
        return "resume";
    }

    @Override
    public String description() {
        return "a worker JVM killed -> the next attempt's script started on another worker after restoring a committed"
                + " checkpoint, seconds; baseline the same failover without a checkpoint";
    }

    @Override
    public List<Param> parameters() {
        return List.of(
                new Param("runs", "3", "kills measured with a checkpoint, and as many without"),
                new Param("sizeMiB", "1024", "the checkpoint's size, MiB"),
                new Param("files", "8", "files it has (of equal size)"),
                new Param("heartbeatMs", "1000", "workers' heartbeat interval (renews liveness and task leases)"),
                new Param("livenessMs", "3000", "liveness lease"),
                new Param("taskLeaseMs", "5000", "task lease"),
                new Param("ackTimeoutMs", "5000", "ack timeout of a claimed task"),
                new Param("killGraceMs", "1000", "workers' grace between TERM and KILL"),
                new Param("reapIntervalMs", "500", "period of the master's reaper (its default)"),
                new Param("workerHeap", "256m", "-Xmx of each worker JVM"),
                new Param("workDir", System.getProperty("java.io.tmpdir"),
                        "where the checkpoint, the store, run roots, marks and logs go (deleted after a success)"));
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
        Path dir = Files.createTempDirectory(Path.of(p.get("workDir")), "rls-bench-resume-");
        boolean keep = true;
        List<Sample> samples = new ArrayList<>();
        try {
            CheckpointFiles checkpoint = CheckpointFiles.write(dir.resolve("checkpoint"), p.getInt("files", 1),
                    (long) p.getInt("sizeMiB", 1) << 20, 7);
            Path storeRoot = new DirectoryStore(dir.resolve("store")).getRoot();
            try (FailoverCluster nodes = new FailoverCluster(dir, core, reapInterval, killGrace, p.get("workerHeap"), "off",
                    storeRoot.toUri().toString());
                 LeaseCore lease = LeaseCore.create(nodes.redisClient(), core)) {
                System.out.println("# " + name() + ": Redis " + nodes.persistence() + "; 2 worker JVMs, own run roots,"
                        + " directory store " + storeRoot + "; checkpoint " + checkpoint.files().size() + " files, "
                        + checkpoint.bytes() + " bytes; task lease " + core.getTaskLease().toMillis() + " ms");
                for (int r = 1; r <= runs; r++) {
                    for (boolean with : r % 2 == 1 ? new boolean[] {true, false} : new boolean[] {false, true}) {
                        Sample s = killOnce(nodes, lease, core, reapInterval, checkpoint, storeRoot,
                                "resume-" + r + (with ? "-ckpt" : "-none"), with);
                        samples.add(s);
                        System.out.printf(Locale.ROOT, "# run %d %-16s killed %s; script started on %s %.3f s later"
                                        + " (RUNNING after %.3f s, restore %s ms, commit took %.3f s)%n", r,
                                with ? "with checkpoint" : "no checkpoint", s.killed, s.took, s.killToScript,
                                s.killToRunning, s.restoreMs < 0 ? "-" : Long.toString(s.restoreMs), s.commitSeconds);
                    }
                }
            }
            keep = false;
        } finally {
            if (keep) {
                System.out.println("# resume: keeping " + dir + " (worker output, marks, logs)");
            } else {
                LocalCluster.deleteTree(dir);
            }
        }
        double with = median(samples, true, s -> s.killToScript);
        double without = median(samples, false, s -> s.killToScript);
        params.put("median_with_checkpoint_s", Stats.round3(with));
        params.put("median_without_checkpoint_s", Stats.round3(without));
        params.put("median_resume_cost_s", Stats.round3(with - without));
        params.put("median_restore_ms", median(samples, true, s -> s.restoreMs));
        params.put("median_kill_to_running_s", Map.of(
                "with_checkpoint", Stats.round3(median(samples, true, s -> s.killToRunning)),
                "without_checkpoint", Stats.round3(median(samples, false, s -> s.killToRunning))));
        params.put("per_run", samples.stream().map(Sample::asMap).toList());
        params.put("measured", "from just before SIGKILL of the worker JVM running attempt 1 to the first statement of"
                + " attempt 2's script on the other worker (wall clock, same machine)");
        params.put("checked", "per run: the killed worker's processes died before attempt 2 started; attempt 2 on the"
                + " other worker; its checkpoint directory held exactly the checkpoint's files and sizes (none without);"
                + " CANCELLED after 2 attempts");
        params.put("machine", Machine.describe());
        return new BenchResult(name(), "s", Stats.round3(with), "the same failover without a checkpoint",
                Stats.round3(without), params);
    }

    /** The median of a figure over the runs with a checkpoint ({@code with}) or without. */
    private static double median(List<Sample> samples, boolean with, ToDoubleFunction<Sample> figure) {
        double[] sorted = samples.stream().filter(s -> s.with == with).mapToDouble(figure).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** One kill and its figures. */
    private static final class Sample {
        String taskId;
        boolean with;
        String killed;
        String took;
        double killToRunning;
        double killToScript;
        long restoreMs = -1;
        double commitSeconds;

        Map<String, Object> asMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("task", taskId);
            m.put("checkpoint", with);
            m.put("killed_worker", killed);
            m.put("resumed_on", took);
            m.put("kill_to_running_s", Stats.round3(killToRunning));
            m.put("kill_to_script_start_s", Stats.round3(killToScript));
            m.put("restore_ms", restoreMs);
            m.put("commit_s", Stats.round3(commitSeconds));
            return m;
        }
    }

    private static Sample killOnce(FailoverCluster nodes, LeaseCore lease, CoreOptions core, Duration reapInterval,
                                   CheckpointFiles checkpoint, Path storeRoot, String taskId, boolean with) throws Exception {
        Sample s = new Sample();
        s.taskId = taskId;
        s.with = with;
        int mark = nodes.eventCount();
        TaskSpec.Builder spec = TaskSpec.python(FailoverCluster.SCRIPT).taskId(taskId)
                .param("marks", nodes.marks().toString()).param("seconds", 600L).cpuSlots(1).gpus(0);
        if (with) {
            spec.param("checkpoint", checkpoint.dir().toString());
        }
        nodes.master().submit(spec.build());
        FailoverCluster.Seen first = nodes.await(mark, FailoverCluster.running(taskId, 1), START_TIMEOUT, "attempt 1 RUNNING");
        s.killed = first.event().getFields().get("worker");
        JvmProcess a = nodes.worker(s.killed);
        JsonNode mark1 = nodes.awaitMark(taskId, Long.parseLong(first.event().getFields().get("epoch")));
        if (with) {
            s.commitSeconds = awaitCommit(lease, taskId) - mark1.path("started").asDouble();
        }
        List<Long> processes = a.descendants();
        if (processes.isEmpty() || !processes.contains(mark1.path("pid").asLong())) {
            throw new IllegalStateException(taskId + ": the script (pid " + mark1.path("pid").asLong()
                    + ") is not among the descendants of " + s.killed + "'s JVM: " + processes);
        }

        // As in failover: the kill at a random point of the heartbeat period.
        Thread.sleep(ThreadLocalRandom.current().nextLong(core.getHeartbeatInterval().toMillis()));
        long killedAtNanos = System.nanoTime();
        double killedAt = System.currentTimeMillis() / 1000.0;
        a.kill();
        long goneAt = FailoverCluster.awaitGone(processes, killedAtNanos, taskId);

        FailoverCluster.Seen second = nodes.await(mark, FailoverCluster.running(taskId, 2),
                core.getTaskLease().plus(START_TIMEOUT), "attempt 2 RUNNING");
        s.killToRunning = (second.nanos() - killedAtNanos) / 1e9;
        s.took = second.event().getFields().get("worker");
        if (s.took.equals(s.killed) || goneAt > second.nanos()) {
            throw new IllegalStateException(taskId + ": attempt 2 RUNNING on " + s.took + " (killed " + s.killed
                    + "), before the killed worker's processes were gone: " + (goneAt > second.nanos()));
        }
        JsonNode mark2 = nodes.awaitMark(taskId, Long.parseLong(second.event().getFields().get("epoch")));
        s.killToScript = mark2.path("started").asDouble() - killedAt;
        Map<String, Long> expected = new LinkedHashMap<>();
        if (with) {
            checkpoint.files().forEach(f -> expected.put(f.getFileName().toString(), checkpoint.fileBytes()));
        }
        Map<String, Long> found = new LinkedHashMap<>();
        mark2.path("checkpoint_files").fields().forEachRemaining(e -> found.put(e.getKey(), e.getValue().asLong()));
        if (!found.equals(expected)) {
            throw new IllegalStateException(taskId + ": attempt 2's script found " + found + " in its checkpoint directory;"
                    + " expected " + expected);
        }
        if (with) {
            String note = lease.artifacts().restores(taskId).get(30, TimeUnit.SECONDS).get(2);
            s.restoreMs = note == null ? -1 : JSON.readTree(note).path("ms").asLong(-1);
        }

        if (!nodes.master().task(taskId).cancel()) {
            throw new IllegalStateException(taskId + " could not be cancelled");
        }
        TaskResult result = nodes.master().task(taskId).result().get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (result.getState() != TaskState.CANCELLED || result.getAttempts() != 2) {
            throw new IllegalStateException(taskId + " ended " + result.getState() + " after " + result.getAttempts()
                    + " attempts; expected CANCELLED after 2");
        }
        a.close();
        LocalCluster.deleteTree(storeRoot.resolve(RunLayout.task(taskId)));
        for (String w : FailoverCluster.WORKERS) {
            LocalCluster.deleteTree(nodes.runRoot(w).resolve(taskId));
        }
        // As in failover: the restarted worker's heartbeats at a random phase of the reaper's period.
        Thread.sleep(ThreadLocalRandom.current().nextLong(reapInterval.toMillis()));
        nodes.restart(s.killed);
        return s;
    }

    /** Waits (bounded polling) until Redis lists a committed checkpoint of the task; returns the wall-clock time it saw it. */
    private static double awaitCommit(LeaseCore lease, String taskId) throws Exception {
        long deadline = System.nanoTime() + COMMIT_TIMEOUT.toNanos();
        while (true) {
            List<CheckpointEntry> committed = lease.artifacts().committed(taskId).get(30, TimeUnit.SECONDS);
            if (!committed.isEmpty()) {
                return System.currentTimeMillis() / 1000.0;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(taskId + ": no checkpoint committed within " + COMMIT_TIMEOUT);
            }
            Thread.sleep(20);
        }
    }
}
