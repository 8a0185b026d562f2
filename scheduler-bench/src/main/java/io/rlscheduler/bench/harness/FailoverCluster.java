package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.testkit.JvmProcess;
import io.rlscheduler.testkit.ProcessTree;
import io.rlscheduler.testkit.TestRedis;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * What the benchmarks that kill a worker run on ({@link Failover}, {@link Resume}): one Redis, one
 * master in this JVM, two workers each in a JVM of its own ({@link BenchWorkerMain}: the default
 * {@code PythonTaskExecutor}, with the launcher and its keepalives) with a run root of its own
 * ({@code runs-<worker>}), as two machines have, and {@code failover_task.py} in their script
 * root. With an artifact store both workers use it (a directory both see, as an NFS mount is).
 * Every task event the master's listener gets is kept with its arrival time ({@link #await}).
 * Not thread-safe: one benchmark thread uses it.
 */
final class FailoverCluster implements AutoCloseable {

    static final String SCRIPT = "failover_task.py";
    static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    static final List<String> WORKERS = List.of("fo-worker-1", "fo-worker-2");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final Path marks;
    private final CoreOptions core;
    private final Duration killGrace;
    private final String workerHeap;
    private final String store;
    private final TestRedis redis;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> admin;
    private final String persistence;
    private final String secret;
    private final SchedulerMaster master;
    private final Events events = new Events();
    private final Map<String, JvmProcess> workers = new LinkedHashMap<>();
    private int started;

