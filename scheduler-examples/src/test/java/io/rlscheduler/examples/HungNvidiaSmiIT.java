package io.rlscheduler.examples;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * nvidia-smi hangs when a GPU fails. The worker asks it for GPU figures with every heartbeat; the
 * heartbeat, which renews the leases, must not wait for it.
 */
class HungNvidiaSmiIT {

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
    void aHungNvidiaSmiHoldsUpNeitherTheHeartbeatsNorTheTasks(TestRedis redis, RedisNamespace ns) throws Exception {
        Path hung = dir.resolve("nvidia-smi-hangs");
        Files.writeString(hung, "#!/bin/sh\nexec sleep 600\n");
        Files.setPosixFilePermissions(hung, PosixFilePermissions.fromString("rwx------"));
        cluster = new Cluster(redis, ns, dir);
        SchedulerWorker worker = cluster.workerBuilder("w1", 0).nvidiaSmi(hung.toString()).build().start();
        try {
            // 3 s of running: a task lease (2 s) and three liveness leases (1 s) renewed meanwhile.
            TaskHandle run = cluster.master.submit(TaskSpec.python("gpu_probe.py").taskId("probe-1").arg("--hold")
                    .arg("3").gpus(1).build());
            TaskResult result = run.result().get(60, TimeUnit.SECONDS);
            assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(result.getAttempts()).isEqualTo(1);
            assertThat(result.getRecord().getLeaseLosses()).isZero();
            assertThat(cluster.master.listWorkers()).singleElement().extracting(WorkerInfo::getState)
                    .isEqualTo(WorkerState.IDLE);
        } finally {
            worker.close();
        }
    }
}
