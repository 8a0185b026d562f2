package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.rlscheduler.core.internal.CoreFixture.allInState;
import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Eight threads race on one queue of 10,000 tasks and 50 workers: claiming, acknowledging,
 * heartbeating, finishing, re-submitting, and now and then restarting a worker (a new session,
 * which takes its tasks back). Every assignment is recorded on the client side and checked while
 * the run goes (no GPU handed out twice on a worker, no epoch issued twice) and against Redis at
 * the end (records, state indexes, queue, worker capacity, epoch counter).
 */
class LeaseConcurrencyIT {

    private static final Logger log = LoggerFactory.getLogger(LeaseConcurrencyIT.class);

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final int THREADS = 8;
    private static final int WORKERS = 50;
    private static final int QUEUED_AT_START = 10_000;
    private static final int ITERATIONS_PER_THREAD = 300;
    private static final int MAX_CLAIM = 4;
    private static final int RESTART_PERCENT = 2;
    private static final List<Integer> GPUS = List.of(0, 1, 2, 3);
    private static final int CPU_SLOTS = 8;

    /** Where an assignment stands, as the client side knows it. */
    enum Held { ASSIGNED, RUNNING, FINISHED, TAKEN_BACK }

    /** One assignment: a (task, epoch) given to a worker. */
    static final class Rec {
        final String taskId;
        final long epoch;
        final int attempt;
        final String workerId;
        final List<Integer> gpuIds;
        final int cpu;
        volatile Held held = Held.ASSIGNED;

        Rec(Assignment a, String workerId, int cpu) {
            this.taskId = a.getTaskId();
            this.epoch = a.getEpoch();
            this.attempt = a.getAttempt();
            this.workerId = workerId;
            this.gpuIds = a.getGpuIds();
            this.cpu = cpu;
        }

        TaskLease lease() {
            return new TaskLease(taskId, epoch);
        }

        @Override
        public String toString() {
            return taskId + "@" + epoch + " on " + workerId + " gpus " + gpuIds + " " + held;
        }
    }

    /**
     * A worker process. Claims and acks take the read lock (several threads may claim for one
     * worker at once); heartbeat, finish and restart take the write lock, so that the tasks the
     * client side holds for the worker are exactly those Redis says it holds.
     */
    static final class Worker {
        final String id;
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        final ConcurrentHashMap<String, Rec> held = new ConcurrentHashMap<>();
        volatile String session;
        int sessions = 1;

        Worker(String id) {
            this.id = id;
            this.session = id + "-s1";
        }

        WorkerRegistration registration() {
            return new WorkerRegistration(id, session, Map.of("zone", "a"), CPU_SLOTS, 64L << 30, GPUS);
        }
    }

    private LeaseCore core;
    private RedisNamespace ns;

    private final List<Worker> workers = new ArrayList<>();
    private final Map<String, TaskDefinition> submitted = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Rec> byEpoch = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, List<Rec>> byTask = new ConcurrentHashMap<>();

