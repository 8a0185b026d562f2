package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.WorkerRegistration;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SchedulerMaster#compare}: runs side by side, their parameters as submitted and their final
 * metrics as recorded, against a real Redis. The runs are driven through the lease core as a
 * worker would (claim, acknowledge, finish with metrics).
 */
class CompareRunsIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "compare-runs-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private SchedulerMaster master;
    private RedisClient client;
    private LeaseCore core;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) throws Exception {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).build();
        master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs")).build().start();
        client = RedisClient.create(redis.getUri());
        core = LeaseCore.create(client, options);
        core.register(new WorkerRegistration("w1", "s1", Map.of(), 8, 0, List.of())).get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() {
        master.close();
        core.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private void run(String taskId, TaskState outcome, Integer exitCode, String metricsJson) throws Exception {
        Assignment a = core.claim("w1", "s1", 1, "claim-" + taskId).get(10, TimeUnit.SECONDS).getAssignments().get(0);
        assertThat(a.getTaskId()).isEqualTo(taskId);
        TaskLease lease = new TaskLease(taskId, a.getEpoch());
        assertThat(core.acknowledge(lease, "w1", "s1").get(10, TimeUnit.SECONDS).isAccepted()).isTrue();
        assertThat(core.finish(lease, "w1", "s1", outcome, exitCode, outcome == TaskState.FAILED ? "exit 1" : null,
                metricsJson).get(10, TimeUnit.SECONDS).isAccepted()).isTrue();
    }

    @Test
    void runsSideBySideWithTheParametersThatDifferPickedOut() throws Exception {
        master.submit(TaskSpec.python("train.py").taskId("run-a").param("algo", "q-learning").param("lr", 0.1)
                .param("episodes", 300L).build());
        // 300.0 is not the same parameter as 300: the script gets "300.0", which int() refuses.
        master.submit(TaskSpec.python("train.py").taskId("run-b").param("algo", "q-learning").param("lr", 0.05)
                .param("episodes", 300.0).build());
        master.submit(TaskSpec.python("train.py").taskId("run-c").param("algo", "policy-gradient").param("lr", 0.1)
                .param("episodes", 300L).param("baseline", true).build());
        master.submit(TaskSpec.python("train.py").taskId("run-d").param("algo", "q-learning").param("lr", 0.2)
                .param("episodes", 300L).build());
        run("run-a", TaskState.SUCCEEDED, 0, "{\"final_reward\":150.5,\"episode\":300}");
        run("run-b", TaskState.SUCCEEDED, 0, "{\"final_reward\":195.0,\"episode\":300}");
        run("run-c", TaskState.FAILED, 1, "{\"episode\":12}");

        RunComparison c = master.compare("run-b", "run-a", "run-c", "run-d");
        assertThat(c.getRuns()).extracting(RunComparison.Run::getTaskId).containsExactly("run-b", "run-a", "run-c", "run-d");
        assertThat(c.getRuns()).extracting(RunComparison.Run::getState)
                .containsExactly(TaskState.SUCCEEDED, TaskState.SUCCEEDED, TaskState.FAILED, TaskState.QUEUED);
        assertThat(c.getCommonParameters()).isEmpty();
        assertThat(c.getVaryingParameters()).containsExactly("algo", "baseline", "episodes", "lr");
        assertThat(c.getMetricNames()).containsExactly("episode", "final_reward");
        assertThat(c.getRuns().get(1).getParameters()).containsExactly(Map.entry("algo", "q-learning"),
                Map.entry("lr", 0.1), Map.entry("episodes", 300));
        assertThat(c.getRuns().get(3).getFinalMetrics()).as("still queued").isEmpty();
        assertThat(c.best("final_reward", true)).get().extracting(RunComparison.Run::getTaskId).isEqualTo("run-b");
        assertThat(c.best("final_reward", false)).get().extracting(RunComparison.Run::getTaskId).isEqualTo("run-a");
        assertThat(c.best("episode", true)).get().as("the first of equals").extracting(RunComparison.Run::getTaskId)
                .isEqualTo("run-b");
        assertThat(c.best("no-such-metric", true)).isEmpty();
        assertThat(c.toTable()).isEqualTo("""
                4 runs of train.py; the same in all: (no parameter)
                task   state      algo             baseline  episodes  lr    episode  final_reward
                run-b  SUCCEEDED  q-learning       -         300.0     0.05  300      195.0
                run-a  SUCCEEDED  q-learning       -         300       0.1   300      150.5
                run-c  FAILED     policy-gradient  true      300       0.1   12       -
                run-d  QUEUED     q-learning       -         300       0.2   -        -
                """);
        // Runs a to c agree on episodes (300, 300 as a long and as an int are one value).
        assertThat(master.compare("run-a", "run-c", "run-d").getCommonParameters()).containsExactly(Map.entry("episodes", 300));
    }

    @Test
    void oddMetricsNeitherBreakTheTableNorTheBestRun() throws Exception {
        for (String id : List.of("odd-1", "odd-2", "odd-3")) {
            master.submit(TaskSpec.python("train.py").taskId(id).build());
        }
        // 1e400 is beyond a double (infinite); "" is a metric name a script may print (with an
        // empty value: a column of width 0 before); a text value with a line break; a list.
        run("odd-1", TaskState.SUCCEEDED, 0, "{\"loss\":1e400,\"\":\"\",\"note\":\"two\\nlines\",\"curve\":[1,2]}");
        run("odd-2", TaskState.SUCCEEDED, 0, "{\"loss\":0.5,\"\":\"\"}");
        run("odd-3", TaskState.SUCCEEDED, 0, "{\"loss\":-1e400}");
        RunComparison c = master.compare("odd-1", "odd-2", "odd-3");
        assertThat(c.best("loss", true)).get().extracting(RunComparison.Run::getTaskId).isEqualTo("odd-1");
        assertThat(c.best("loss", false)).get().extracting(RunComparison.Run::getTaskId).isEqualTo("odd-3");
        assertThat(c.toTable()).isEqualTo("""
                3 runs of train.py; the same in all: (no parameter)
                task   state         curve   loss       note
                odd-1  SUCCEEDED     [1, 2]  Infinity   two\\nlines
                odd-2  SUCCEEDED     -       0.5        -
                odd-3  SUCCEEDED  -  -       -Infinity  -
                """);
        Object curve = c.getRuns().get(0).getFinalMetrics().get("curve");
        assertThat(curve).isInstanceOf(List.class);
        assertThatThrownBy(() -> ((List<Object>) curve).add(3)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void badRequestsAreRefusedWithTheReason() throws Exception {
        master.submit(TaskSpec.python("train.py").taskId("run-a").build());
        assertThatThrownBy(() -> master.compare(List.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("compare takes 1 to 1000 task ids, not 0");
        assertThatThrownBy(() -> master.compare("run-a", "run-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("task id run-a is given twice");
        assertThatThrownBy(() -> master.compare("run-a", "bad id")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> master.compare("run-a", null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> master.compare("run-a", "no-such-run")).isInstanceOf(TaskNotFoundException.class)
                .hasMessageContaining("no-such-run");
        RunComparison one = master.compare("run-a");
        assertThat(one.getVaryingParameters()).isEmpty();
        assertThat(one.toTable()).isEqualTo("""
                1 run of train.py; the same in all: (no parameter)
                task   state
                run-a  QUEUED
                """);
    }
}
