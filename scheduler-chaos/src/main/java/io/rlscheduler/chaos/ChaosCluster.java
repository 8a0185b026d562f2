package io.rlscheduler.chaos;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.internal.ArtifactRecords;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.examples.MasterMain;
import io.rlscheduler.examples.WorkerMain;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.testkit.JvmProcess;
import io.rlscheduler.testkit.TestRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cluster a chaos run drives: a redis-server with AOF ({@link TestRedis}; or the server
 * {@code REDIS_URL} names, which is then never restarted), two masters ({@link MasterMain}) and
 * three workers ({@link WorkerMain}, two GPU ids and two CPU slots each), each a JVM of its own,
 * all with short leases (heartbeat 200 ms, liveness 1 s, task lease 3 s, ack timeout 2 s, leader
 * lease 1 s); and a third master in this JVM, {@linkplain SchedulerMaster.Builder#standbyOnly(boolean)
 * standby-only}, through which the run submits and reads tasks, so "the leader" is always one of
 * the two master JVMs. Each worker stands for a machine of its own: its own run root (and in it
 * its state directory, the default), sharing only Redis and the directory store
 * ({@link Workdir#store()}) with the others. The run reads the checkpoint records in Redis
 * through a lease core of its own ({@link #artifacts()}).
 *
 * <p>Used by the run's thread, except {@link #close()}, which a shutdown hook may call at any
 * time and which stops everything started; idempotent.
 */
final class ChaosCluster implements AutoCloseable {

    /** The cluster's shared secret. */
    static final String SECRET = "chaos-run-shared-secret-0123456789";

    /** The line a master prints when it takes the leadership. */
    private static final Pattern LEADER_LINE = Pattern.compile("master (\\S+) is the leader \\(leadership epoch (\\d+)\\)");

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final int RECORD_READ_TRIES = 20;
    private static final long RECORD_RETRY_MILLIS = 250;

    private final Workdir workdir;
    private final Path scripts;
    private final String namespace;
    private final RunLog log;
    private final List<ClusterProcess> masters = new ArrayList<>();
    private final List<ClusterProcess> workers = new ArrayList<>();
    private final List<JvmProcess> everyJvm = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger unexpectedExits = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile TestRedis redis;
    private volatile SchedulerMaster api;
    private volatile RedisClient redisClient;
    private volatile LeaseCore observer;
    private String redisUrl;
    private String mastersList;

    ChaosCluster(Workdir workdir, Path scripts, String namespace, RunLog log) {
        this.workdir = workdir;
        this.scripts = scripts;
        this.namespace = namespace;
        this.log = log;
    }

    /** Starts Redis, the two masters, the run's own master and the three workers, and waits until all are up. */
    void start() throws InterruptedException {
        redis = TestRedis.fromEnvironment();
        redisUrl = redis.isExternal() ? TestRedis.externalUrl().orElseThrow()
                : "redis://" + redis.getHost() + ":" + redis.getPort();
        log.say("redis %s%s", redis.isExternal() ? "from REDIS_URL" : redisUrl, redis.isExternal()
                ? " (REDIS_URL: external, so it is not killed or restarted in this run)" : " (redis-server with AOF, fsync always)");

        int[] ports = {freePort(), freePort()};
        while (ports[1] == ports[0]) {
            ports[1] = freePort();
        }
        mastersList = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
        masters.add(new ClusterProcess("m1", ClusterProcess.Role.MASTER, ports[0], this::launch, log));
        masters.add(new ClusterProcess("m2", ClusterProcess.Role.MASTER, ports[1], this::launch, log));
        for (ClusterProcess m : masters) {
            m.start();
            awaitUp(m, START_TIMEOUT);
        }

        CoreOptions core = coreOptions().mutate().maxAttempts(100).maxLeaseLosses(100).build();
        api = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(core).logDirectory(workdir.logs()).masterId("chaos-api").standbyOnly(true)
                .leaderLease(Duration.ofSeconds(1)).apiTimeout(Duration.ofSeconds(5)).build().start();
        log.say("api master %s is standby-only (never leads), port %d", api.getMasterId(), api.getRpcAddress().getPort());
        redisClient = RedisClient.create(redis.getUri());
        observer = LeaseCore.create(redisClient, coreOptions());

        for (int i = 1; i <= 3; i++) {
            ClusterProcess w = new ClusterProcess("w" + i, ClusterProcess.Role.WORKER, 0, this::launch, log);
            workers.add(w);
            w.start();
        }
        for (ClusterProcess w : workers) {
            awaitUp(w, START_TIMEOUT);
        }
        log.say("cluster up: masters %s, workers w1 w2 w3 (GPUs 0,1 and 2 CPU slots each; each its own run root, "
                + "all one directory store %s)", mastersList, workdir.store());
    }

    private CoreOptions coreOptions() {
        return CoreOptions.builder().namespace(namespace).heartbeatInterval(Duration.ofMillis(200))
                .livenessLease(Duration.ofSeconds(1)).taskLease(Duration.ofSeconds(3))
                .ackTimeout(Duration.ofSeconds(2)).build();
    }

    /** Starts the next JVM of a slot, with the cluster's settings as MasterMain's or WorkerMain's arguments. */
    private JvmProcess launch(ClusterProcess p) {
        List<String> args = new ArrayList<>(List.of("--redis", redisUrl,
                "--secret", SECRET, "--namespace", namespace, "--heartbeat-ms", "200", "--liveness-ms", "1000",
                "--task-lease-ms", "3000", "--ack-timeout-ms", "2000"));
        boolean master = p.role() == ClusterProcess.Role.MASTER;
        if (master) {
            args.addAll(List.of("--port", Integer.toString(p.port()), "--bind", "127.0.0.1",
                    "--log-dir", workdir.logs().toString(), "--leader-lease-ms", "1000", "--reap-interval-ms", "200"));
        } else {
            args.addAll(List.of("--masters", mastersList, "--worker-id", p.name(), "--gpus", "0,1", "--cpu-slots", "2",
                    "--scripts", scripts.toString(), "--runs", workdir.workerRuns(p.name()).toString(),
                    "--store", workdir.store().toString(), "--kill-grace-ms", "1000"));
        }
        JvmProcess jvm = JvmProcess.builder(master ? MasterMain.class : WorkerMain.class)
                .jvmArgs("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m",
                        "-Dlogback.configurationFile=" + workdir.logback())
                .args(args).logFile(workdir.jvm().resolve(p.name() + "." + p.incarnation() + ".log")).start();
        everyJvm.add(jvm);
        return jvm;
    }

    TestRedis redis() {
        return redis;
    }

    /** Returns the run's standby-only master. */
    SchedulerMaster api() {
        return api;
    }

    /** Returns the checkpoint records in Redis (committed checkpoints, what each attempt resumed from), read-only here. */
    ArtifactRecords artifacts() {
        return observer.artifacts();
    }

    List<ClusterProcess> masters() {
        return masters;
    }

    /** Returns the masters, then the workers. */
    List<ClusterProcess> all() {
        List<ClusterProcess> all = new ArrayList<>(masters);
        all.addAll(workers);
        return all;
    }

    /** Returns the workers that are UP with a live JVM. */
    List<ClusterProcess> upWorkers() {
        return workers.stream().filter(w -> w.state() == ClusterProcess.State.UP && w.jvm().isAlive()).toList();
    }

    /** Returns how many JVMs exited by themselves while UP. */
    int unexpectedExits() {
        return unexpectedExits.get();
    }

    /** Returns the master JVM that most recently became leader (the highest leadership epoch it logged). */
    Optional<ClusterProcess> currentLeader() {
        ClusterProcess best = null;
        long bestEpoch = -1;
        for (ClusterProcess m : masters) {
            if (!m.jvm().isAlive()) {
                continue;
            }
            for (String line : m.jvm().output()) {
                Matcher x = LEADER_LINE.matcher(line);
                if (x.find() && Long.parseLong(x.group(2)) > bestEpoch) {
                    bestEpoch = Long.parseLong(x.group(2));
                    best = m;
                }
            }
        }
        return Optional.ofNullable(best);
    }

    /** Notices JVMs that came up, and JVMs that exited without being killed here (starting them again). */
    void pollProcesses() {
        for (ClusterProcess p : all()) {
            if (p.state() == ClusterProcess.State.STARTING) {
                if (!p.checkUp() && !p.jvm().isAlive()) {
                    log.say("%s exited while starting (exit %s); starting it again; end of %s: %s", p.name(),
                            p.jvm().exitCode(), p.jvm().logFile(), p.tail(3));
                    p.start();
                }
            } else if (p.state() == ClusterProcess.State.UP && !p.jvm().isAlive()) {
                unexpectedExits.incrementAndGet();
                log.say("UNEXPECTED: %s exited by itself (exit %s); end of %s: %s; restarting it", p.name(),
                        p.jvm().exitCode(), p.jvm().logFile(), p.tail(5));
                p.start();
            }
        }
    }

    /** Brings back every process that is down or frozen, and Redis, and waits until all are up. */
    void heal(long deadline) throws InterruptedException {
        for (ClusterProcess p : all()) {
            if (p.state() == ClusterProcess.State.FROZEN) {
                p.thaw();
            } else if (p.state() == ClusterProcess.State.DOWN) {
                p.start();
            }
        }
        if (!redis.isExternal() && !redis.isRunning()) {
            redis.restart();
        }
        for (ClusterProcess p : all()) {
            awaitUp(p, Duration.ofNanos(Math.max(1, Math.min(START_TIMEOUT.toNanos(), deadline - System.nanoTime()))));
        }
        log.say("all processes up again; leader: %s",
                currentLeader().map(m -> m.name() + " (" + m.masterId() + ")").orElse("?"));
    }

    private void awaitUp(ClusterProcess p, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!p.checkUp()) {
            if (!p.jvm().isAlive()) {
                log.say("%s exited while starting (exit %s); starting it again; end of %s: %s", p.name(),
                        p.jvm().exitCode(), p.jvm().logFile(), p.tail(3));
                Thread.sleep(500);
                p.start();
            }
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException(p.name() + " did not come up within " + timeout + "; see " + p.jvm().logFile());
            }
            Thread.sleep(50);
        }
    }

    /** Reads a task's record through the run's master, retrying for about 5 s while Redis or the masters are away. */
    Optional<TaskRecord> readRecord(String taskId) {
        for (int i = 0; i < RECORD_READ_TRIES; i++) {
            try {
                return api.getTask(taskId);
            } catch (RuntimeException e) {
                try {
                    Thread.sleep(RECORD_RETRY_MILLIS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return Optional.empty();
    }

    /** Stops everything started: the run's master, every JVM and everything they started, Redis. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        SchedulerMaster m = api;
        if (m != null) {
            try {
                m.close();
            } catch (RuntimeException e) {
                // Going away anyway.
            }
        }
        LeaseCore o = observer;
        if (o != null) {
            try {
                o.close();
            } catch (RuntimeException e) {
                // Going away anyway.
            }
        }
        RedisClient client = redisClient;
        if (client != null) {
            try {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
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
        TestRedis r = redis;
        if (r != null) {
            try {
                r.close();
            } catch (RuntimeException e) {
                // Nothing more to do.
            }
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
