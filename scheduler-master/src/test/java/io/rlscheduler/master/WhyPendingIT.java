package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.master.PendingReason.Code;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A queued task says why it waits (pitfall: "jobs stuck pending with no reason given"). Real
 * masters and Redis: m1 leads; "api" is a standby-only master asked the same questions. The
 * workers are registered in Redis directly and never connect, so nothing is dispatched and each
 * task stays queued while the test changes what is around it; a claim made here stands for a
 * running task that holds GPUs.
 */
class WhyPendingIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "why-pending-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private CoreOptions options;
    private TestRedis redis;
    private SchedulerMaster leader;
    private SchedulerMaster api;
    private RedisClient client;
    private LeaseCore core;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) {
        this.redis = redis;
        options = CoreOptions.builder().namespace(ns.name()).claimScanLimit(5).build();
        leader = master("m1", false);
        api = master("api", true);
        client = RedisClient.create(redis.getUri());
        core = LeaseCore.create(client, options);
    }

    private SchedulerMaster master(String id, boolean standbyOnly) {
        return SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs-" + id)).masterId(id).standbyOnly(standbyOnly)
                .leaderLease(Duration.ofSeconds(1)).build().start();
    }

    @AfterEach
    void stop() {
        api.close();
        leader.close();
        core.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private void register(String id, Map<String, String> labels, Integer... gpus) throws Exception {
        core.register(new WorkerRegistration(id, "s-" + id, labels, 8, 16L << 30, List.of(gpus))).get(10, TimeUnit.SECONDS);
    }

    private TaskHandle submit(TaskSpec.Builder spec) {
        return leader.submit(spec.build());
    }

    private static TaskSpec.Builder task(String id) {
        return TaskSpec.python("train.py").taskId(id);
    }

    @Test
    void eachReasonWithTheFiguresBehindIt() throws Exception {
        TaskHandle oneGpu = submit(task("one-gpu").gpus(1));
        PendingReason none = oneGpu.whyPending();
        assertThat(none.getCode()).isEqualTo(Code.NO_LIVE_WORKER);
        assertThat(none.getMessage()).isEqualTo("no worker is registered");
        assertThat(none.getQueuePosition()).isZero();

        register("w1", Map.of("zone", "a"), 0, 1);
        TaskHandle elsewhere = submit(task("zone-b").selector("zone", "b"));
        assertThat(elsewhere.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NO_WORKER_MATCHES_SELECTOR);
            assertThat(r.getMessage()).isEqualTo("no live worker has the labels {zone=b} it asks for; live workers' labels:"
                    + " w1 {zone=a}");
            assertThat(r.getQueuePosition()).isEqualTo(1);
        });
        assertThat(submit(task("four-gpus").gpus(4)).whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NO_WORKER_LARGE_ENOUGH);
            assertThat(r.getMessage()).isEqualTo("it needs 4 GPUs, 1 CPU slots, 0 bytes, more than any live worker has in"
                    + " all: w1 2 GPUs, 8 CPU slots, 17179869184 bytes");
        });

        // w1 fits it, but the leader claims only for connected workers, and w1 is not connected.
        assertThat(oneGpu.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NOT_CONNECTED);
            assertThat(r.getMessage()).isEqualTo("the workers that could run it (w1) hold no connection to the leader, this"
                    + " master (m1), which claims only for the workers connected to it");
        });
        assertThat(api.task("one-gpu").whyPending()).as("a standby cannot see the leader's connections").satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.FITS_NOW);
            assertThat(r.getMessage()).isEqualTo("w1 has room for it now (1 GPUs, 1 CPU slots, 0 bytes), after the 0 tasks"
                    + " ahead of it: the leader, m1, should assign it at its next dispatch round, if that worker is"
                    + " connected to it");
        });

        // w1's two GPUs go to the two 1-GPU tasks ahead of third-gpu first.
        submit(task("second-gpu").gpus(1));
        submit(task("third-gpu").gpus(1));
        assertThat(api.task("third-gpu").whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.WAITING_FOR_CAPACITY);
            assertThat(r.getQueuePosition()).isEqualTo(4);
            assertThat(r.getMessage()).isEqualTo("it needs 1 GPUs, 1 CPU slots, 0 bytes; w1 has that much free, but the 2"
                    + " tasks ahead of it that fit take the room first: w1 2 GPUs, 8 CPU slots, 17179869184 bytes free");
        });
        // Five ahead; a claim looks at 5.
        TaskHandle sixth = submit(task("sixth"));
        assertThat(sixth.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.BEHIND_IN_QUEUE);
            assertThat(r.getQueuePosition()).isEqualTo(5);
            assertThat(r.getMessage()).startsWith("5 of anonymous's own tasks are ahead of it, and a claim examines at"
                    + " most 5 tasks for a worker (claimScanLimit)");
        });

        // A running task takes both GPUs (claimed here, ahead of everything by its priority).
        TaskHandle both = submit(task("takes-both").gpus(2).priority(900));
        assertThat(core.claim("w1", "s-w1", 1, "claim-1").get(10, TimeUnit.SECONDS).getAssignments())
                .singleElement().satisfies(a -> assertThat(a.getTaskId()).isEqualTo("takes-both"));
        assertThat(both.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NOT_QUEUED);
            assertThat(r.getMessage()).isEqualTo("the task is ASSIGNED, not waiting in the queue");
            assertThat(r.getQueuePosition()).isEqualTo(-1);
        });
        assertThat(api.task("one-gpu").whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.WAITING_FOR_CAPACITY);
            assertThat(r.getMessage()).isEqualTo("it needs 1 GPUs, 1 CPU slots, 0 bytes; the workers large enough for it"
                    + " have less free now: w1 0 GPUs, 7 CPU slots, 17179869184 bytes free");
        });

        // One fewer ahead of sixth, and it needs no GPU: it fits after those ahead.
        assertThat(elsewhere.cancel()).isTrue();
        assertThat(api.task("sixth").whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.FITS_NOW);
            assertThat(r.getQueuePosition()).isEqualTo(4);
        });
        assertThat(sixth.whyPending().getCode()).isEqualTo(Code.NOT_CONNECTED);
    }

    @Test
    void aTaskParkedByOutOfDateShapeCountsSaysSo(RedisNamespace ns) throws Exception {
        register("small", Map.of(), 0); // a claim reads GPU tasks only for a worker with a free GPU
        register("big", Map.of(), 0, 1, 2, 3);
        try (var connection = client.connect()) {
            // The counts as a hand edit could leave them: big's shape missing.
            var shapes = connection.sync().hkeys(ns.key("shapes"));
            connection.sync().hdel(ns.key("shapes"), shapes.stream().filter(k -> k.contains("\"4\"")).findFirst().orElseThrow());
            connection.sync().hset(ns.key("shapes"), "[\"1\",\"0\",\"0\",[]]", "1");
        }
        TaskHandle four = submit(task("four").gpus(4));
        core.claim("small", "s-small", 1, "claim-small").get(10, TimeUnit.SECONDS);
        assertThat(four.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.PARKED);
            assertThat(r.getMessage()).isEqualTo("it is parked as if no registered worker could run it, but big could: the"
                    + " worker shapes counted in Redis were out of date when a claim judged it (a worker registered by a"
                    + " process of an older version?); the next registration (a restart) of one of them brings it back,"
                    + " or DEL of the namespace's shapes key");
        });
    }

    @Test
    void anOwnerAtItsLimitAndTheOwnersServedFirstAreNamedWithTheirFigures() throws Exception {
        register("w1", Map.of(), 0, 1);
        leader.sharing().setLimits("alice", OwnerLimits.builder().maxGpus(1).build());
        submit(task("a1").owner("alice").gpus(1));
        submit(task("a2").owner("alice").gpus(1));
        assertThat(core.claim("w1", "s-w1", 1, "claim-a").get(10, TimeUnit.SECONDS).getAssignments())
                .singleElement().satisfies(a -> assertThat(a.getTaskId()).isEqualTo("a1"));
        assertThat(api.task("a2").whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.OWNER_LIMIT);
            assertThat(r.getMessage()).isEqualTo("alice holds 1 of its 1 GPUs (max_gpus) and this task needs 1: it waits"
                    + " for alice's running tasks to free 1 more");
        });
        leader.sharing().setLimits("alice", OwnerLimits.builder().maxGpus(2).build());
        // bob has used nothing, alice one GPU's minimum charge (60 s): bob's task goes first, and says so.
        submit(task("b1").owner("bob").gpus(1));
        assertThat(api.task("a2").whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.WAITING_FOR_CAPACITY);
            assertThat(r.getMessage()).isEqualTo("it needs 1 GPUs, 1 CPU slots, 0 bytes; w1 has that much free, but the 1"
                    + " task ahead of it that fit take the room first: w1 1 GPUs, 7 CPU slots, 17179869184 bytes free; 1"
                    + " owner with less recent usage per share is ahead of alice (0.0 slot-h): bob 0.0 slot-h");
        });
        assertThat(leader.sharing().shares()).extracting(OwnerShare::getOwner, OwnerShare::getHeldGpus, OwnerShare::getRunning,
                OwnerShare::getQueued).containsExactly(tuple("alice", 1, 1, 1), tuple("bob", 0, 0, 1));
    }

    @Test
    void aReservationIsNamedForItsTaskAndForTheTasksItHoldsBackBesideEveryOtherReason() throws Exception {
        register("w1", Map.of(), 0, 1, 2, 3);
        for (int i = 1; i <= 3; i++) {
            submit(task("b" + i).owner("bob").gpus(1));
        }
        assertThat(core.claim("w1", "s-w1", 3, "claim-b").get(10, TimeUnit.SECONDS).getAssignments()).hasSize(3);
        submit(task("big").owner("alice").gpus(4));
        leader.sharing().setReserveAfter(Duration.ofMillis(1));
        assertThat(leader.sharing().getReserveAfter()).isEqualTo(Duration.ofMillis(1));
        // w1 has one GPU free: its next claim reserves it for big (nothing else is queued to take it).
        int[] round = {0};
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            core.claim("w1", "s-w1", 3, "claim-r" + round[0]++).get(10, TimeUnit.SECONDS);
            return !leader.sharing().reservations().isEmpty();
        });
        io.rlscheduler.core.Reservation r = leader.sharing().reservations().get(0);
        assertThat(r.getTaskId()).isEqualTo("big");
        String since = java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'").withZone(java.time.ZoneOffset.UTC)
                .format(r.getSince());
        assertThat(api.task("big").whyPending().getReasons()).containsExactly(new PendingReason.Reason(Code.RESERVED,
                "w1 is reserved for it since " + since + ": it starts there once 4 GPUs are free (1 are now)"),
                new PendingReason.Reason(Code.WAITING_FOR_CAPACITY, "it needs 4 GPUs, 1 CPU slots, 0 bytes; the workers"
                        + " large enough for it have less free now: w1 1 GPUs, 5 CPU slots, 17179869184 bytes free"));

        // bob, at his limit of 3 running tasks, submits one more: held back by his limit and by the reservation.
        leader.sharing().setLimits("bob", OwnerLimits.builder().maxRunning(3).build());
        submit(task("b4").owner("bob").gpus(1));
        PendingReason b4 = api.task("b4").whyPending();
        assertThat(b4.getCode()).isEqualTo(Code.OWNER_LIMIT);
        assertThat(b4.getReasons()).extracting(PendingReason.Reason::code)
                .containsExactly(Code.OWNER_LIMIT, Code.WORKER_RESERVED, Code.WAITING_FOR_CAPACITY);
        assertThat(b4.getReasons().get(1).message()).isEqualTo("w1 is reserved for task big (alice, 4 GPUs) since " + since
                + ": it takes only work that leaves free what that task needs");
        assertThat(b4.toString()).contains("OWNER_LIMIT: bob runs 3 of its 3 tasks (max_running)")
                .contains("; and WORKER_RESERVED: w1 is reserved for task big");

        // Reservations off: the reservation ends, and b4 is held back by its owner's limit alone.
        leader.sharing().setReserveAfter(Duration.ZERO);
        assertThat(leader.sharing().reservations()).isEmpty();
        assertThat(api.task("b4").whyPending().getReasons()).extracting(PendingReason.Reason::code)
                .containsExactly(Code.OWNER_LIMIT);
    }

    @Test
    void theRepairPassCorrectsAHandEditedCounterAndHealthCountsIt(RedisNamespace ns) throws Exception {
        submit(task("a1").owner("alice").gpus(1));
        assertThat(leader.sharing().repair()).isEmpty();
        try (var c = client.connect()) {
            c.sync().hset("{" + ns.name() + "}:queue:own:alice", "queued", "5");
        }
        assertThat(leader.sharing().repair()).extracting(Object::toString).containsExactly("alice queued: 5 -> 1");
        assertThat(leader.health().getSharingRepairs()).satisfies(r -> {
            assertThat(r.passes()).isGreaterThanOrEqualTo(2);
            assertThat(r.corrections()).isEqualTo(1);
            assertThat(r.failures()).isZero();
        });
        assertThat(leader.sharing().shares()).extracting(OwnerShare::getOwner, OwnerShare::getQueued)
                .containsExactly(tuple("alice", 1));
    }

    @Test
    void withoutALeaderNothingIsDispatched() throws Exception {
        register("w1", Map.of(), 0, 1);
        submit(task("t1"));
        leader.close(); // resigns: only the standby-only master is left
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(api.task("t1").whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NO_LEADER);
            assertThat(r.getMessage()).isEqualTo("no master holds the leadership lease now: nothing is dispatched until"
                    + " one does");
        }));
    }

    @Test
    void anUnknownTaskIsNotFoundAndABadIdRefused() {
        assertThatThrownBy(() -> leader.task("no-such-task").whyPending()).isInstanceOf(TaskNotFoundException.class);
        assertThatThrownBy(() -> leader.whyPending("bad id")).isInstanceOf(IllegalArgumentException.class);
    }
}
