package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Path;

/** The README's embedding example, compiled with the project so it cannot go stale. Needs a Redis at localhost:6379. */
public final class Quickstart {
    public static void main(String[] args) throws Exception {
        String secret = "change-me-to-a-long-lab-secret";
        try (SchedulerMaster master = SchedulerMaster.builder()
                     .redis(RedisURI.create("redis://localhost:6379")).rpcPort(9000).secret(secret).build().start();
             SchedulerWorker worker = SchedulerWorker.builder()
                     .masters("localhost:9000").redis(RedisURI.create("redis://localhost:6379"))
                     .workerId("gpu-box-1").secret(secret).gpuIds(0, 1).scriptRoots(Path.of("scripts")).build().start()) {
            TaskHandle run = master.submit(TaskSpec.python("train.py")
                    .param("algo", "q-learning").param("lr", 0.1).param("episodes", 500L)
                    .gpus(1).owner("alice").build());
            run.followLogs(line -> System.out.println(line.getText()));
            TaskResult result = run.result().get();
            System.out.println(result.getState() + " reward=" + result.getFinalMetrics().get("final_reward"));
        }
    }

    private Quickstart() {
    }
}
