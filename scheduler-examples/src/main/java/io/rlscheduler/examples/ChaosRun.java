package io.rlscheduler.examples;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.JvmProcess;
import io.rlscheduler.testkit.TestRedis;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A chaos run: a whole cluster of separate processes doing real training while faults are
 * injected at random, then a check, from the task records, the log files and the tasks' own
 * marks, that nothing was lost, run twice or run twice at once.
 *
 * <p>The cluster: a redis-server with AOF ({@link TestRedis}; or the server {@code REDIS_URL}
 * names, which is then never restarted), two masters ({@link MasterMain}) and three workers
 * ({@link WorkerMain}, two GPU ids and two CPU slots each), each a JVM of its own, all with
 * short leases (heartbeat 200 ms, liveness 1 s, task lease 3 s, ack timeout 2 s, leader lease
 * 1 s). Tasks are submitted through a third master in this JVM that is
 * {@linkplain SchedulerMaster.Builder#standbyOnly(boolean) standby-only}, so it never takes the
 * leadership and "the leader" is always one of the two master JVMs. Each task runs
 * {@code scripts/chaos_task.py}: real {@code train.py} training (Q-learning on the grid world, a
 * few seconds) that also marks when each attempt started and stopped, by epoch, and copies what
 * it prints.
 * Tasks are submitted with their attempt and lease-loss limits raised to 100: the limits stop a
 * poison task from cycling forever, and the drill deliberately kills and freezes the same task's
 * workers again and again.
 *
 * <p>The chaos phase ({@code --duration-s}) submits the tasks spread over its first 70% and,
 * every 2 to 5 s, does one of: {@code kill -9} a worker JVM and restart it (same worker id) 0.5
 * to 3 s later; freeze a worker ({@code SIGSTOP}) for 3.5 to 6 s, longer than the task lease,
 * then thaw it; {@code kill -9} the leader master and restart it 1 to 3 s later (it comes back
 * as a standby); and once, kill Redis ({@code kill -9}) and restart it 0.5 to 2.5 s later. At
 * least one worker is always running and not frozen, and a master is only killed while the
 * other one is up. Each kind happens at least once. Then the faults stop, everything stopped is
 * brought back, and the run waits (bounded) for every task to end.
 *
 * <p>The checks, per task (see {@link Report}):
 * <ul>
 *   <li><b>lost</b>: its record is missing or not SUCCEEDED when the run ends.</li>
 *   <li><b>duplicated</b>: its record's history enters SUCCEEDED more than once, or ends
 *       (enters any final state) more than once, or its log file ends more than one attempt
 *       with {@code ##RLS_END state=SUCCEEDED}.</li>
 *   <li><b>overlapping</b>: two of its attempts were running at the same time by their own
 *       marks: an attempt started before an earlier one's stop mark; an attempt with no stop
 *       mark that is followed by another attempt counts as overlapping (it cannot be shown to
 *       have stopped first).</li>
 *   <li><b>succeeded exactly once</b>: SUCCEEDED, not duplicated, not overlapping, the one
 *       success is the record's last epoch, that epoch's marks show it ran to the end
 *       ({@code exit=0}), and the log file holds that attempt completely: after its
 *       {@code ##RLS_ATTEMPT} marker, exactly the lines it printed, in order, then
 *       {@code ##RLS_END state=SUCCEEDED complete=true}.</li>
 * </ul>
 * An attempt that finished its training but whose worker was killed or frozen before the
 * success reached Redis is run again (it resumes from its final checkpoint and ends at once):
 * that is the lease's at-least-once execution, not a duplicate; it is counted and printed as
 * "re-run after an unreported finish".
 *
 * <p>The last line is {@code chaos: N tasks, S succeeded exactly once, L lost, D duplicated, O
 * overlapping}; the exit code is 0 only if S = N and L = D = O = 0. Run it from the repository
 * root (it runs {@code scripts/chaos_task.py} and {@code scripts/train.py}), through
 * {@code scripts/chaos.sh}.
 *
 * <pre>
 *  --seed N         the fault schedule and task parameters (default: random, printed); the same
 *                   seed gives the same schedule, while process timing still varies
 *  --tasks N        tasks to submit (default 40)
 *  --duration-s N   length of the chaos phase (default 120)
 *  --budget-s N     the whole run, start to verdict (default 270); bounds the wait for the tasks
 *  --workdir PATH   logs, run directories and every process's output (default a new temp dir)
 *  --scripts PATH   the scripts directory (default ./scripts)
 * </pre>
 */
public final class ChaosRun {

    static final String SECRET = "chaos-run-shared-secret-0123456789";
    static final String TASK_SCRIPT = "chaos_task.py";

    private static final Pattern LEADER_LINE = Pattern.compile("master (\\S+) is the leader \\(leadership epoch (\\d+)\\)");
    private static final Pattern READY_LINE = Pattern.compile("master (\\S+) ready at \\S+:(\\d+) \\((leader|standby)\\)");

    private final Options opt;
    private final PrintStream out;
    private final long t0 = System.nanoTime();
    private final AtomicBoolean cleaned = new AtomicBoolean();
    private final List<JvmProcess> everyJvm = Collections.synchronizedList(new ArrayList<>());
    private final List<Proc> workers = new ArrayList<>();
    private final List<Proc> masters = new ArrayList<>();
    private final AtomicInteger unexpectedExits = new AtomicInteger();
    private final Map<String, Integer> actionCounts = new LinkedHashMap<>();
    private TestRedis redis;
    private SchedulerMaster api;
    private Path logs;
    private Path runs;
    private Path jvmDir;
    private Path logback;
    private String namespace;
    private String mastersList;
    private String redisUrl;

    private ChaosRun(Options opt, PrintStream out) {
        this.opt = opt;
        this.out = out;
    }

    // ------------------------------------------------------------------------------------------
    // Options and results

    /** What to run; see the class comment for the command-line form. */
    public static final class Options {
        /** The defaults: a random seed, 40 tasks, 120 s of chaos, a 270 s budget, a temp workdir, ./scripts. */
        public Options() {
        }

        long seed = ThreadLocalRandom.current().nextLong(1, 1_000_000);
        int tasks = 40;
        int durationS = 120;
        int budgetS = 270;
        Path workdir;
        Path scripts = Path.of("scripts");

        public Options seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Options tasks(int tasks) {
            if (tasks < 1) {
                throw new IllegalArgumentException("--tasks must be at least 1");
            }
            this.tasks = tasks;
            return this;
        }

        public Options durationS(int seconds) {
            if (seconds < 5) {
                throw new IllegalArgumentException("--duration-s must be at least 5");
            }
            this.durationS = seconds;
            return this;
        }

        public Options budgetS(int seconds) {
            this.budgetS = seconds;
            return this;
        }

        public Options workdir(Path dir) {
            this.workdir = dir;
            return this;
        }

        public Options scripts(Path dir) {
            this.scripts = dir;
            return this;
        }

        static Options parse(String[] argv) {
            Options o = new Options();
            for (int i = 0; i < argv.length; i++) {
                String a = argv[i];
                if (a.equals("-h") || a.equals("--help")) {
                    throw new IllegalArgumentException("usage");
                }
                if (i + 1 >= argv.length) {
                    throw new IllegalArgumentException("missing value for " + a);
                }
                String v = argv[++i];
                switch (a) {
                    case "--seed" -> o.seed(Long.parseLong(v));
                    case "--tasks" -> o.tasks(Integer.parseInt(v));
                    case "--duration-s" -> o.durationS(Integer.parseInt(v));
                    case "--budget-s" -> o.budgetS(Integer.parseInt(v));
                    case "--workdir" -> o.workdir(Path.of(v));
                    case "--scripts" -> o.scripts(Path.of(v));
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (o.budgetS < o.durationS + 30) {
                throw new IllegalArgumentException("--budget-s must be at least --duration-s + 30");
            }
            return o;
        }
    }

    /** The verdict: the counts of the last line, and one line per problem found. */
    public static final class Report {
        private final int tasks;
        private final int succeededOnce;
        private final int lost;
        private final int duplicated;
        private final int overlapping;
        private final int rerunsAfterFinish;
        private final List<String> problems;

        Report(int tasks, int succeededOnce, int lost, int duplicated, int overlapping, int rerunsAfterFinish,
               List<String> problems) {
            this.tasks = tasks;
            this.succeededOnce = succeededOnce;
            this.lost = lost;
            this.duplicated = duplicated;
            this.overlapping = overlapping;
            this.rerunsAfterFinish = rerunsAfterFinish;
            this.problems = List.copyOf(problems);
        }

        public int getTasks() {
            return tasks;
        }

        public int getSucceededOnce() {
            return succeededOnce;
        }

        public int getLost() {
            return lost;
        }

        public int getDuplicated() {
            return duplicated;
        }

        public int getOverlapping() {
            return overlapping;
        }

        /** Tasks whose training ran to its end in more than one attempt (at-least-once, not a failure). */
        public int getRerunsAfterFinish() {
            return rerunsAfterFinish;
        }

        /** One line per problem found (empty when clean). */
        public List<String> getProblems() {
            return problems;
        }

        /** Whether every task succeeded exactly once and nothing was lost, duplicated or overlapping. */
        public boolean isClean() {
            return tasks > 0 && succeededOnce == tasks && lost == 0 && duplicated == 0 && overlapping == 0
                    && problems.isEmpty();
        }

        /** The last line of the run. */
        public String summary() {
            return "chaos: " + tasks + " tasks, " + succeededOnce + " succeeded exactly once, " + lost + " lost, "
                    + duplicated + " duplicated, " + overlapping + " overlapping";
        }

        @Override
        public String toString() {
            return summary();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Entry points

    public static void main(String[] argv) {
        Options options;
        try {
            options = Options.parse(argv);
        } catch (IllegalArgumentException e) {
            if (!"usage".equals(e.getMessage())) {
                System.err.println("chaos: " + e.getMessage());
            }
            System.err.println("usage: ChaosRun [--seed N] [--tasks N] [--duration-s N] [--budget-s N] [--workdir PATH]"
                    + " [--scripts PATH]");
            System.exit(2);
            return;
        }
        // The in-process master's Redis client would print a warning for every reconnect attempt
        // while Redis is down on purpose; the run reports that itself.
        org.slf4j.Logger lettuce = org.slf4j.LoggerFactory.getLogger("io.lettuce");
        if (lettuce instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(ch.qos.logback.classic.Level.ERROR);
        }
        int code;
        try {
            Report report = run(options, System.out);
            code = report.isClean() ? 0 : 1;
        } catch (Exception e) {
            System.out.flush();
            System.err.println("chaos: the run itself failed (seed " + options.seed + "): " + e);
            e.printStackTrace();
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    /**
     * Runs the whole drill and returns the verdict; the last line printed is
     * {@link Report#summary()}. Every process started is stopped before it returns or throws.
     */
    public static Report run(Options options, PrintStream out) throws Exception {
        ChaosRun run = new ChaosRun(options, out);
        Thread hook = new Thread(run::cleanup, "chaos-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return run.execute();
        } finally {
            run.cleanup();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook runs anyway, and cleanup is idempotent.
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // The run

    private Report execute() throws Exception {
        Path scripts = opt.scripts.toAbsolutePath().normalize();
        for (String script : List.of(TASK_SCRIPT, "train.py")) {
            if (!Files.isRegularFile(scripts.resolve(script))) {
                throw new IllegalStateException(scripts.resolve(script) + " not found; run from the repository root or pass --scripts");
            }
        }
        Path work = opt.workdir != null ? Files.createDirectories(opt.workdir.toAbsolutePath())
                : Files.createTempDirectory("rls-chaos-");
        logs = Files.createDirectories(work.resolve("logs"));
        runs = Files.createDirectories(work.resolve("runs"));
        jvmDir = Files.createDirectories(work.resolve("jvm"));
        logback = work.resolve("logback-chaos.xml");
        Files.writeString(logback, LOGBACK);
        Files.deleteIfExists(work.resolve("chaos.log"));
        namespace = "chaos-" + opt.seed + "-" + UUID.randomUUID().toString().substring(0, 6);
        say("seed %d (replay: scripts/chaos.sh --seed %d), %d tasks, chaos phase %d s, budget %d s", opt.seed, opt.seed,
                opt.tasks, opt.durationS, opt.budgetS);
        say("workdir %s", work);
        long deadline = t0 + Duration.ofSeconds(opt.budgetS).toNanos();

        redis = TestRedis.fromEnvironment();
        redisUrl = redis.isExternal() ? TestRedis.externalUrl().orElseThrow()
                : "redis://" + redis.getHost() + ":" + redis.getPort();
        say("redis %s%s", redis.isExternal() ? "from REDIS_URL" : redisUrl, redis.isExternal()
                ? " (REDIS_URL: external, so it is not killed or restarted in this run)" : " (redis-server with AOF, fsync always)");

        int[] ports = {freePort(), freePort()};
        while (ports[1] == ports[0]) {
            ports[1] = freePort();
        }
        mastersList = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
        masters.add(new Proc("m1", true, ports[0]));
        masters.add(new Proc("m2", true, ports[1]));
        masters.get(0).start();
        awaitUp(masters.get(0), Duration.ofSeconds(60));
        masters.get(1).start();
        awaitUp(masters.get(1), Duration.ofSeconds(60));

        CoreOptions core = coreOptions().mutate().maxAttempts(100).maxLeaseLosses(100).build();
        api = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(core).logDirectory(logs).masterId("chaos-api").standbyOnly(true)
                .leaderLease(Duration.ofSeconds(1)).apiTimeout(Duration.ofSeconds(5)).build().start();
        say("api master %s is standby-only (never leads), port %d", api.getMasterId(), api.getRpcAddress().getPort());

        for (int i = 1; i <= 3; i++) {
            Proc w = new Proc("w" + i, false, 0);
            workers.add(w);
            w.start();
        }
        for (Proc w : workers) {
            awaitUp(w, Duration.ofSeconds(60));
        }
        say("cluster up: masters %s, workers w1 w2 w3 (GPUs 0,1 and 2 CPU slots each)", mastersList);

        Random rnd = new Random(opt.seed);
        List<TaskSpec> specs = taskSpecs(rnd);
        Submitter submitter = new Submitter(specs, submitTimes(rnd, specs.size()), deadline);
        submitter.start();
        chaos(rnd, deadline);
        heal(deadline);
        submitter.join(Math.max(1, remainingMillis(deadline)));
        if (submitter.isAlive()) {
            say("submitter still running at the deadline; stopping it");
            submitter.interrupt();
        }
        drain(specs, deadline - Duration.ofSeconds(20).toNanos());
        return check(specs);
    }

    private CoreOptions coreOptions() {
        return CoreOptions.builder().namespace(namespace).heartbeatInterval(Duration.ofMillis(200))
                .livenessLease(Duration.ofSeconds(1)).taskLease(Duration.ofSeconds(3))
                .ackTimeout(Duration.ofSeconds(2)).build();
    }

    private List<TaskSpec> taskSpecs(Random rnd) {
        List<TaskSpec> specs = new ArrayList<>();
        int width = String.valueOf(opt.tasks).length();
        for (int i = 1; i <= opt.tasks; i++) {
            long episodes = 150 + rnd.nextInt(151);
            specs.add(TaskSpec.python(TASK_SCRIPT).taskId(String.format(Locale.ROOT, "chaos-%0" + width + "d", i))
                    .param("algo", "q-learning").param("episodes", episodes).param("episode-delay", 0.02)
                    .param("checkpoint-every", 10L).param("seed", (long) i).gpus(1).owner("chaos")
                    .maxAttempts(100).timeout(Duration.ofMinutes(10)).build());
        }
        return specs;
    }

    /** Submission times, ms after the chaos phase starts: spread over its first 70%, a few at once. */
    private long[] submitTimes(Random rnd, int n) {
        long[] at = new long[n];
        long span = (long) (opt.durationS * 700L);
        for (int i = 0; i < n; i++) {
            at[i] = i < Math.min(4, n) ? 0 : (long) (rnd.nextDouble() * span);
        }
        java.util.Arrays.sort(at);
        return at;
    }

    /** Submits the tasks on their schedule, retrying each (submission is idempotent by id) while Redis is down. */
    private final class Submitter extends Thread {
        private final List<TaskSpec> specs;
        private final long[] at;
        private final long deadline;

        Submitter(List<TaskSpec> specs, long[] at, long deadline) {
            super("chaos-submitter");
            setDaemon(true);
            this.specs = specs;
            this.at = at;
            this.deadline = deadline;
        }

        @Override
        public void run() {
            long start = System.nanoTime();
            try {
                for (int i = 0; i < specs.size(); i++) {
                    long wait = at[i] - (System.nanoTime() - start) / 1_000_000;
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    TaskSpec spec = specs.get(i);
                    for (int attempt = 1; ; attempt++) {
                        try {
                            api.submit(spec);
                            if (attempt > 1) {
                                say("submitted %s (after %d tries)", spec.getTaskId(), attempt);
                            }
                            break;
                        } catch (SchedulerException | IllegalStateException e) {
                            if (System.nanoTime() - deadline > 0) {
                                say("could not submit %s before the deadline: %s", spec.getTaskId(), e);
                                return;
                            }
                            Thread.sleep(250);
                        }
                    }
                }
                say("all %d tasks submitted", specs.size());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Faults

    private enum Fault { KILL_WORKER, FREEZE_WORKER, KILL_LEADER, RESTART_REDIS }

    private record Timed(long atNanos, String what, Runnable action) {
    }

    private void chaos(Random rnd, long deadline) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(opt.durationS).toNanos();
        // The schedule: an action every 2 to 5 s; every kind at least once, Redis exactly once.
        List<Long> times = new ArrayList<>();
        for (long t = 2000 + rnd.nextInt(3001); t < opt.durationS * 1000L - 1000; t += 2000 + rnd.nextInt(3001)) {
            times.add(t);
        }
        List<Fault> kinds = new ArrayList<>();
        for (int i = 0; i < times.size(); i++) {
            int r = rnd.nextInt(100);
            kinds.add(r < 45 ? Fault.KILL_WORKER : r < 75 ? Fault.FREEZE_WORKER : Fault.KILL_LEADER);
        }
        List<Fault> mandatory = new ArrayList<>(List.of(Fault.KILL_WORKER, Fault.FREEZE_WORKER, Fault.KILL_LEADER));
        if (!redis.isExternal()) {
            mandatory.add(Fault.RESTART_REDIS);
        }
        List<Integer> slots = new ArrayList<>();
        int early = Math.max(mandatory.size(), (int) (times.size() * 0.7));
        for (int i = 0; i < Math.min(early, times.size()); i++) {
            slots.add(i);
        }
        Collections.shuffle(slots, rnd);
        for (int i = 0; i < mandatory.size() && i < slots.size(); i++) {
            kinds.set(slots.get(i), mandatory.get(i));
        }
        say("chaos: %d fault actions planned over %d s", times.size(), opt.durationS);

        PriorityQueue<Timed> pending = new PriorityQueue<>(Comparator.comparingLong(Timed::atNanos));
        long start = System.nanoTime();
        int next = 0;
        while (System.nanoTime() - end < 0 && System.nanoTime() - deadline < 0) {
            runDue(pending);
            pollProcesses();
            if (next < times.size() && System.nanoTime() - (start + times.get(next) * 1_000_000) >= 0) {
                inject(kinds.get(next), rnd, pending);
                next++;
            }
            Thread.sleep(50);
        }
        say("chaos phase over: stopping faults; bringing back what is down");
        while (!pending.isEmpty()) {
            Timed t = pending.poll();
            say("  now: %s", t.what);
            t.action.run();
        }
    }

    private void runDue(PriorityQueue<Timed> pending) {
        while (!pending.isEmpty() && System.nanoTime() - pending.peek().atNanos >= 0) {
            pending.poll().action.run();
        }
    }

    private void inject(Fault fault, Random rnd, PriorityQueue<Timed> pending) {
        switch (fault) {
            case KILL_WORKER -> {
                List<Proc> up = upWorkers();
                if (up.size() < 2) {
                    say("skip kill -9 worker: only %d worker(s) up and unfrozen", up.size());
                    return;
                }
                Proc w = up.get(rnd.nextInt(up.size()));
                long delay = 500 + rnd.nextInt(2501);
                say("kill -9 worker %s (pid %d, running %d task processes); restart in %.1f s", w.name, w.jvm.pid(),
                        w.jvm.descendants().size(), delay / 1000.0);
                w.jvm.kill();
                w.state = State.DOWN;
                count("kill -9 worker");
                pending.add(new Timed(System.nanoTime() + delay * 1_000_000, "restart worker " + w.name, () -> {
                    say("restart worker %s", w.name);
                    w.start();
                }));
            }
            case FREEZE_WORKER -> {
                List<Proc> up = upWorkers();
                if (up.size() < 2) {
                    say("skip freeze worker: only %d worker(s) up and unfrozen", up.size());
                    return;
                }
                Proc w = up.get(rnd.nextInt(up.size()));
                long length = 3500 + rnd.nextInt(2501);
                say("freeze (SIGSTOP) worker %s (pid %d) for %.1f s", w.name, w.jvm.pid(), length / 1000.0);
                w.jvm.freeze();
                w.state = State.FROZEN;
                count("freeze worker");
                pending.add(new Timed(System.nanoTime() + length * 1_000_000, "thaw worker " + w.name, () -> {
                    say("thaw (SIGCONT) worker %s", w.name);
                    w.jvm.thaw();
                    w.state = State.UP;
                }));
            }
            case KILL_LEADER -> {
                if (masters.stream().anyMatch(m -> m.state != State.UP)) {
                    say("skip kill leader: a master is not up yet");
                    return;
                }
                Optional<Proc> leader = currentLeader();
                if (leader.isEmpty()) {
                    say("skip kill leader: no master says it leads");
                    return;
                }
                Proc m = leader.get();
                long delay = 1000 + rnd.nextInt(2001);
                say("kill -9 leader master %s (%s, pid %d); restart in %.1f s", m.name, m.masterId, m.jvm.pid(),
                        delay / 1000.0);
                m.jvm.kill();
                m.state = State.DOWN;
                count("kill -9 leader master");
                pending.add(new Timed(System.nanoTime() + delay * 1_000_000, "restart master " + m.name, () -> {
                    say("restart master %s on port %d", m.name, m.port);
                    m.start();
                }));
            }
            case RESTART_REDIS -> {
                long down = 500 + rnd.nextInt(2001);
                say("kill -9 redis-server (pid %d); restart in %.1f s", redis.pid(), down / 1000.0);
                redis.kill();
                count("kill -9 and restart redis");
                pending.add(new Timed(System.nanoTime() + down * 1_000_000, "restart redis", () -> {
                    redis.restart();
                    say("redis restarted from its AOF (pid %d)", redis.pid());
                }));
            }
            default -> throw new IllegalStateException(fault.name());
        }
    }

    private void count(String what) {
        actionCounts.merge(what, 1, Integer::sum);
    }

    private List<Proc> upWorkers() {
        return workers.stream().filter(w -> w.state == State.UP && w.jvm.isAlive()).toList();
    }

    /** The master JVM that most recently became leader (highest leadership epoch it logged). */
    private Optional<Proc> currentLeader() {
        Proc best = null;
        long bestEpoch = -1;
        for (Proc m : masters) {
            if (!m.jvm.isAlive()) {
                continue;
            }
            for (String line : m.jvm.output()) {
                Matcher x = LEADER_LINE.matcher(line);
                if (x.find() && Long.parseLong(x.group(2)) > bestEpoch) {
                    bestEpoch = Long.parseLong(x.group(2));
                    best = m;
                }
            }
        }
        return Optional.ofNullable(best);
    }

    /** Brings back every process that is down or frozen and waits until all are up. */
    private void heal(long deadline) throws InterruptedException {
        for (Proc p : all()) {
            if (p.state == State.FROZEN) {
                p.jvm.thaw();
                p.state = State.UP;
            } else if (p.state == State.DOWN) {
                p.start();
            }
        }
        if (!redis.isExternal() && !redis.isRunning()) {
            redis.restart();
        }
        for (Proc p : all()) {
            awaitUp(p, Duration.ofNanos(Math.max(1, Math.min(Duration.ofSeconds(60).toNanos(), deadline - System.nanoTime()))));
        }
        say("all processes up again; leader: %s", currentLeader().map(m -> m.name + " (" + m.masterId + ")").orElse("?"));
    }

    private List<Proc> all() {
        List<Proc> all = new ArrayList<>(masters);
        all.addAll(workers);
        return all;
    }

    // ------------------------------------------------------------------------------------------
    // Processes

    private enum State { STARTING, UP, DOWN, FROZEN }

    /** One master or worker slot: its current JVM and what the chaos did to it. */
    private final class Proc {
        final String name;
        final boolean master;
        final int port;
        int incarnation;
        JvmProcess jvm;
        volatile State state = State.DOWN;
        String masterId = "?";

        Proc(String name, boolean master, int port) {
            this.name = name;
            this.master = master;
            this.port = port;
        }

        void start() {
            incarnation++;
            List<String> args = new ArrayList<>(List.of("--redis", redisUrl,
                    "--secret", SECRET, "--namespace", namespace, "--heartbeat-ms", "200", "--liveness-ms", "1000",
                    "--task-lease-ms", "3000", "--ack-timeout-ms", "2000"));
            if (master) {
                args.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--log-dir", logs.toString(),
                        "--leader-lease-ms", "1000", "--reap-interval-ms", "200"));
            } else {
                args.addAll(List.of("--masters", mastersList, "--worker-id", name, "--gpus", "0,1", "--cpu-slots", "2",
                        "--scripts", opt.scripts.toAbsolutePath().normalize().toString(), "--runs", runs.toString(),
                        "--kill-grace-ms", "1000"));
            }
            jvm = JvmProcess.builder(master ? MasterMain.class : WorkerMain.class)
                    .jvmArgs("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m",
                            "-Dlogback.configurationFile=" + logback)
                    .args(args).logFile(jvmDir.resolve(name + "." + incarnation + ".log")).start();
            everyJvm.add(jvm);
            state = State.STARTING;
        }

        /** Looks at a starting JVM's output: up once it printed its ready line. */
        boolean checkUp() {
            if (state != State.STARTING) {
                return state == State.UP;
            }
            for (String line : jvm.output()) {
                if (master) {
                    Matcher x = READY_LINE.matcher(line);
                    if (x.find()) {
                        masterId = x.group(1);
                        state = State.UP;
                        say("master %s up: %s (%s), pid %d", name, masterId, x.group(3), jvm.pid());
                        return true;
                    }
                } else if (line.contains("worker " + name + " started, session")) {
                    state = State.UP;
                    say("worker %s up, pid %d", name, jvm.pid());
                    return true;
                }
            }
            return false;
        }
    }

    /** Notices JVMs that exited without being killed here (restarting them), and JVMs that came up. */
    private void pollProcesses() {
        for (Proc p : all()) {
            if (p.state == State.STARTING) {
                if (!p.checkUp() && !p.jvm.isAlive()) {
                    say("%s exited while starting (exit %s); starting it again; end of %s: %s", p.name,
                            p.jvm.exitCode(), p.jvm.logFile(), tail(p.jvm.output(), 3));
                    p.start();
                }
            } else if (p.state == State.UP && !p.jvm.isAlive()) {
                unexpectedExits.incrementAndGet();
                say("UNEXPECTED: %s exited by itself (exit %s); end of %s: %s; restarting it", p.name,
                        p.jvm.exitCode(), p.jvm.logFile(), tail(p.jvm.output(), 5));
                p.start();
            }
        }
    }

    private void awaitUp(Proc p, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!p.checkUp()) {
            if (!p.jvm.isAlive()) {
                say("%s exited while starting (exit %s); starting it again; end of %s: %s", p.name, p.jvm.exitCode(),
                        p.jvm.logFile(), tail(p.jvm.output(), 3));
                Thread.sleep(500);
                p.start();
            }
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException(p.name + " did not come up within " + timeout + "; see " + p.jvm.logFile());
            }
            Thread.sleep(50);
        }
    }

    private static String tail(List<String> lines, int n) {
        return String.join(" | ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Waiting for the end

    private void drain(List<TaskSpec> specs, long deadline) throws InterruptedException {
        say("waiting for the %d tasks to end (at most %d s)", specs.size(), Math.max(0, remainingMillis(deadline) / 1000));
        List<String> open = new ArrayList<>(specs.stream().map(TaskSpec::getTaskId).toList());
        long lastNote = System.nanoTime();
        while (!open.isEmpty() && System.nanoTime() - deadline < 0) {
            pollProcesses();
            open.removeIf(id -> {
                try {
                    return api.getTask(id).map(r -> r.getState().isTerminal()).orElse(false);
                } catch (RuntimeException e) {
                    return false;
                }
            });
            if (System.nanoTime() - lastNote > Duration.ofSeconds(10).toNanos() && !open.isEmpty()) {
                say("  %d tasks not ended yet: %s", open.size(), open.size() <= 8 ? open : open.subList(0, 8) + "...");
                lastNote = System.nanoTime();
            }
            if (!open.isEmpty()) {
                Thread.sleep(500);
            }
        }
        if (open.isEmpty()) {
            say("every task has ended");
        } else {
            say("%d tasks had not ended at the deadline: %s", open.size(), open);
        }
        // The leader writes a log's last lines and its end marker just after the success is
        // recorded; give the files a moment to be complete.
        long logDeadline = Math.min(deadline + Duration.ofSeconds(10).toNanos(), System.nanoTime() + Duration.ofSeconds(15).toNanos());
        List<String> ids = new ArrayList<>(specs.stream().map(TaskSpec::getTaskId).toList());
        while (System.nanoTime() - logDeadline < 0) {
            ids.removeIf(id -> {
                Optional<TaskRecord> r = safeGet(id);
                return r.isEmpty() || r.get().getState() != TaskState.SUCCEEDED || finalAttemptEnded(id, r.get().getEpoch());
            });
            if (ids.isEmpty()) {
                break;
            }
            Thread.sleep(250);
        }
    }

    private boolean finalAttemptEnded(String id, long epoch) {
        return readLog(id).map(l -> l.attempts.stream().anyMatch(a -> a.epoch == epoch && a.end != null)).orElse(false);
    }

    private Optional<TaskRecord> safeGet(String id) {
        for (int i = 0; i < 20; i++) {
            try {
                return api.getTask(id);
            } catch (RuntimeException e) {
                try {
                    Thread.sleep(250);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------------------------------
    // Checks

    private Report check(List<TaskSpec> specs) throws IOException {
        int succeededOnce = 0;
        int lost = 0;
        int duplicated = 0;
        int overlapping = 0;
        int reruns = 0;
        List<String> problems = new ArrayList<>();
        out.println();
        out.printf("%-10s %-10s %8s %6s %-8s %-7s %s%n", "task", "state", "attempts", "losses", "worker", "verdict",
                "attempts by their marks (done: trained to the end; term: stopped by a signal)");
        for (TaskSpec spec : specs) {
            String id = spec.getTaskId();
            Optional<TaskRecord> found = safeGet(id);
            Marks marks = readMarks(id);
            List<String> issues = new ArrayList<>();
            boolean isLost = false;
            boolean isDuplicated = false;
            boolean isOverlapping = false;

            if (found.isEmpty() || found.get().getState() != TaskState.SUCCEEDED) {
                isLost = true;
                issues.add(found.isEmpty() ? "no record" : "ended " + found.get().getState() + ": "
                        + found.get().getError() + " " + found.get().getReason());
            }
            TaskRecord r = found.orElse(null);
            if (r != null) {
                List<TaskTransition> successes = r.getHistory().stream().filter(t -> t.getTo() == TaskState.SUCCEEDED).toList();
                long endings = r.getHistory().stream().filter(t -> t.getTo().isTerminal()).count();
                if (successes.size() > 1 || endings > 1) {
                    isDuplicated = true;
                    issues.add("history enters SUCCEEDED " + successes.size() + " times, a final state " + endings + " times");
                }
                if (r.getState() == TaskState.SUCCEEDED && successes.size() == 1 && successes.get(0).getEpoch() != r.getEpoch()) {
                    issues.add("success recorded for epoch " + successes.get(0).getEpoch() + " but the record's epoch is "
                            + r.getEpoch());
                }
            }
            Optional<TaskLog> log = readLog(id);
            if (log.isPresent()) {
                long successEnds = log.get().attempts.stream().filter(a -> a.end != null && a.end.contains("state=SUCCEEDED")).count();
                if (successEnds > 1) {
                    isDuplicated = true;
                    issues.add("log file ends " + successEnds + " attempts with state=SUCCEEDED");
                }
            }
            String overlap = marks.overlap();
            if (overlap != null) {
                isOverlapping = true;
                issues.add(overlap);
            }
            if (marks.completed() > 1) {
                reruns++;
            }
            if (!isLost && r != null) {
                Span last = marks.spans.get(r.getEpoch());
                if (last == null || !"exit=0".equals(last.how)) {
                    issues.add("the succeeded epoch " + r.getEpoch() + " has no 'exit=0' stop mark ("
                            + (last == null ? "no marks" : last) + ")");
                }
                String logIssue = checkLog(id, r, log);
                if (logIssue != null) {
                    issues.add(logIssue);
                }
            }
            if (isLost) {
                lost++;
            }
            if (isDuplicated) {
                duplicated++;
            }
            if (isOverlapping) {
                overlapping++;
            }
            if (issues.isEmpty()) {
                succeededOnce++;
            } else {
                problems.add(id + ": " + String.join("; ", issues));
            }
            out.printf("%-10s %-10s %8s %6s %-8s %-7s %s%n", id, r == null ? "-" : r.getState(), r == null ? "-" : r.getAttempt(),
                    r == null ? "-" : r.getLeaseLosses(), r == null ? "-" : r.getWorkerId(), issues.isEmpty() ? "ok" : "FAIL",
                    marks.summary());
        }
        out.println();
        say("faults injected: %s; processes that exited by themselves: %d", actionCounts, unexpectedExits.get());
        if (reruns > 0) {
            say("note: %d task(s) re-ran after an unreported finish (training done, worker killed or frozen before the "
                    + "success reached Redis; the retry resumed from the final checkpoint) - at-least-once, not a duplicate",
                    reruns);
        }
        if (!problems.isEmpty()) {
            say("PROBLEMS (seed %d; evidence: records above, %s, %s/<task>/checkpoints/marks.log, %s):", opt.seed, logs, runs, jvmDir);
            for (String p : problems) {
                say("  %s", p);
            }
            for (String p : problems) {
                String id = p.substring(0, p.indexOf(':'));
                safeGet(id).ifPresent(rec -> {
                    say("  history of %s:", id);
                    for (TaskTransition t : rec.getHistory()) {
                        say("    %d %s -> %s epoch %d worker %s: %s", t.getAtMillis(), t.getFrom(), t.getTo(), t.getEpoch(),
                                t.getWorkerId(), t.getReason());
                    }
                });
                say("  marks of %s: %s", id, readMarks(id).lines);
            }
        }
        Report report = new Report(specs.size(), succeededOnce, lost, duplicated, overlapping, reruns, problems);
        say("finished in %.1f s; workdir kept for inspection", (System.nanoTime() - t0) / 1e9);
        out.println(report.summary());
        appendLog(report.summary());
        return report;
    }

    /** Compares the final attempt's block in the master's log file with what the attempt printed. */
    private String checkLog(String id, TaskRecord r, Optional<TaskLog> log) throws IOException {
        if (log.isEmpty()) {
            return "no log file " + logs.resolve(id + ".log");
        }
        Path runDir = r.getRunDir().isEmpty() ? runs.resolve(id).resolve("attempt-" + r.getAttempt()) : Path.of(r.getRunDir());
        Path printedFile = runDir.resolve("printed.txt");
        if (!Files.exists(printedFile)) {
            return "no " + printedFile;
        }
        String problem = finalAttemptProblem(log.get(), r.getEpoch(),
                Files.readAllLines(printedFile, StandardCharsets.UTF_8));
        return problem == null ? null : problem + " (printed: " + printedFile + ")";
    }

    /**
     * Checks the successful attempt's block of a log file against what it printed: a marker for
     * {@code epoch}, exactly the printed lines in order, {@code ##RLS_END state=SUCCEEDED
     * complete=true}, and nothing after that end. Returns the problem, or null.
     */
    static String finalAttemptProblem(TaskLog log, long epoch, List<String> printed) {
        AttemptBlock block = null;
        for (AttemptBlock a : log.attempts) {
            if (a.epoch == epoch) {
                block = a;
            }
        }
        if (block == null) {
            return "log file has no ##RLS_ATTEMPT marker for epoch " + epoch;
        }
        if (!printed.equals(block.lines)) {
            int i = 0;
            while (i < printed.size() && i < block.lines.size() && printed.get(i).equals(block.lines.get(i))) {
                i++;
            }
            return "log of epoch " + epoch + " differs from what it printed at line " + (i + 1) + " (log "
                    + block.lines.size() + " lines: " + (i < block.lines.size() ? "'" + block.lines.get(i) + "'" : "end")
                    + "; printed " + printed.size() + " lines: " + (i < printed.size() ? "'" + printed.get(i) + "'" : "end") + ")";
        }
        if (block.end == null || !block.end.contains("state=SUCCEEDED") || !block.end.contains("complete=true")) {
            return "log of epoch " + epoch + " ends with " + (block.end == null ? "no ##RLS_END" : block.end);
        }
        if (!block.afterEnd.isEmpty()) {
            return "log of epoch " + epoch + " has " + block.afterEnd.size() + " more line(s) after its "
                    + "##RLS_END, first: " + block.afterEnd.get(0);
        }
        return null;
    }

    /**
     * One attempt in a log file: its marker's epoch, its output lines (unescaped) up to its first
     * end line, that end line, and whatever the file holds after it before the next marker.
     */
    static final class AttemptBlock {
        final long epoch;
        final List<String> lines = new ArrayList<>();
        String end;
        final List<String> afterEnd = new ArrayList<>();

        AttemptBlock(long epoch) {
            this.epoch = epoch;
        }
    }

    record TaskLog(List<AttemptBlock> attempts) {
    }

    private Optional<TaskLog> readLog(String id) {
        Path file = logs.resolve(id + ".log");
        try {
            return Files.exists(file) ? Optional.of(parseLog(Files.readAllLines(file, StandardCharsets.UTF_8)))
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Parses a master's task log file (see LogFileFormat in scheduler-master) into its attempts. */
    static TaskLog parseLog(List<String> lines) {
        List<AttemptBlock> attempts = new ArrayList<>();
        AttemptBlock current = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (i == 0 && line.startsWith("TRACE_ID:")) {
                continue;
            }
            if (line.startsWith("##RLS_ATTEMPT ")) {
                Matcher x = Pattern.compile("epoch=(\\d+)").matcher(line);
                current = new AttemptBlock(x.find() ? Long.parseLong(x.group(1)) : -1);
                attempts.add(current);
            } else if (current == null) {
                continue;
            } else if (current.end != null) {
                current.afterEnd.add(line);
            } else if (line.startsWith("##RLS_END ")) {
                current.end = line;
            } else {
                current.lines.add(line.startsWith("##RLS_TEXT ") ? line.substring("##RLS_TEXT ".length()) : line);
            }
        }
        return new TaskLog(attempts);
    }

    /** One attempt by its marks. */
    record Span(long epoch, String attempt, double start, double stop, String how) {
        @Override
        public String toString() {
            return "attempt " + attempt + " epoch " + epoch + " [" + start + ", "
                    + (Double.isNaN(stop) ? "no stop mark" : stop + " " + how) + "]";
        }
    }

    /** The marks of all attempts of a task, by epoch. */
    static final class Marks {
        final Map<Long, Span> spans = new LinkedHashMap<>();
        final List<String> lines = new ArrayList<>();
        boolean unreadable;

        /**
         * Returns a description of the first overlap found, or null. Attempts are ordered by
         * their start marks; each must start after every earlier one stopped. An attempt without
         * a stop mark that is followed by another attempt cannot be shown to have stopped first,
         * so it counts as overlapping. An attempt without any mark never started training (the
         * start mark is written before it) and cannot overlap.
         */
        String overlap() {
            if (unreadable) {
                return "marks unreadable: " + lines.get(lines.size() - 1);
            }
            List<Span> byStart = new ArrayList<>(spans.values());
            byStart.removeIf(s -> Double.isNaN(s.start));
            byStart.sort(Comparator.comparingDouble(Span::start));
            Span latest = null; // the earlier attempt that stopped last
            for (Span s : byStart) {
                if (latest != null) {
                    if (Double.isNaN(latest.stop)) {
                        return "epoch " + latest.epoch + " has no stop mark and epoch " + s.epoch + " started after it";
                    }
                    if (s.start < latest.stop) {
                        return String.format(Locale.ROOT, "epoch %d started at %.6f before epoch %d stopped at %.6f",
                                s.epoch, s.start, latest.epoch, latest.stop);
                    }
                }
                if (latest == null || Double.isNaN(s.stop) || s.stop > latest.stop) {
                    latest = s;
                }
            }
            for (Span s : spans.values()) {
                if (Double.isNaN(s.start)) {
                    return "epoch " + s.epoch + " has a stop mark but no start mark";
                }
            }
            return null;
        }

        long completed() {
            return spans.values().stream().filter(s -> "exit=0".equals(s.how)).count();
        }

        String summary() {
            StringBuilder b = new StringBuilder();
            for (Span s : spans.values()) {
                if (b.length() > 0) {
                    b.append(' ');
                }
                b.append(s.attempt).append(Double.isNaN(s.stop) ? ":?" : s.how.equals("exit=0") ? ":done"
                        : s.how.startsWith("signal=") ? ":term" : ":" + s.how);
            }
            return b.length() == 0 ? "-" : b.toString();
        }
    }

    private Marks readMarks(String id) {
        Path file = runs.resolve(id).resolve("checkpoints").resolve("marks.log");
        try {
            return parseMarks(Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of());
        } catch (IOException e) {
            Marks marks = new Marks();
            marks.lines.add("unreadable: " + e);
            return marks;
        }
    }

    /** Parses the lines of a task's marks.log (see scripts/chaos_task.py). */
    static Marks parseMarks(List<String> lines) {
        Marks marks = new Marks();
        try {
            for (String line : lines) {
                marks.lines.add(line);
                String[] f = line.trim().split(" ");
                if (f.length < 3) {
                    continue;
                }
                long epoch = Long.parseLong(f[1]);
                double at = Double.parseDouble(f[2]);
                Span s = marks.spans.getOrDefault(epoch, new Span(epoch, "?", Double.NaN, Double.NaN, "?"));
                if (f[0].equals("start")) {
                    if (!Double.isNaN(s.start)) {
                        // Two start marks for one epoch: two processes ran for one lease.
                        marks.spans.put(-epoch, new Span(-epoch, "second start of epoch " + epoch, at, Double.NaN, "?"));
                        continue;
                    }
                    s = new Span(epoch, f.length > 3 ? f[3] : "?", at, s.stop, s.how);
                } else if (f[0].equals("stop")) {
                    s = new Span(epoch, s.attempt, s.start, at, f.length > 3 ? f[3] : "?");
                }
                marks.spans.put(epoch, s);
            }
        } catch (RuntimeException e) {
            marks.lines.add("unreadable: " + e);
            marks.unreadable = true;
        }
        return marks;
    }

    // ------------------------------------------------------------------------------------------
    // Output and cleanup

    private void say(String format, Object... args) {
        String line = String.format(Locale.ROOT, "[%6.1fs] ", (System.nanoTime() - t0) / 1e9)
                + String.format(Locale.ROOT, format, args);
        synchronized (out) {
            out.println(line);
            out.flush();
        }
        appendLog(line);
    }

    private void appendLog(String line) {
        if (jvmDir == null) {
            return;
        }
        try {
            Files.writeString(jvmDir.getParent().resolve("chaos.log"), line + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            // The console has it.
        }
    }

    private long remainingMillis(long deadline) {
        return (deadline - System.nanoTime()) / 1_000_000;
    }

    /** Stops everything this run started: idempotent; also run by a shutdown hook. */
    private void cleanup() {
        if (!cleaned.compareAndSet(false, true)) {
            return;
        }
        if (api != null) {
            try {
                api.close();
            } catch (RuntimeException e) {
                // Going away anyway.
            }
        }
        List<JvmProcess> jvms;
        synchronized (everyJvm) {
            jvms = new ArrayList<>(everyJvm);
        }
        for (JvmProcess p : jvms) {
            try {
                p.close(); // SIGKILL to the JVM and every process it started, orphans included
            } catch (RuntimeException e) {
                // Next.
            }
        }
        if (redis != null) {
            try {
                redis.close();
            } catch (RuntimeException e) {
                // Nothing more to do.
            }
        }
    }

    private static final String LOGBACK = """
            <configuration>
              <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
                <encoder>
                  <pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern>
                </encoder>
              </appender>
              <logger name="io.rlscheduler" level="INFO"/>
              <logger name="io.netty" level="WARN"/>
              <logger name="io.lettuce" level="WARN"/>
              <root level="WARN">
                <appender-ref ref="CONSOLE"/>
              </root>
            </configuration>
            """;
}
