package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.LeaseCore;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.WorkerRegistration;
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
 * A queued task says why it waits (pitfall: "jobs stuck pending with no reason given"). A real
 * master and Redis; the workers are registered in Redis directly and never connect to the
 * master, so nothing is dispatched and each task stays queued while the test changes the
 * workers around it. A claim made here stands for a running task that holds GPUs.
 */
class WhyPendingIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    @TempDir
    Path dir;

    private SchedulerMaster master;
    private RedisClient client;
    private LeaseCore core;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).claimScanLimit(3).build();
        master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret("why-pending-test-shared-secret".getBytes(StandardCharsets.UTF_8)).coreOptions(options)
                .logDirectory(dir.resolve("logs")).masterId("m1").build().start();
        client = RedisClient.create(redis.getUri());
        core = LeaseCore.create(client, options);
    }

    @AfterEach
    void stop() {
        master.close();
        core.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private void register(String id, Map<String, String> labels, Integer... gpus) throws Exception {
        core.register(new WorkerRegistration(id, "s-" + id, labels, 8, 16L << 30, List.of(gpus))).get(10, TimeUnit.SECONDS);
    }

    private static TaskSpec.Builder task(String id) {
        return TaskSpec.python("train.py").taskId(id);
    }

    @Test
    void eachReasonWithTheFiguresBehindIt() throws Exception {
        TaskHandle oneGpu = master.submit(task("one-gpu").gpus(1).build());
        PendingReason none = oneGpu.whyPending();
        assertThat(none.getCode()).isEqualTo(Code.NO_LIVE_WORKER);
        assertThat(none.getMessage()).isEqualTo("no worker is registered");
        assertThat(none.getQueuePosition()).isZero();

        register("w1", Map.of("zone", "a"), 0, 1);
        TaskHandle elsewhere = master.submit(task("zone-b").selector("zone", "b").build());
        assertThat(elsewhere.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NO_WORKER_MATCHES_SELECTOR);
            assertThat(r.getMessage()).isEqualTo("no live worker has the labels {zone=b} it asks for; live workers' labels:"
                    + " w1 {zone=a}");
            assertThat(r.getQueuePosition()).isEqualTo(1);
        });
        TaskHandle big = master.submit(task("four-gpus").gpus(4).build());
        assertThat(big.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.NO_WORKER_LARGE_ENOUGH);
            assertThat(r.getMessage()).isEqualTo("it needs 4 GPUs, 1 CPU slots, 0 bytes, more than any live worker has in"
                    + " all: w1 2 GPUs, 8 CPU slots, 17179869184 bytes");
        });
        assertThat(oneGpu.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.FITS_NOW);
            assertThat(r.getMessage()).startsWith("w1 has room for it now (1 GPUs, 1 CPU slots, 0 bytes), with 0 tasks ahead");
        });

        // Four tasks queued; a claim looks at 3: the fourth is behind, whatever fits.
        TaskHandle fourth = master.submit(task("fourth").build());
        assertThat(fourth.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.BEHIND_IN_QUEUE);
            assertThat(r.getQueuePosition()).isEqualTo(3);
            assertThat(r.getMessage()).startsWith("3 tasks are ahead of it in the queue, and a claim looks at the first 3");
        });

        // w1's GPUs taken by a running task (claimed here): the one-GPU task now waits for them.
        TaskHandle both = master.submit(task("takes-both").gpus(2).priority(900).build());
        assertThat(core.claim("w1", "s-w1", 1, "claim-1").get(10, TimeUnit.SECONDS).getAssignments())
                .singleElement().satisfies(a -> assertThat(a.getTaskId()).isEqualTo("takes-both"));
        assertThat(both.whyPending().getCode()).isEqualTo(Code.NOT_QUEUED);
        assertThat(both.whyPending().getMessage()).isEqualTo("the task is ASSIGNED, not waiting in the queue");
        assertThat(oneGpu.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).isEqualTo(Code.WAITING_FOR_CAPACITY);
            assertThat(r.getMessage()).isEqualTo("it needs 1 GPUs, 1 CPU slots, 0 bytes; the workers large enough for it"
                    + " have less free now: w1 0 GPUs, 7 CPU slots, 17179869184 bytes free");
        });
        assertThat(fourth.whyPending().getCode()).as("takes-both came and went ahead of it").isEqualTo(Code.BEHIND_IN_QUEUE);
        assertThat(elsewhere.cancel()).isTrue();
        assertThat(fourth.whyPending()).satisfies(r -> {
            assertThat(r.getCode()).as("2 ahead of it now, and w1 has CPU slots free").isEqualTo(Code.FITS_NOW);
            assertThat(r.getQueuePosition()).isEqualTo(2);
        });
    }

    @Test
    void anUnknownTaskIsNotFoundAndABadIdRefused() {
        assertThatThrownBy(() -> master.task("no-such-task").whyPending()).isInstanceOf(TaskNotFoundException.class);
        assertThatThrownBy(() -> master.whyPending("bad id")).isInstanceOf(IllegalArgumentException.class);
    }
}