    /** Guards gpuHolds and cpuHeld: what each worker holds by the client side's records. */
    private final Object holdsLock = new Object();
    private final Map<String, Rec> gpuHolds = new HashMap<>();
    private final Map<String, Integer> cpuHeld = new HashMap<>();

    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicInteger claimCalls = new AtomicInteger();
    private final AtomicInteger finishedCount = new AtomicInteger();
    private final AtomicInteger restartCount = new AtomicInteger();
    private final AtomicInteger takenBackCount = new AtomicInteger();

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        this.ns = ns;
        // Leases far longer than the run: nothing may expire, every take-back is a restart.
        CoreOptions options = CoreFixture.leases(ns, Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(120))
                .mutate().maxAttempts(1000).maxLeaseLosses(1000).build();
        core = LeaseCore.create(client, options);
    }

    @AfterEach
    void close() {
        core.close();
    }

    @Test
    void eightThreadsFiftyWorkersTenThousandTasks(RedisCommands<String, String> commands) throws Exception {
        long began = System.nanoTime();
        for (int i = 0; i < WORKERS; i++) {
            Worker w = new Worker(String.format("w%02d", i));
            workers.add(w);
            assertThat(join(core.register(w.registration())).getRequeued()).isEmpty();
        }
        List<TaskDefinition> initial = new ArrayList<>();
        for (int i = 0; i < QUEUED_AT_START; i++) {
            initial.add(definition(String.format("t-%05d", i), i));
        }
        submitAll(initial);
        assertThat(join(core.queueDepth())).isEqualTo(QUEUED_AT_START);
        log.info("set up {} workers and {} queued tasks in {} ms", WORKERS, QUEUED_AT_START, millisSince(began));

        long raceBegan = System.nanoTime();
        CyclicBarrier start = new CyclicBarrier(THREADS);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    runThread(thread, new Random(0x5eed + thread));
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get(120, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    stop.set(true);
                    if (e.getCause() instanceof AssertionError ae) {
                        throw ae;
                    }
                    throw e;
                }
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        log.info("race: {} claim calls, {} assignments, {} finished, {} restarts taking back {} tasks, in {} ms",
                claimCalls.get(), byEpoch.size(), finishedCount.get(), restartCount.get(), takenBackCount.get(),
                millisSince(raceBegan));

        // The run must have done real work in every kind of step for the checks to mean anything.
        assertThat(byEpoch.size()).isGreaterThan(1000);
        assertThat(finishedCount.get()).isGreaterThan(500);
        assertThat(restartCount.get()).isPositive();
        assertThat(takenBackCount.get()).isPositive();
        assertThat(byTask.values().stream().filter(l -> l.size() > 1).count()).as("tasks assigned more than once")
                .isPositive();

        long verifyBegan = System.nanoTime();
        verifyAssignments();
        verifyTasks(commands);
        verifyWorkers();
        assertThat(Long.parseLong(commands.get(ns.hashTag() + ":epoch")))
                .as("epoch counter is the largest epoch issued")
                .isEqualTo(byEpoch.keySet().stream().mapToLong(Long::longValue).max().orElseThrow());
        log.info("verified in {} ms; whole test {} ms", millisSince(verifyBegan), millisSince(began));
    }

    // ------------------------------------------------------------------------------------------
    // The race
    // ------------------------------------------------------------------------------------------

    private void runThread(int thread, Random random) {
        int submittedHere = 0;
        for (int i = 0; i < ITERATIONS_PER_THREAD && !stop.get(); i++) {
            Worker w = workers.get(random.nextInt(WORKERS));
            claimAndAck(w, random);
            int finished = heartbeatFinishOrRestart(w, random);
            List<TaskDefinition> fresh = new ArrayList<>();
            for (int k = 0; k < finished; k++) {
                int n = submittedHere++;
                fresh.add(definition("n" + thread + "-" + n, n + thread));
            }
            submitAll(fresh);
        }
    }

    private void claimAndAck(Worker w, Random random) {
        w.lock.readLock().lock();
        try {
            String session = w.session;
            ClaimResult claim = join(core.claim(w.id, session, 1 + random.nextInt(MAX_CLAIM), requestId()));
            claimCalls.incrementAndGet();
            assertThat(claim.getStatus()).as("claim by %s", w.id).isEqualTo(ClaimStatus.OK);
            List<Rec> recs = new ArrayList<>();
            synchronized (holdsLock) {
                for (Assignment a : claim.getAssignments()) {
                    TaskDefinition def = submitted.get(a.getTaskId());
                    assertThat(def).as("assigned task %s was submitted", a.getTaskId()).isNotNull();
                    assertThat(a.getGpuIds()).as("GPU ids of %s", a).hasSize(def.getGpus()).doesNotHaveDuplicates();
                    assertThat(GPUS).as("GPU ids of %s are the worker's", a).containsAll(a.getGpuIds());
                    Rec rec = new Rec(a, w.id, def.getCpuSlots());
                    for (int g : a.getGpuIds()) {
                        Rec holder = gpuHolds.putIfAbsent(w.id + "/" + g, rec);
                        if (holder != null) {
                            fail("claim gave GPU %d of %s to %s while %s still holds it", g, w.id, rec, holder);
                        }
                    }
                    int cpu = cpuHeld.merge(w.id, def.getCpuSlots(), Integer::sum);
                    assertThat(cpu).as("cpu slots held on %s after %s", w.id, rec).isLessThanOrEqualTo(CPU_SLOTS);
                    recs.add(rec);
                }
            }
            for (Rec rec : recs) {
                Rec other = byEpoch.putIfAbsent(rec.epoch, rec);
                if (other != null) {
                    fail("epoch %d issued twice: %s and %s", rec.epoch, other, rec);
                }
                List<Rec> history = byTask.computeIfAbsent(rec.taskId, k -> new ArrayList<>());
                synchronized (history) {
                    if (!history.isEmpty()) {
                        Rec previous = history.get(history.size() - 1);
                        assertThat(previous.held).as("%s assigned again while %s", rec, previous).isEqualTo(Held.TAKEN_BACK);
                        assertThat(rec.epoch).as("epoch of %s after %s", rec, previous).isGreaterThan(previous.epoch);
                    }
                    assertThat(rec.attempt).as("attempt of %s", rec).isEqualTo(history.size() + 1);
                    history.add(rec);
                }
                assertThat(w.held.putIfAbsent(rec.taskId, rec)).as("%s already held by %s", rec.taskId, w.id).isNull();
            }
            // Acknowledge most; leave some ASSIGNED (the ack timeout is far away).
            List<Rec> toAck = recs.stream().filter(r -> random.nextInt(5) != 0).toList();
            List<CompletableFuture<WriteResult>> acks = new ArrayList<>();
            for (Rec rec : toAck) {
                acks.add(core.acknowledge(rec.lease(), w.id, session));
            }
            for (int k = 0; k < toAck.size(); k++) {
                assertThat(join(acks.get(k)).getStatus()).as("ack of %s", toAck.get(k)).isEqualTo(WriteStatus.APPLIED);
                toAck.get(k).held = Held.RUNNING;
            }
        } finally {
            w.lock.readLock().unlock();
        }
    }

    /** Returns how many tasks were finished. */
    private int heartbeatFinishOrRestart(Worker w, Random random) {
        w.lock.writeLock().lock();
        try {
            List<Rec> held = new ArrayList<>(w.held.values());
            HeartbeatResult hb = join(core.heartbeat(w.id, w.session, held.stream().map(Rec::lease).toList()));
            assertThat(hb.getStatus()).as("heartbeat of %s", w.id).isEqualTo(HeartbeatStatus.OK);
            assertThat(hb.getRevokedTasks()).as("revoked from %s holding %s", w.id, held).isEmpty();
            assertThat(hb.getRenewedTasks()).as("renewed for %s holding %s", w.id, held).isEqualTo(held.size());

            if (random.nextInt(100) < RESTART_PERCENT) {
                restart(w, held);
                return 0;
            }
            List<Rec> toFinish = held.stream().filter(r -> random.nextBoolean()).toList();
            List<CompletableFuture<WriteResult>> finishes = new ArrayList<>();
            for (Rec rec : toFinish) {
                rec.held = Held.FINISHED;
                w.held.remove(rec.taskId);
                releaseHolds(rec);
                finishes.add(core.finish(rec.lease(), w.id, w.session, TaskState.SUCCEEDED, 0, null, null));
            }
            for (int k = 0; k < toFinish.size(); k++) {
                assertThat(join(finishes.get(k)).getStatus()).as("finish of %s", toFinish.get(k)).isEqualTo(WriteStatus.APPLIED);
            }
            finishedCount.addAndGet(toFinish.size());
            return toFinish.size();
        } finally {
            w.lock.writeLock().unlock();
        }
    }

    /** A new session of the worker: Redis must take back exactly what the old one held. */
    private void restart(Worker w, List<Rec> held) {
        for (Rec rec : held) {
            rec.held = Held.TAKEN_BACK;
            w.held.remove(rec.taskId);
            releaseHolds(rec);
        }
        w.session = w.id + "-s" + (++w.sessions);
        RequeueResult result = join(core.register(w.registration()));
        assertThat(new TreeSet<>(result.getRequeued())).as("taken back from %s", w.id)
                .isEqualTo(held.stream().map(r -> r.taskId).collect(Collectors.toCollection(TreeSet::new)));
        assertThat(result.getRequeued()).doesNotHaveDuplicates();
        assertThat(result.getFailed()).isEmpty();
        assertThat(result.getCancelled()).isEmpty();
        restartCount.incrementAndGet();
        takenBackCount.addAndGet(held.size());
    }

    private void releaseHolds(Rec rec) {
        synchronized (holdsLock) {
            for (int g : rec.gpuIds) {
                assertThat(gpuHolds.remove(rec.workerId + "/" + g, rec)).as("%s held GPU %d", rec, g).isTrue();
            }
            cpuHeld.merge(rec.workerId, -rec.cpu, Integer::sum);
        }
    }

    private TaskDefinition definition(String id, int n) {
        return TaskDefinition.builder(id).gpus(n % 3).cpuSlots(1 + n % 2).priority(n % 4).owner("race").build();
    }

    private void submitAll(List<TaskDefinition> definitions) {
        for (int from = 0; from < definitions.size(); from += 1000) {
            List<TaskDefinition> chunk = definitions.subList(from, Math.min(definitions.size(), from + 1000));
            List<CompletableFuture<SubmitResult>> futures = new ArrayList<>();
            for (TaskDefinition d : chunk) {
                submitted.put(d.getTaskId(), d);
                futures.add(core.submit(d));
            }
            for (CompletableFuture<SubmitResult> f : futures) {
                assertThat(join(f).isCreated()).isTrue();
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Checks after the race
    // ------------------------------------------------------------------------------------------

    private void verifyAssignments() {
        int records = 0;
        for (List<Rec> history : byTask.values()) {
            records += history.size();
            for (int i = 1; i < history.size(); i++) {
                assertThat(history.get(i).epoch).as("epochs of %s", history).isGreaterThan(history.get(i - 1).epoch);
            }
        }
        assertThat(byEpoch).as("every assignment has its own epoch").hasSize(records);
    }

    private void verifyTasks(RedisCommands<String, String> commands) {
        Map<String, TaskRecord> all = new HashMap<>();
        long totals = 0;
        for (TaskState state : TaskState.values()) {
            totals += join(core.listTasks(state, 0, 1)).getTotal();
            for (TaskRecord t : allInState(core, state)) {
                assertThat(t.getState()).as("task %s in index %s", t.getTaskId(), state).isEqualTo(state);
                TaskRecord twice = all.put(t.getTaskId(), t);
                assertThat(twice).as("task %s in two state indexes", t.getTaskId()).isNull();
            }
        }
        assertThat(totals).as("sum of state index totals").isEqualTo(submitted.size());
        assertThat(all.keySet()).isEqualTo(submitted.keySet());

        Set<String> queued = all.values().stream().filter(t -> t.getState() == TaskState.QUEUED)
                .map(TaskRecord::getTaskId).collect(Collectors.toSet());
        assertThat(join(core.queueDepth())).isEqualTo(queued.size());
        assertThat(new HashSet<>(commands.zrange(new Keys(ns.name()).queue(), 0, -1))).isEqualTo(queued);

        for (TaskRecord t : all.values()) {
            List<Rec> recs = byTask.getOrDefault(t.getTaskId(), List.of());
            assertThat(t.getHistory().stream().filter(h -> h.getTo() == TaskState.ASSIGNED)
                    .map(h -> h.getEpoch() + "@" + h.getWorkerId()).toList())
                    .as("assignments in the history of %s", t.getTaskId())
                    .isEqualTo(recs.stream().map(r -> r.epoch + "@" + r.workerId).toList());
            assertThat(t.getAttempt()).as("attempt of %s", t.getTaskId()).isEqualTo(recs.size());
            assertThat(t.getLeaseLosses()).as("lease losses of %s", t.getTaskId())
                    .isEqualTo((int) recs.stream().filter(r -> r.held == Held.TAKEN_BACK).count());
            Rec last = recs.isEmpty() ? null : recs.get(recs.size() - 1);
            TaskState expected = last == null ? TaskState.QUEUED : switch (last.held) {
                case ASSIGNED -> TaskState.ASSIGNED;
                case RUNNING -> TaskState.RUNNING;
                case FINISHED -> TaskState.SUCCEEDED;
                case TAKEN_BACK -> TaskState.QUEUED;
            };
            assertThat(t.getState()).as("state of %s after %s", t.getTaskId(), recs).isEqualTo(expected);
            if (expected == TaskState.ASSIGNED || expected == TaskState.RUNNING) {
                assertThat(t.getEpoch()).isEqualTo(last.epoch);
                assertThat(t.getWorkerId()).isEqualTo(last.workerId);
                assertThat(t.getGpuIds()).isEqualTo(last.gpuIds);
            } else if (expected == TaskState.QUEUED) {
                assertThat(t.getWorkerId()).isEmpty();
                assertThat(t.getGpuIds()).isEmpty();
            }
        }
    }

    private void verifyWorkers() {
        List<WorkerInfo> infos = join(core.listWorkers());
        assertThat(infos).extracting(WorkerInfo::getWorkerId)
                .containsExactlyInAnyOrderElementsOf(workers.stream().map(w -> w.id).toList());
        Map<String, List<Rec>> heldByWorker = byEpoch.values().stream()
                .filter(r -> r.held == Held.ASSIGNED || r.held == Held.RUNNING)
                .collect(Collectors.groupingBy(r -> r.workerId));
        for (WorkerInfo info : infos) {
            Worker w = workers.stream().filter(x -> x.id.equals(info.getWorkerId())).findFirst().orElseThrow();
            List<Rec> held = heldByWorker.getOrDefault(w.id, List.of());
            assertThat(held).as("records held by %s", w.id).containsExactlyInAnyOrderElementsOf(w.held.values());
            Set<Integer> used = new TreeSet<>();
            int usedCpu = 0;
            for (Rec r : held) {
                for (int g : r.gpuIds) {
                    assertThat(used.add(g)).as("GPU %d of %s held twice among %s", g, w.id, held).isTrue();
                }
                usedCpu += r.cpu;
            }
            List<Integer> free = GPUS.stream().filter(g -> !used.contains(g)).toList();
            assertThat(info.getSessionId()).isEqualTo(w.session);
            assertThat(info.getFreeGpuIds()).as("free GPUs of %s holding %s", w.id, held).isEqualTo(free);
            assertThat(info.getFreeCpuSlots()).as("free cpu of %s holding %s", w.id, held).isEqualTo(CPU_SLOTS - usedCpu);
            assertThat(new HashSet<>(info.getTasks())).as("tasks of %s", w.id)
                    .isEqualTo(held.stream().map(Rec::lease).collect(Collectors.toSet()));
            assertThat(info.getState()).as("state of %s", w.id)
                    .isEqualTo(held.isEmpty() ? WorkerState.IDLE : WorkerState.RUNNING);
        }
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }
}
