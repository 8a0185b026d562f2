package io.rlscheduler.examples;

import io.rlscheduler.core.OwnerLimit;
import io.rlscheduler.core.OwnerLimitExceededException;
import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Through the public API, with a real master, a real worker and real python processes: one
 * owner's sweep submitted first does not hold back another owner's single run, and an owner's
 * GPU limit holds while its tasks run.
 */
class FairShareEndToEndIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    @TempDir
    Path dir;

    private Cluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static long assignedAt(TaskRecord r) {
        return r.getHistory().stream().filter(t -> t.getTo() == TaskState.ASSIGNED).mapToLong(TaskTransition::getAtMillis)
                .min().orElseThrow();
    }

    @Test
    void anotherOwnersRunStartsAtTheNextFreeSlotAndAGpuLimitHolds(TestRedis redis, RedisNamespace ns) throws Exception {
        cluster = new Cluster(redis, ns, dir);
        cluster.master.sharing().setLimits("carol", OwnerLimits.builder().maxGpus(1).build());
        cluster.worker("gpu-box", 0, 1);
        // Over a hard limit: refused at once, with the limit, and nothing stored. (The queue is
        // empty and a worker connected, so the submission's own script run would also claim.)
        cluster.master.sharing().setDefaults(OwnerLimits.builder().maxGpusPerTask(2).build());
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.listWorkers().size() == 1);
        assertThatThrownBy(() -> cluster.master.submit(TaskSpec.python("nap.py").taskId("too-big").owner("dave").gpus(3)
                .build())).isInstanceOfSatisfying(OwnerLimitExceededException.class, e -> {
                    assertThat(e.getLimit()).isEqualTo(OwnerLimit.MAX_GPUS_PER_TASK);
                    assertThat(e.getMessage()).isEqualTo("owner 'dave' may ask for at most 2 GPUs per task, the task asks"
                            + " for 3; nothing was stored");
                });
        assertThatThrownBy(() -> cluster.master.task("too-big").getRecord()).isInstanceOf(TaskNotFoundException.class);
        List<TaskHandle> sweep = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            sweep.add(cluster.master.submit(TaskSpec.python("nap.py").taskId("alice-" + i).owner("alice").gpus(1).build()));
        }
        // The sweep has the two GPUs; bob's one run comes at the next free slot.
        TaskResult first = sweep.get(0).result().get(60, TimeUnit.SECONDS);
        assertThat(first.getState()).isEqualTo(TaskState.SUCCEEDED);
        long submitted = System.currentTimeMillis();
        TaskHandle bob = cluster.master.submit(TaskSpec.python("nap.py").taskId("bob-0").owner("bob").gpus(1).build());
        TaskResult bobs = bob.result().get(60, TimeUnit.SECONDS);
        assertThat(bobs.getState()).isEqualTo(TaskState.SUCCEEDED);
        long bobAssigned = assignedAt(bobs.getRecord());
        long aliceAfter = 0;
        for (TaskHandle run : sweep) {
            TaskRecord r = run.getRecord();
            if (r.getState() != TaskState.QUEUED && assignedAt(r) > submitted && assignedAt(r) < bobAssigned) {
                aliceAfter++;
            }
        }
        System.out.printf("fair-share end to end: bob's run was assigned %d ms after it was submitted; %d of alice's"
                + " runs were assigned in between%n", bobAssigned - submitted, aliceAfter);
        // At most the one free slot the sweep's running task may have been given before bob's submission was seen.
        assertThat(aliceAfter).isLessThanOrEqualTo(1);

        // carol may hold one GPU: her three runs go one at a time, beside alice's.
        List<TaskHandle> carol = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            carol.add(cluster.master.submit(TaskSpec.python("nap.py").taskId("carol-" + i).owner("carol").gpus(1).build()));
        }
        for (TaskHandle run : carol) {
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        }
        List<long[]> spans = new ArrayList<>();
        for (TaskHandle run : carol) {
            TaskRecord r = run.getRecord();
            long end = r.getHistory().stream().filter(t -> t.getTo() == TaskState.SUCCEEDED)
                    .mapToLong(TaskTransition::getAtMillis).max().orElseThrow();
            spans.add(new long[] {assignedAt(r), end});
        }
        spans.sort((x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < spans.size(); i++) {
            assertThat(spans.get(i)[0]).as("carol's run %d started after the one before it ended", i)
                    .isGreaterThanOrEqualTo(spans.get(i - 1)[1]);
        }
        for (TaskHandle run : sweep) {
            run.cancel();
        }
        OwnerShare share = cluster.master.sharing().shares().stream().filter(s -> s.getOwner().equals("carol"))
                .findFirst().orElseThrow();
        assertThat(share.getRunning()).isZero();
        assertThat(share.getHeldGpus()).isZero();
        assertThat(share.getUsage()).isGreaterThan(3 * 60 - 1); // three minimum charges of one GPU
    }

    @Test
    void anEightGpuRunUnderAStreamOfOneGpuRunsStartsOnceTheReservedWorkerHasDrained(TestRedis redis, RedisNamespace ns)
            throws Exception {
        cluster = new Cluster(redis, ns, dir);
        cluster.master.sharing().setReserveAfter(Duration.ofSeconds(2));
        cluster.worker("big-box", 0, 1, 2, 3, 4, 5, 6, 7);
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.listWorkers().size() == 1);
        // A stream of 1-GPU runs (0.4 s each) that keeps all 8 GPUs busy for longer than the reserve time.
        List<TaskHandle> stream = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            stream.add(cluster.master.submit(TaskSpec.python("nap.py").taskId("bob-" + i).owner("bob").gpus(1).build()));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> stream.get(10).getRecord().getState() != TaskState.QUEUED);
        TaskHandle big = cluster.master.submit(TaskSpec.python("nap.py").taskId("big").owner("alice").gpus(8).build());
        long submitted = big.getRecord().getHistory().get(0).getAtMillis();
        io.rlscheduler.core.Reservation[] seen = new io.rlscheduler.core.Reservation[1];
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(() -> {
            List<io.rlscheduler.core.Reservation> r = cluster.master.sharing().reservations();
            if (!r.isEmpty()) {
                seen[0] = r.get(0);
            }
            return seen[0] != null || big.getRecord().getState() != TaskState.QUEUED;
        });
        TaskResult done = big.result().get(60, TimeUnit.SECONDS);
        assertThat(done.getState()).isEqualTo(TaskState.SUCCEEDED);
        long started = assignedAt(done.getRecord());
        assertThat(seen[0]).as("a reservation was seen before big started").isNotNull();
        assertThat(seen[0].getTaskId()).isEqualTo("big");
        assertThat(seen[0].getWorkerId()).isEqualTo("big-box");
        long reservedAt = seen[0].getSince().toEpochMilli();
        assertThat(reservedAt - submitted).as("reserved once it had waited the reserve time").isGreaterThanOrEqualTo(2000);
        // While reserved, big-box took none of the stream: the runs it held drained, then big started.
        int startedWhileReserved = 0;
        long lastEnd = 0;
        for (TaskHandle run : stream) {
            TaskRecord r = run.getRecord();
            if (r.getState() == TaskState.QUEUED) {
                continue;
            }
            long at = assignedAt(r);
            if (at > reservedAt && at < started) {
                startedWhileReserved++;
            }
            if (at <= reservedAt) {
                lastEnd = Math.max(lastEnd, r.getHistory().stream().filter(t -> t.getTo().isTerminal())
                        .mapToLong(TaskTransition::getAtMillis).max().orElse(at));
            }
        }
        System.out.printf("reservation end to end: big waited %d ms (reserve time 2000 ms): reserved after %d ms, started"
                + " %d ms after that, %d ms after the last of the runs begun before it had ended%n",
                started - submitted, reservedAt - submitted, started - reservedAt, started - lastEnd);
        assertThat(startedWhileReserved).isZero();
        assertThat(started).as("big started once the runs begun before the reservation had ended").isGreaterThanOrEqualTo(lastEnd);
        for (TaskHandle run : stream) {
            run.cancel();
        }
    }
}
