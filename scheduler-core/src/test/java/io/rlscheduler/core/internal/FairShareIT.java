package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.OwnerLimit;
import io.rlscheduler.core.OwnerLimitExceededException;
import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * Sharing between owners against a real Redis: the fair order of claims, the owners' limits, usage
 * charged once per attempt and decayed with its half-life, and the counters kept exact through
 * replays and a Redis crash.
 */
class FairShareIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;

    private void open(RedisClient client, RedisNamespace ns) {
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofSeconds(3))
                .livenessLease(Duration.ofSeconds(30)).taskLease(Duration.ofSeconds(60)).ackTimeout(Duration.ofSeconds(60))
                .build());
    }

    @AfterEach
    void close() {
        if (core != null) {
            core.close();
        }
    }

    private void register(String id, Integer... gpus) {
        join(core.register(new WorkerRegistration(id, "s-" + id, Map.of(), 64, 1L << 40, List.of(gpus))));
    }

    private void submit(String id, String owner, int gpus) {
        join(core.submit(TaskDefinition.builder(id).owner(owner).gpus(gpus).build()));
    }

    private List<Assignment> claim(String worker, int max) {
        ClaimResult r = join(core.claim(worker, "s-" + worker, max, requestId()));
        assertThat(r.getStatus()).isEqualTo(ClaimStatus.OK);
        return r.getAssignments();
    }

    private void finish(String worker, Assignment a) {
        assertThat(join(core.finish(new TaskLease(a.getTaskId(), a.getEpoch()), worker, "s-" + worker, TaskState.SUCCEEDED,
                0, null, null)).getStatus()).isEqualTo(WriteStatus.APPLIED);
    }

    private String owner(Assignment a) {
        return CoreFixture.record(core, a.getTaskId()).getOwner();
    }

    private OwnerShare share(String owner) {
        return join(core.owners().shares()).getOwners().stream().filter(s -> s.getOwner().equals(owner)).findFirst()
                .orElseThrow(() -> new AssertionError("no share of " + owner));
    }

    @Test
    void anotherOwnersSingleRunStartsAtTheNextFreeSlotNotAfterTheSweep(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        register("w1", 0, 1);
        for (int i = 0; i < 40; i++) {
            submit("a" + i, "alice", 1);
        }
        List<Assignment> first = claim("w1", 2);
        assertThat(first).extracting(Assignment::getTaskId).containsExactly("a0", "a1");
        submit("b0", "bob", 1);
        finish("w1", first.get(0));
        List<Assignment> next = claim("w1", 1);
        assertThat(next).extracting(Assignment::getTaskId).containsExactly("b0");
        // alice has been charged 2 GPU-minutes (the minimum charge of her two attempts), bob 1.
        finish("w1", first.get(1));
        finish("w1", next.get(0));
        submit("b1", "bob", 1);
        submit("c0", "carol", 1);
        submit("c1", "carol", 1);
        // One claim run for two slots: carol (no usage) first; her charge for c0 puts her level with
        // bob, and the tie goes by name, so the second pick of the same run is bob's, not carol's c1.
        assertThat(claim("w1", 2)).extracting(Assignment::getTaskId).containsExactly("c0", "b1");
    }

    @Test
    void aBigTaskThatWaitedPastReserveAfterGetsAWorkerThatTakesNoGpuWorkUntilItStarts(RedisClient client,
                                                                                      RedisNamespace ns) {
        open(client, ns);
        join(core.owners().setFairShare(null, null, Duration.ofHours(1)));
        register("w1", 0, 1, 2, 3, 4, 5, 6, 7);
        register("w2", 0, 1, 2, 3, 4, 5, 6, 7);
        for (int i = 0; i < 40; i++) {
            submit("b" + i, "bob", 1);
        }
        List<Assignment> running = new ArrayList<>(claim("w1", 8));
        running.addAll(claim("w2", 7));
        submit("big", "alice", 8);
        submit("big2", "alice", 8);
        // Not waited long enough: a freed GPU goes to the stream of 1-GPU tasks, as without reservations.
        finish("w1", running.remove(0));
        List<Assignment> next = claim("w1", 8);
        assertThat(next).extracting(a -> owner(a)).containsExactly("bob");
        running.addAll(next);
        assertThat(join(core.owners().shares()).getReservations()).isEmpty();

        join(core.owners().setFairShare(null, null, Duration.ofMillis(50)));
        awaitRedisClock(client, 50);
        // The next claim of a worker with a free GPU reserves it for the oldest waiting big task.
        assertThat(claim("w2", 8)).isEmpty();
        List<io.rlscheduler.core.Reservation> reserved = join(core.owners().shares()).getReservations();
        assertThat(reserved).singleElement().satisfies(r -> {
            assertThat(r.getTaskId()).isEqualTo("big");
            assertThat(r.getWorkerId()).isEqualTo("w2");
            assertThat(r.getOwner()).isEqualTo("alice");
            assertThat(r.getGpus()).isEqualTo(8);
        });
        // w2 takes no new GPU work while big cannot start; a CPU-only task beside it may run there,
        // as it leaves free all that big needs.
        submit("cpu0", "carol", 0);
        assertThat(claim("w2", 8)).extracting(Assignment::getTaskId).containsExactly("cpu0");
        // One reservation per owner: w1's free GPU is not reserved for alice's second big task; it
        // takes the stream's next task.
        finish("w1", running.stream().filter(a -> isOn(a, "w1")).findFirst().orElseThrow());
        running.removeIf(a -> CoreFixture.record(core, a.getTaskId()).getState() != TaskState.ASSIGNED);
        assertThat(claim("w1", 8)).extracting(a -> owner(a)).containsExactly("bob");
        assertThat(join(core.owners().shares()).getReservations()).hasSize(1);

        // As w2's tasks end one by one, nothing of the stream takes their GPUs; the last frees 8: big.
        List<Assignment> onW2 = running.stream().filter(a -> isOn(a, "w2")).toList();
        assertThat(onW2).hasSize(7);
        for (Assignment a : onW2) {
            finish("w2", a);
            List<Assignment> got = claim("w2", 8);
            if (a != onW2.get(onW2.size() - 1)) {
                assertThat(got).as("w2 while reserved").isEmpty();
            } else {
                assertThat(got).extracting(Assignment::getTaskId).containsExactly("big");
            }
        }
        assertThat(CoreFixture.record(core, "big").getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(join(core.owners().shares()).getReservations()).as("ended once big started").isEmpty();
    }

    @Test
    void oneOwnersSweepOfBigTasksDoesNotHideAnothersAndADeadWorkersReservationEnds(RedisClient client,
                                                                                    RedisNamespace ns) {
        open(client, ns);
        join(core.owners().setFairShare(null, null, Duration.ofHours(1)));
        register("w1", 0, 1, 2, 3);
        register("w2", 0, 1, 2, 3);
        submit("s1", "sam", 1);
        submit("s2", "sam", 1);
        assertThat(claim("w1", 1)).hasSize(1);
        assertThat(claim("w2", 1)).hasSize(1);
        for (int i = 0; i < 150; i++) {
            submit("x" + i, "xavier", 4);
        }
        submit("y0", "yvonne", 4);
        join(core.owners().setFairShare(null, null, Duration.ofMillis(1)));
        awaitRedisClock(client, 2);
        assertThat(claim("w1", 4)).isEmpty();
        assertThat(claim("w2", 4)).isEmpty();
        // xavier's 150 waiting big tasks are older, but one reservation each: yvonne's gets the second worker.
        assertThat(join(core.owners().shares()).getReservations())
                .extracting(io.rlscheduler.core.Reservation::getTaskId, io.rlscheduler.core.Reservation::getWorkerId)
                .containsExactly(org.assertj.core.api.Assertions.tuple("x0", "w1"),
                        org.assertj.core.api.Assertions.tuple("y0", "w2"));
        // w2 stops being live: the reaper ends its reservation, and the next claim of a worker
        // that could run y0 takes it over.
        try (var c = client.connect()) {
            c.sync().zadd("{" + ns.name() + "}:liveness", 1.0, "w2");
        }
        join(core.reap());
        assertThat(join(core.owners().shares()).getReservations())
                .extracting(io.rlscheduler.core.Reservation::getTaskId).containsExactly("x0");
        register("w3", 0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(claim("w3", 1)).extracting(Assignment::getTaskId).containsExactly("y0");
        assertThat(CoreFixture.record(core, "y0").getWorkerId()).isEqualTo("w3");
        assertThat(join(core.owners().repair(1000)).corrections()).isEmpty();
    }

    /** Waits, bounded, until Redis's clock has moved on by more than {@code millis}: a wait is a reserve time's. */
    private static void awaitRedisClock(RedisClient client, long millis) {
        try (var c = client.connect()) {
            long start = redisMillis(c);
            await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis(c) > start + millis);
        }
    }

    private static long redisMillis(io.lettuce.core.api.StatefulRedisConnection<String, String> c) {
        List<String> t = c.sync().time();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }

    private boolean isOn(Assignment a, String worker) {
        TaskRecord r = CoreFixture.record(core, a.getTaskId());
        return r.getState() == TaskState.ASSIGNED && worker.equals(r.getWorkerId());
    }

    @Test
    void theRepairPassFindsNothingAfterRealWorkAndRebuildsWhatAHandEditBroke(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        register("w1", 0, 1);
        for (int i = 0; i < 3; i++) {
            submit("a" + i, "alice", 1);
        }
        submit("b0", "bob", 1);
        submit("b1", "bob", 0);
        submit("big", "bob", 2);
        List<Assignment> running = claim("w1", 1);
        finish("w1", running.get(0));
        running = claim("w1", 2);
        assertThat(running).hasSize(2);
        join(core.cancel("b1", "changed my mind"));
        // The scripts keep every figure exact: a pass after real work corrects nothing.
        assertThat(join(core.owners().repair(1000)).corrections()).isEmpty();
        OwnerShare aliceBefore = share("alice");
        OwnerShare bobBefore = share("bob");

        String q = "{" + ns.name() + "}:queue";
        String queuedOfAlice = CoreFixture.record(core, "a2").getState() == TaskState.QUEUED ? "a2" : "a1";
        try (var c = client.connect()) {
            var redisCommands = c.sync();
            redisCommands.hset(q + ":own:alice", "gpus", "7");
            redisCommands.hdel(q + ":own:bob", "queued");
            redisCommands.zrem(q + ":g:alice", queuedOfAlice);  // as data of a version without owner queues
            redisCommands.zadd(q + ":c:bob", 1.0, "ghost");      // an entry without a task
        }
        OwnerRecords.Repair repair = join(core.owners().repair(1000));
        assertThat(repair.queueChecked()).isTrue();
        assertThat(repair.corrections()).extracting(io.rlscheduler.core.SharingCorrection::toString)
                .containsExactlyInAnyOrder("alice gpus: 7 -> " + aliceBefore.getHeldGpus(),
                        "bob queued: 0 -> " + bobBefore.getQueued(),
                        "alice queue:g: without " + queuedOfAlice + " -> with " + queuedOfAlice,
                        "bob queue:c: with ghost -> without ghost");
        for (OwnerShare before : List.of(aliceBefore, bobBefore)) {
            assertThat(share(before.getOwner())).extracting(OwnerShare::getHeldGpus, OwnerShare::getRunning,
                    OwnerShare::getQueued).containsExactly(before.getHeldGpus(), before.getRunning(), before.getQueued());
        }
        assertThat(join(core.owners().repair(1000)).corrections()).as("a second pass").isEmpty();
        // A queue longer than the pass may read: only what workers hold is checked.
        assertThat(join(core.owners().repair(1)).queueChecked()).isFalse();
        // The task put back in alice's queue is claimed again once a GPU is free.
        for (Assignment a : running) {
            finish("w1", a);
        }
        List<String> claimed = new ArrayList<>();
        for (int i = 0; i < 4 && claimed.size() < 3; i++) {
            for (Assignment a : claim("w1", 2)) {
                claimed.add(a.getTaskId());
                finish("w1", a);
            }
        }
        assertThat(claimed).contains(queuedOfAlice);
    }

    @Test
    void anOwnerOfWeightTwoGetsTwoOfEveryThreeSlots(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        // Each attempt ends within its minimum charge, so each costs exactly one slot-minute: the
        // order is then decided by the weights alone.
        join(core.owners().setFairShare(null, Duration.ofMinutes(1)));
        join(core.owners().setLimits("bob", OwnerLimits.builder().weight(2.0).build()));
        register("w1", 0, 1, 2);
        for (int i = 0; i < 200; i++) {
            submit("a" + i, "alice", 1);
            submit("b" + i, "bob", 1);
        }
        Map<String, Integer> got = new HashMap<>();
        for (int round = 0; round < 100; round++) {
            List<Assignment> run = claim("w1", 3);
            assertThat(run).hasSize(3);
            for (Assignment a : run) {
                got.merge(owner(a), 1, Integer::sum);
                finish("w1", a);
            }
        }
        System.out.println("fair-share: of 300 slots, alice (weight 1) got " + got.get("alice") + ", bob (weight 2) "
                + got.get("bob"));
        assertThat(got.get("bob")).isBetween(199, 201);
        assertThat(share("bob").getUsage()).isCloseTo(2 * share("alice").getUsage(), within(2 * 60.0 + 1e-6 * share("bob").getUsage()));
    }

    @Test
    void aCapOfGpusIsNeverExceededByConcurrentClaimsAndRaisingItLetsTheNextTaskStart(RedisClient client, RedisNamespace ns)
            throws Exception {
        open(client, ns);
        join(core.owners().setLimits("alice", OwnerLimits.builder().maxGpus(3).build()));
        List<String> workers = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            register("w" + w, 0, 1);
            workers.add("w" + w);
        }
        for (int i = 0; i < 60; i++) {
            submit("a" + i, "alice", 1);
        }
        submit("b0", "bob", 2);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 5; round++) {
                List<Future<List<Assignment>>> claims = new ArrayList<>();
                for (String w : workers) {
                    claims.add(pool.submit(() -> claim(w, 2)));
                }
                Map<String, List<Assignment>> byWorker = new HashMap<>();
                for (int i = 0; i < claims.size(); i++) {
                    byWorker.put(workers.get(i), claims.get(i).get());
                    assertThat(heldGpus("alice")).isLessThanOrEqualTo(3);
                }
                assertThat(heldGpus("alice")).isEqualTo(3);
                assertThat(share("alice").getHeldGpus()).isEqualTo(3);
                // Every alice task ends; the next round claims again.
                byWorker.forEach((w, as) -> as.stream().filter(a -> a.getTaskId().startsWith("a")).forEach(a -> finish(w, a)));
                assertThat(heldGpus("alice")).isZero();
            }
            assertThat(CoreFixture.record(core, "b0").getState()).isEqualTo(TaskState.ASSIGNED);
        } finally {
            pool.shutdownNow();
        }
        String bobs = CoreFixture.record(core, "b0").getWorkerId();
        List<String> free = workers.stream().filter(w -> !w.equals(bobs)).toList();
        assertThat(claim(free.get(0), 2)).extracting(Assignment::getTaskId).hasSize(2).allMatch(id -> id.startsWith("a"));
        assertThat(claim(free.get(1), 1)).extracting(Assignment::getTaskId).hasSize(1);
        assertThat(claim(free.get(2), 1)).isEmpty(); // alice holds 3 of her 3
        join(core.owners().setLimits("alice", OwnerLimits.builder().maxGpus(4).build()));
        assertThat(claim(free.get(2), 1)).extracting(Assignment::getTaskId).hasSize(1);
        assertThat(heldGpus("alice")).isEqualTo(4);
        assertThat(share("alice").getHeldGpus()).isEqualTo(4);
        assertThat(share("alice").getRunning()).isEqualTo(4);

        // Lowering the cap never stops running work: alice keeps her 4 GPUs, her attempts untouched,
        // and gets nothing more until she is under the new cap.
        Map<String, Long> epochs = new HashMap<>();
        for (TaskState s : List.of(TaskState.ASSIGNED, TaskState.RUNNING)) {
            for (TaskRecord r : join(core.listTasks(s, 0, 100)).getTasks()) {
                if (r.getOwner().equals("alice")) {
                    epochs.put(r.getTaskId(), r.getEpoch());
                }
            }
        }
        join(core.owners().setLimits("alice", OwnerLimits.builder().maxGpus(1).build()));
        assertThat(claim(free.get(3), 1)).isEmpty();
        assertThat(heldGpus("alice")).isEqualTo(4);
        epochs.forEach((id, epoch) -> assertThat(CoreFixture.record(core, id)).satisfies(r -> {
            assertThat(r.getState()).isEqualTo(TaskState.ASSIGNED);
            assertThat(r.getEpoch()).isEqualTo(epoch);
        }));
    }

    /** The GPUs alice's tasks hold, from the task records themselves. */
    private int heldGpus(String owner) {
        int held = 0;
        for (TaskState s : List.of(TaskState.ASSIGNED, TaskState.RUNNING)) {
            for (TaskRecord t : CoreFixture.allInState(core, s)) {
                if (t.getOwner().equals(owner)) {
                    held += t.getGpus();
                }
            }
        }
        return held;
    }

    @Test
    void submissionsOverAHardLimitFailAtOnceWithTheLimitAndStoreNothing(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        join(core.owners().setDefaults(OwnerLimits.builder().maxGpusPerTask(4).build()));
        join(core.owners().setLimits("alice", OwnerLimits.builder().maxGpus(2).maxQueued(3).build()));
        join(core.owners().setLimits("bob", OwnerLimits.builder().rate(1.0).burst(30).build()));

        assertLimit(() -> submit("big", "carol", 5), OwnerLimit.MAX_GPUS_PER_TASK, 4, 5);
        assertLimit(() -> submit("big2", "alice", 3), OwnerLimit.MAX_GPUS, 2, 3);
        for (int i = 0; i < 3; i++) {
            submit("q" + i, "alice", 1);
        }
        assertLimit(() -> submit("q3", "alice", 1), OwnerLimit.MAX_QUEUED, 3, 3);
        for (int i = 0; i < 30; i++) {
            submit("r" + i, "bob", 0);
        }
        OwnerLimitExceededException rate = assertLimit(() -> submit("r30", "bob", 0), OwnerLimit.RATE, 1, 30);
        assertThat(rate.getRetryAfter()).hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(1),
                Duration.ofSeconds(1)));
        assertThat(rate.isRetryable()).isTrue();
        for (String never : List.of("big", "big2", "q3", "r30")) {
            assertThat(join(core.getTask(never))).as(never).isEmpty();
        }
        assertThat(join(core.queueDepth())).isEqualTo(33);
        assertThat(share("alice").getQueued()).isEqualTo(3);
        assertThat(share("bob").getQueued()).isEqualTo(30);
        // The bucket fills again at its rate: a second later one more is taken.
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(200)).ignoreException(CompletionException.class)
                .untilAsserted(() -> submit("r30", "bob", 0));
        assertThat(CoreFixture.record(core, "r30").getState()).isEqualTo(TaskState.QUEUED);
    }

    private static OwnerLimitExceededException assertLimit(Runnable submission, OwnerLimit limit, double allowed,
                                                           double current) {
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(submission::run);
        assertThat(thrown).isInstanceOf(CompletionException.class);
        assertThat(thrown.getCause()).isInstanceOf(OwnerLimitExceededException.class);
        OwnerLimitExceededException e = (OwnerLimitExceededException) thrown.getCause();
        assertThat(e.getLimit()).isEqualTo(limit);
        assertThat(e.getAllowed()).isEqualTo(allowed);
        assertThat(e.getCurrent()).isEqualTo(current);
        assertThat(e.getMessage()).contains(limit == OwnerLimit.RATE ? "retry after" : "nothing was stored");
        return e;
    }

    @Test
    void usageDecaysWithTheConfiguredHalfLife(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        join(core.owners().setFairShare(Duration.ofSeconds(2), Duration.ofSeconds(100)));
        register("w1", 0);
        submit("a0", "alice", 1);
        long charged = System.nanoTime();
        finish("w1", claim("w1", 1).get(0));
        double first = share("alice").getUsage();
        assertThat(first).isBetween(100 * Math.pow(2, -0.5), 100.0);
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> share("alice").getUsage() < 50);
        double elapsed = (System.nanoTime() - charged) / 1e9;
        double now = share("alice").getUsage();
        // Read after at least one half-life: at most half, and no less than the half-life predicts
        // for the time that has passed since the charge (plus a second of slack).
        assertThat(now).isLessThan(50).isGreaterThan(100 * Math.pow(2, -(elapsed + 1) / 2));
    }

    @Test
    void aReplayedClaimChargesOnceAndCountsSurviveARedisCrash(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        register("w1", 0, 1);
        submit("a0", "alice", 1);
        submit("a1", "alice", 1);
        join(core.owners().setLimits("alice", OwnerLimits.builder().maxRunning(5).weight(3.0).build()));
        String request = requestId();
        ClaimResult first = join(core.claim("w1", "s-w1", 1, request));
        double usage = share("alice").getUsage();
        ClaimResult replay = join(core.claim("w1", "s-w1", 1, request));
        assertThat(replay.getAssignments()).extracting(Assignment::getTaskId)
                .containsExactlyElementsOf(first.getAssignments().stream().map(Assignment::getTaskId).toList());
        // Usage read later has decayed a little (7 days' half-life): a second charge would add 60.
        assertThat(share("alice").getUsage()).isBetween(usage - 1, usage);
        assertThat(share("alice").getHeldGpus()).isEqualTo(1);
        Assignment a = first.getAssignments().get(0);
        finish("w1", a);
        // Finishing again is a duplicate: no second release, no second charge.
        double afterFinish = share("alice").getUsage();
        assertThat(join(core.finish(new TaskLease(a.getTaskId(), a.getEpoch()), "w1", "s-w1", TaskState.SUCCEEDED, 0, null,
                null)).getStatus()).isEqualTo(WriteStatus.DUPLICATE);
        assertThat(share("alice").getUsage()).isBetween(afterFinish - 1, afterFinish);
        assertThat(share("alice").getRunning()).isZero();
        assertThat(claim("w1", 1)).hasSize(1);

        TestRedis server = redis.server();
        server.assumeControllable();
        server.kill();
        server.restart();
        OwnerShare after = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> share("alice"),
                java.util.Objects::nonNull);
        assertThat(after.getHeldGpus()).isEqualTo(1);
        assertThat(after.getRunning()).isEqualTo(1);
        assertThat(after.getQueued()).isZero();
        assertThat(after.getWeight()).isEqualTo(3.0);
        assertThat(after.getLimits().getMaxRunning()).hasValue(5);
        assertThat(after.getUsage()).isGreaterThan(afterFinish + 59); // and the second attempt's start
    }

    @Test
    void anOwnerAtItsLimitWithTenThousandQueuedTasksCostsOtherOwnersClaimsNothing(RedisClient client, RedisNamespace ns) {
        open(client, ns);
        register("w1", 0, 1);
        join(core.owners().setLimits("alice", OwnerLimits.builder().maxRunning(0).build()));
        long baseline = timeClaims("bob", 200);
        List<CompletionStageHolder> pending = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            pending.add(new CompletionStageHolder(core.submit(TaskDefinition.builder("a" + i).owner("alice").gpus(1).build())));
        }
        pending.forEach(p -> join(p.future));
        long capped = timeClaims("carol", 200);
        System.out.printf("fair-share: 200 claims for another owner took %.1f ms with no other owner queued, %.1f ms beside"
                + " 10,000 queued tasks of an owner at her limit%n", baseline / 1e6, capped / 1e6);
        assertThat(share("alice").getQueued()).isEqualTo(10_000);
        assertThat(share("alice").getRunning()).isZero();
    }

    private record CompletionStageHolder(java.util.concurrent.CompletableFuture<SubmitResult> future) {
    }

    /** Submits and runs {@code n} tasks of {@code owner} one at a time (claim, finish); returns the claims' nanoseconds. */
    private long timeClaims(String owner, int n) {
        long total = 0;
        for (int i = 0; i < n; i++) {
            submit(owner + i, owner, 1);
            long t0 = System.nanoTime();
            List<Assignment> got = claim("w1", 1);
            total += System.nanoTime() - t0;
            assertThat(got).extracting(Assignment::getTaskId).containsExactly(owner + i);
            finish("w1", got.get(0));
        }
        return total;
    }
}
