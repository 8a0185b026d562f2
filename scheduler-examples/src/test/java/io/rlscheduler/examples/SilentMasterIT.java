package io.rlscheduler.examples;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A master whose host dies sends no reset: the worker's connection goes silent. The worker must
 * notice by itself (the master answers every heartbeat) and connect again, rather than wait a
 * quarter of an hour for TCP to give up.
 */
class SilentMasterIT {

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

    @Test
    void aConnectionThatGoesSilentIsDroppedAndMadeAgain(TestRedis redis, RedisNamespace ns) throws Exception {
        cluster = new Cluster(redis, ns, dir);
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", cluster.master.getRpcAddress().getPort());
             SchedulerWorker worker = cluster.workerBuilder("w1", 0).masters("127.0.0.1:" + proxy.getPort()).build()
                     .start()) {
            await().atMost(Duration.ofSeconds(10)).until(worker::isConnected);
            // The connection stays open but nothing moves: as when the master's machine loses power.
            proxy.blackhole();
            // Heartbeats every 200 ms: silent for 5 of them (1 s), twice in a row, it is dropped.
            await().atMost(Duration.ofSeconds(10)).until(() -> !worker.isConnected());
            proxy.pass();
            await().atMost(Duration.ofSeconds(10)).until(worker::isConnected);
            TaskHandle run = cluster.master.submit(TaskSpec.python("silent.py").taskId("after-silence").gpus(1).build());
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        }
    }
}
