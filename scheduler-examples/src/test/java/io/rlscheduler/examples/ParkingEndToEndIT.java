package io.rlscheduler.examples;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerRemovalStatus;
import io.rlscheduler.master.PendingReason;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
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
import static org.awaitility.Awaitility.await;

/**
 * Through the public API, with a real master, real workers and real python processes: a head of
 * the queue made of tasks no worker could run does not stall the tasks behind it; those tasks
 * run once a worker that can registers; a retired worker can be removed.
 */
class ParkingEndToEndIT {

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

    private static TaskResult result(TaskHandle run) throws Exception {
        return run.result().get(60, TimeUnit.SECONDS);
    }

    @Test
    void tasksNoWorkerCouldRunWaitAsideUntilOneRegistersAndARetiredWorkerCanBeRemoved(TestRedis redis,
                                                                                      RedisNamespace ns) throws Exception {
        cluster = new Cluster(redis, ns, dir, 5); // a claim looks at the first 5 queued tasks
        cluster.worker("one-gpu", 0);
        List<TaskHandle> big = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            big.add(cluster.master.submit(TaskSpec.python("silent.py").taskId("big-" + i).gpus(2).build()));
        }
        TaskHandle small = cluster.master.submit(TaskSpec.python("silent.py").taskId("small").gpus(1).build());

        // Eight tasks that need 2 GPUs are ahead of it, and the only worker has one.
        assertThat(result(small).getState()).isEqualTo(TaskState.SUCCEEDED);
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.health().getParkedTasks() == 8);
        assertThat(cluster.master.queueDepth()).isEqualTo(8);
        PendingReason why = big.get(0).whyPending();
        assertThat(why.getCode()).isEqualTo(PendingReason.Code.NO_WORKER_LARGE_ENOUGH);
        assertThat(why.getMessage()).startsWith("it needs 2 GPUs, 1 CPU slots, 0 bytes, more than any live worker has in"
                + " all: one-gpu 1 GPUs, 4 CPU slots, ").endsWith(" bytes; it is parked: claims pass it over, so it holds"
                + " nothing back, until a worker that could run it registers");
        for (int i = 2; i < 8; i++) {
            assertThat(big.get(i).cancel()).isTrue();
        }

        // A machine with two GPUs joins: the two left come back to the queue and run on it.
        SchedulerWorker twoGpus = cluster.worker("two-gpus", 1, 2);
        for (int i = 0; i < 2; i++) {
            TaskResult r = result(big.get(i));
            assertThat(r.getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(r.getRecord().getWorkerId()).isEqualTo("two-gpus");
        }
        assertThat(cluster.master.health().getParkedTasks()).isZero();

        // It is retired: once its liveness lease runs out it can be removed, and 2-GPU tasks wait aside again.
        assertThat(cluster.master.removeWorker("two-gpus").getStatus()).isEqualTo(WorkerRemovalStatus.LIVE);
        twoGpus.close();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> cluster.master.removeWorker("two-gpus").getStatus() == WorkerRemovalStatus.REMOVED);
        assertThat(cluster.master.listWorkers()).extracting(WorkerInfo::getWorkerId).containsExactly("one-gpu");
        assertThat(cluster.master.removeWorker("two-gpus").getStatus()).isEqualTo(WorkerRemovalStatus.UNKNOWN_WORKER);
        TaskHandle again = cluster.master.submit(TaskSpec.python("silent.py").taskId("big-again").gpus(2).build());
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.health().getParkedTasks() == 1);
        assertThat(again.getState()).isEqualTo(TaskState.QUEUED);
        assertThat(again.getRecord().getReason()).startsWith("parked: ");
    }
}
