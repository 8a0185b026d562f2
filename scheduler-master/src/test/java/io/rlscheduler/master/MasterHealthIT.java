package io.rlscheduler.master;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@link SchedulerMaster#health()} through the public API, against a real Redis. */
class MasterHealthIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "master-health-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void theSnapshotCountsTheQueueAndTheLogFollows(TestRedis redis, RedisNamespace ns) {
        try (SchedulerMaster master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret(SECRET).coreOptions(CoreOptions.builder().namespace(ns.name()).build())
                .logDirectory(dir.resolve("logs")).build().start()) {
            TaskHandle queued = master.submit(TaskSpec.python("train.py").taskId("waits").build());
            LogFollow follow = queued.followLogs(r -> { });
            HealthSnapshot health = master.health();
            assertThat(health.getQueueDepth()).isEqualTo(1);
            assertThat(health.getParkedTasks()).isZero();
            assertThat(health.getWorkersByState()).containsEntry(WorkerState.IDLE, 0);
            assertThat(health.getLogFollowers()).isEqualTo(1);
            assertThat(health.getOpenLogFiles()).as("nothing printed yet").isZero();
            assertThat(health.getLogWriteBacklog()).isZero();
            assertThat(health.getLogSyncBacklog()).isZero();
            assertThat(health.toString()).contains("logFollowers=1", "parked=0");
            follow.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> master.health().getLogFollowers() == 0);
        }
    }
}
