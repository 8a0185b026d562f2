package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskIdConflictException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Submitting under an existing task id: the same spec again gets the existing task back (a
 * submission whose answer was lost may be repeated); a different one is refused with what
 * differs, and changes nothing, so no run's parameters are silently dropped. A real master on
 * real Redis, no workers: tasks stay queued.
 */
class SubmitByIdIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    @TempDir
    Path dir;

    private SchedulerMaster master;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) {
        master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret("submit-by-id-test-shared-secret".getBytes(StandardCharsets.UTF_8))
                .coreOptions(CoreOptions.builder().namespace(ns.name()).build()).logDirectory(dir.resolve("logs"))
                .masterId("m1").build().start();
    }

    @AfterEach
    void stop() {
        master.close();
    }

    private static TaskSpec.Builder spec() {
        return TaskSpec.python("train.py").taskId("run-7").param("algo", "ppo").param("lr", 0.1).param("seed", 7)
                .env("MODE", "fast").gpus(0).owner("alice").timeout(Duration.ofMinutes(5));
    }

    @Test
    void theSameSpecAgainGetsTheExistingTaskWhateverItsTraceId() {
        TaskHandle first = master.submit(spec().traceId("trace-first").build());
        TaskHandle again = master.submit(spec().build()); // a new random trace id
        TaskHandle defaultsSpelledOut = master.submit(spec().maxAttempts(master.getTask("run-7").orElseThrow()
                .getMaxAttempts()).build());

        assertThat(again.getTaskId()).isEqualTo(first.getTaskId()).isEqualTo(defaultsSpelledOut.getTaskId());
        assertThat(master.queueDepth()).isEqualTo(1);
        TaskRecord record = first.getRecord();
        assertThat(record.getTraceId()).as("unchanged").isEqualTo("trace-first");
        assertThat(record.getState()).isEqualTo(TaskState.QUEUED);
    }

    @Test
    void aDifferentSpecUnderAnExistingIdIsRefusedWithWhatDiffersAndChangesNothing() {
        master.submit(spec().build());
        String specBefore = master.getTask("run-7").orElseThrow().getSpecJson();

        assertThatThrownBy(() -> master.submit(spec().param("lr", 0.2).build()))
                .isInstanceOfSatisfying(TaskIdConflictException.class, e -> {
                    assertThat(e.getTaskId()).isEqualTo("run-7");
                    assertThat(e.getDifference()).isEqualTo("parameters.lr: existing 0.1, submitted 0.2");
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e).hasMessageContaining("task 'run-7' exists with a different spec");
                });
        assertThatThrownBy(() -> master.submit(spec().param("extra", true).build()))
                .isInstanceOfSatisfying(TaskIdConflictException.class, e -> assertThat(e.getDifference())
                        .isEqualTo("parameters.extra: existing none, submitted true"));
        assertThatThrownBy(() -> master.submit(spec().gpus(1).env("MODE", "slow").build()))
                .isInstanceOfSatisfying(TaskIdConflictException.class, e -> assertThat(e.getDifference())
                        .isEqualTo("gpus: existing 0, submitted 1; environment.MODE: existing \"fast\", submitted \"slow\""));
        assertThatThrownBy(() -> master.submit(TaskSpec.python("eval.py").taskId("run-7").param("algo", "ppo")
                .param("lr", 0.1).param("seed", 7).env("MODE", "fast").owner("alice").timeout(Duration.ofMinutes(5)).build()))
                .isInstanceOfSatisfying(TaskIdConflictException.class, e -> assertThat(e.getDifference())
                        .isEqualTo("script: existing \"train.py\", submitted \"eval.py\""));
        assertThatThrownBy(() -> master.submitAsync(spec().maxAttempts(9).build()).join())
                .hasCauseInstanceOf(TaskIdConflictException.class);

        assertThat(master.getTask("run-7").orElseThrow().getSpecJson()).isEqualTo(specBefore);
        assertThat(master.queueDepth()).isEqualTo(1);
    }

    @Test
    void aRepeatThroughAMasterWithOtherDefaultLimitsGetsTheSameTask(TestRedis redis, RedisNamespace ns) {
        TaskHandle first = master.submit(spec().build());
        int defaultAttempts = first.getRecord().getMaxAttempts();
        try (SchedulerMaster other = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret("submit-by-id-test-shared-secret".getBytes(StandardCharsets.UTF_8))
                .coreOptions(CoreOptions.builder().namespace(ns.name()).maxAttempts(defaultAttempts + 2)
                        .maxLeaseLosses(first.getRecord().getMaxLeaseLosses() + 1).build())
                .logDirectory(dir.resolve("logs-other")).masterId("m2").standbyOnly(true).build().start()) {
            assertThat(other.submit(spec().build()).getTaskId()).isEqualTo("run-7");
            assertThatThrownBy(() -> other.submit(spec().maxAttempts(defaultAttempts + 2).build()))
                    .isInstanceOfSatisfying(TaskIdConflictException.class, e -> assertThat(e.getDifference())
                            .isEqualTo("maxAttempts: existing " + defaultAttempts + ", submitted " + (defaultAttempts + 2)));
        }
        assertThat(master.queueDepth()).isEqualTo(1);
    }

    @Test
    void parametersInAnotherOrderAreTheSameTaskAnotherOwnerIsNot() {
        master.submit(spec().build());
        TaskSpec reordered = TaskSpec.python("train.py").taskId("run-7").param("seed", 7).param("lr", 0.1)
                .param("algo", "ppo").env("MODE", "fast").gpus(0).owner("alice").timeout(Duration.ofMinutes(5)).build();
        assertThat(master.submit(reordered).getTaskId()).isEqualTo("run-7");
        assertThatThrownBy(() -> master.submit(spec().owner("bob").build()))
                .isInstanceOfSatisfying(TaskIdConflictException.class, e -> assertThat(e.getDifference())
                        .as("once, not again for the spec's copy").isEqualTo("owner: existing alice, submitted bob"));
    }

    @Test
    void theSameSpecAfterTheTaskEndedGetsTheEndedTaskNotASecondRun() {
        TaskHandle first = master.submit(spec().build());
        assertThat(first.cancel()).isTrue();
        TaskHandle again = master.submit(spec().build());
        assertThat(again.getState()).isEqualTo(TaskState.CANCELLED);
        assertThat(master.queueDepth()).isZero();
    }

    @Test
    void lookingUpAnInvalidIdIsAClearErrorAsForAHandleNotAnEmptyAnswer() {
        assertThatThrownBy(() -> master.getTask(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task id");
        assertThatThrownBy(() -> master.getTask("bad id")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task id");
        assertThatThrownBy(() -> master.task("bad id")).isInstanceOf(IllegalArgumentException.class);
        assertThat(master.getTask("no-such-task")).isEmpty();
    }
}