    /**
     * Starts Redis, the master and both workers, and waits until both are connected.
     *
     * @param store the artifact store's URI both workers use, or null for none
     */
    FailoverCluster(Path dir, CoreOptions core, Duration reapInterval, Duration killGrace, String workerHeap, String aof,
                    String store) throws Exception {
        this.dir = dir;
        this.core = core;
        this.killGrace = killGrace;
        this.workerHeap = workerHeap;
        this.store = store;
        Path scripts = Files.createDirectories(dir.resolve("scripts"));
        try (InputStream in = FailoverCluster.class.getResourceAsStream(SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException("resource " + SCRIPT + " missing from the jar");
            }
            Files.copy(in, scripts.resolve(SCRIPT));
        }
        this.marks = Files.createDirectories(dir.resolve("marks"));
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        this.secret = HexFormat.of().formatHex(bytes);
        this.redis = TestRedis.fromEnvironment();
        RedisClient c = null;
        StatefulRedisConnection<String, String> conn = null;
        SchedulerMaster m = null;
        try {
            c = RedisClient.create(redis.getUri());
            conn = c.connect();
            this.persistence = LocalCluster.configure(redis, conn.sync(), aof);
            m = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(secret)
                    .coreOptions(core).reapInterval(reapInterval).logDirectory(dir.resolve("logs"))
                    .build().start();
            m.addTaskListener(events);
        } catch (Exception | Error e) {
            if (m != null) {
                m.close();
            }
            if (conn != null) {
                conn.close();
            }
            if (c != null) {
                c.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            redis.close();
            throw e;
        }
        this.client = c;
        this.connection = conn;
        this.admin = conn.sync();
        this.master = m;
        try {
            for (String id : WORKERS) {
                workers.put(id, startWorker(id));
            }
            for (JvmProcess w : workers.values()) {
                w.awaitOutput(BenchWorkerMain.STARTED, START_TIMEOUT);
            }
            awaitConnected(2);
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    private JvmProcess startWorker(String id) {
        started++;
        List<String> args = new ArrayList<>(List.of("--masters", "127.0.0.1:" + master.getRpcAddress().getPort(),
                "--redis", redis.getUri().toURI().toString(), "--worker-id", id,
                "--namespace", core.getNamespace(),
                "--heartbeat-ms", Long.toString(core.getHeartbeatInterval().toMillis()),
                "--liveness-ms", Long.toString(core.getLivenessLease().toMillis()),
                "--task-lease-ms", Long.toString(core.getTaskLease().toMillis()),
                "--ack-timeout-ms", Long.toString(core.getAckTimeout().toMillis()),
                "--kill-grace-ms", Long.toString(killGrace.toMillis()),
                "--scripts", dir.resolve("scripts").toString(), "--runs", runRoot(id).toString()));
        if (store != null) {
            args.addAll(List.of("--store", store));
        }
        return JvmProcess.builder(BenchWorkerMain.class)
                .jvmArgs("-Xmx" + workerHeap)
                .env(BenchWorkerMain.SECRET_ENV, secret)
                .args(args.toArray(new String[0]))
                .logFile(dir.resolve(id + "-" + started + ".log"))
                .start();
    }

    /** Returns a worker's own run root. */
    Path runRoot(String workerId) {
        return dir.resolve("runs-" + workerId);
    }

    /** Waits (bounded polling, outside any measurement) until {@code n} workers are connected to the master. */
    void awaitConnected(int n) throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (master.health().getConnectedWorkers() < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(n + " workers not connected within " + START_TIMEOUT + ": "
                        + master.health());
            }
            Thread.sleep(20);
        }
    }

    /** Starts a worker (closed or killed before) again, same id and run root, and waits until both are connected. */
    void restart(String workerId) throws Exception {
        workers.put(workerId, startWorker(workerId));
        workers.get(workerId).awaitOutput(BenchWorkerMain.STARTED, START_TIMEOUT);
        awaitConnected(2);
    }

    /** Returns a worker's JVM. */
    JvmProcess worker(String workerId) {
        JvmProcess w = workers.get(workerId);
        if (w == null) {
            throw new IllegalStateException("no worker " + workerId);
        }
        return w;
    }

    SchedulerMaster master() {
        return master;
    }

    /** Returns the harness's own Redis client (for a lease core of its own). */
    RedisClient redisClient() {
        return client;
    }

    /** Returns the harness's own connection (Redis's clock, its settings). */
    RedisCommands<String, String> admin() {
        return admin;
    }

    /** Returns the Redis server's description and persistence. */
    String persistence() {
        return persistence;
    }

    /** Returns the directory where the script writes its start marks. */
    Path marks() {
        return marks;
    }

    /** Returns the number of task events received so far: where a later {@link #await} starts looking. */
    int eventCount() {
        return events.size();
    }

    /** Waits for the first task event from index {@code from} on that matches; see {@link Events#await}. */
    Seen await(int from, Predicate<TaskEvent> which, Duration timeout, String what) throws InterruptedException {
        return events.await(from, which, timeout, what);
    }

    /** Returns the task events from index {@code from} on that match. */
    List<Seen> since(int from, Predicate<TaskEvent> which) {
        return events.since(from, which);
    }

    /** Matches the event of a task's attempt starting: ASSIGNED to RUNNING, that attempt. */
    static Predicate<TaskEvent> running(String taskId, int attempt) {
        return e -> taskId.equals(e.getTaskId()) && e.getTo() == TaskState.RUNNING
                && "ASSIGNED".equals(e.getFields().get("from"))
                && Integer.toString(attempt).equals(e.getFields().get("attempt"));
    }

    /** Waits (bounded polling) for an attempt's start mark; returns it. */
    JsonNode awaitMark(String taskId, long epoch) throws Exception {
        Path file = marks.resolve(taskId + "-start-" + epoch + ".json");
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(taskId + ": no start mark of epoch " + epoch + " within " + START_TIMEOUT);
            }
            Thread.sleep(5);
        }
        return JSON.readTree(file.toFile());
    }

    /** Polls every millisecond until none of {@code pids} lives; returns the nanoTime it saw that. */
    static long awaitGone(List<Long> pids, long since, String taskId) throws InterruptedException {
        long deadline = since + TimeUnit.SECONDS.toNanos(30);
        while (pids.stream().anyMatch(ProcessTree::isAlive)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(taskId + ": the killed worker's processes " + pids
                        + " still live 30 s after the kill");
            }
            Thread.sleep(1);
        }
        return System.nanoTime();
    }

    @Override
    public void close() {
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (JvmProcess w : workers.values()) {
            stopping.add(CompletableFuture.runAsync(w::close));
        }
        stopping.forEach(CompletableFuture::join);
        master.close();
        if (redis.isExternal()) {
            LocalCluster.deleteNamespace(admin, core.getNamespace());
        }
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        redis.close();
    }

    /** A task event and when the master's listener got it. */
    record Seen(long nanos, TaskEvent event) {
        @Override
        public String toString() {
            return event.toString();
        }
    }

    /** Every task event the master's listener gets, with its arrival time; waits for one by polling. */
    private static final class Events implements Consumer<TaskEvent> {
        private final List<Seen> seen = new ArrayList<>();

        @Override
        public void accept(TaskEvent event) {
            long now = System.nanoTime();
            if (event.getKind() == TaskEvent.Kind.TASK) {
                synchronized (seen) {
                    seen.add(new Seen(now, event));
                }
            }
        }

        int size() {
            synchronized (seen) {
                return seen.size();
            }
        }

        List<Seen> since(int from, Predicate<TaskEvent> which) {
            synchronized (seen) {
                return seen.subList(from, seen.size()).stream().filter(s -> which.test(s.event)).toList();
            }
        }

        /**
         * Waits for the first event from index {@code from} on that matches. Polls every
         * millisecond; the arrival time was taken by the listener, so polling adds nothing to it.
         */
        Seen await(int from, Predicate<TaskEvent> which, Duration timeout, String what) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                Optional<Seen> found = since(from, which).stream().findFirst();
                if (found.isPresent()) {
                    return found.get();
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no event '" + what + "' within " + timeout);
                }
                Thread.sleep(1);
            }
        }
    }
}
