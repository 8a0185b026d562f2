package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@link TaskHandle#result()} completes however Redis behaves, and fails when the master stops. */
class ResultFutureIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "result-future-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void theResultOfAnEndedTaskCompletesAlthoughItsFirstReadFailed(TestRedis redis, RedisNamespace ns) throws Exception {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).build();
        RedisClient client = RedisClient.create(redis.getUri());
        try (FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort());
             LeaseCore core = LeaseCore.create(client, options);
             SchedulerMaster master = SchedulerMaster.builder()
                     .redis(RedisURI.builder().withHost("127.0.0.1").withPort(proxy.getPort())
                             .withTimeout(Duration.ofMillis(300)).build())
                     .bindHost("127.0.0.1").rpcPort(0).secret(SECRET).coreOptions(options)
                     .leaderLease(Duration.ofSeconds(1)).logDirectory(dir.resolve("logs")).build().start()) {
            // The task runs and ends before anybody asks for its result: no event will come for it.
            core.register(new WorkerRegistration("w1", "s1", Map.of(), 4, 0, List.of())).get(10, TimeUnit.SECONDS);
            core.submit(TaskDefinition.builder("ended").build()).get(10, TimeUnit.SECONDS);
            Assignment a = core.claim("w1", "s1", 1, "claim-1").get(10, TimeUnit.SECONDS).getAssignments().get(0);
            TaskLease lease = new TaskLease("ended", a.getEpoch());
            core.acknowledge(lease, "w1", "s1").get(10, TimeUnit.SECONDS);
            core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null).get(10, TimeUnit.SECONDS);

            // The result is asked while Redis is out of the master's reach: its read fails (300 ms).
            await().atMost(Duration.ofSeconds(10)).until(master::isLeader);
            proxy.blackhole();
            CompletableFuture<TaskResult> result = master.task("ended").result();
            // A whole leadership lease of failed renewals: the read has long failed by then.
            await().atMost(Duration.ofSeconds(10)).until(() -> !master.isLeader());
            assertThat(result).isNotDone();
            proxy.pass();
            assertThat(result.get(10, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void stoppingTheMasterFailsTheResultsItWaitsOn(TestRedis redis, RedisNamespace ns) {
        SchedulerMaster master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret(SECRET).coreOptions(CoreOptions.builder().namespace(ns.name()).build())
                .logDirectory(dir.resolve("logs")).build().start();
        CompletableFuture<TaskResult> result;
        try {
            result = master.submit(TaskSpec.python("train.py").taskId("never-runs").build()).result();
        } finally {
            master.close();
        }
        assertThatThrownBy(() -> result.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(SchedulerException.class)
                .hasMessage("the master stopped before task never-runs ended; ask a running master for its result");
    }
}
