package io.rlscheduler.master;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.lettuce.core.RedisURI;
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
            // The follow's attach is a job of the log I/O thread: the backlog drains once it ran.
            await().atMost(Duration.ofSeconds(10)).until(() -> master.health().getLogWriteBacklog() == 0
                    && master.health().getLogSyncBacklog() == 0);
            assertThat(health.toString()).contains("logFollowers=1", "parked=0");
            follow.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> master.health().getLogFollowers() == 0);
        }
    }

    @Test
    void reaperPassesThatFailAreCounted(TestRedis redis, RedisNamespace ns) {
        try (FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort());
             SchedulerMaster master = SchedulerMaster.builder()
                     .redis(RedisURI.builder().withHost("127.0.0.1").withPort(proxy.getPort())
                             .withTimeout(Duration.ofMillis(300)).build())
                     .bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                     .coreOptions(CoreOptions.builder().namespace(ns.name()).build())
                     .reapInterval(Duration.ofMillis(100)).leaderLease(Duration.ofSeconds(1))
                     .logDirectory(dir.resolve("logs")).build().start()) {
            await().atMost(Duration.ofSeconds(10)).until(master::isLeader);
            await().atMost(Duration.ofSeconds(10)).until(() -> master.health().getReaperPasses() > 0);
            assertThat(master.health().getReaperFailures()).isZero();
            // Redis out of reach (the master's command timeout is 300 ms): a whole leadership lease
            // of failed renewals makes it step down; the reaper passes of that second failed.
            proxy.blackhole();
            await().atMost(Duration.ofSeconds(10)).until(() -> !master.isLeader());
            proxy.pass();
            await().atMost(Duration.ofSeconds(10)).until(master::isLeader);
            assertThat(master.health().getReaperFailures()).isPositive();
            assertThat(master.health().getReaperPasses()).isGreaterThan(master.health().getReaperFailures());
        }
    }
}
