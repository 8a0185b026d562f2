package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rlscheduler.core.IllegalTaskStateException;
import io.rlscheduler.core.SchedulerTimeoutException;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.lease;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a failed call of the core reports, against a real Redis: a move the scripts' transition
 * table refuses is an {@link IllegalTaskStateException} with the task, both states and the epoch,
 * both where a script answers the refusal as its whole reply and where it answers it as one item
 * of a batched answer; a call Redis does not answer in time is a {@link SchedulerTimeoutException}.
 * The refusals are driven by a test script (test_move.lua) that moves a task with lib.lua's
 * transition(): the lease scripts check a task's state before they move it, so none of them
 * reaches the refusal with a record they wrote.
 */
class FailureTypesIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final LuaScript MOVE = LuaScript.load("test_move");

    private LeaseCore core;
    private RedisClient client;
    private RedisNamespace ns;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = CoreFixture.core(client, ns);
        this.client = client;
        this.ns = ns;
    }

    @AfterEach
    void close() {
        core.close();
    }

    /** Runs test_move.lua for {@code taskId}; a failed run throws CompletionException with its cause as LuaScript.run left it. */
    private String move(String taskId, TaskState to, String refusal) {
        try (var connection = client.connect()) {
            return join(MOVE.run(connection.async(), new Keys(ns.name()).core(), taskId, to.name(), refusal));
        }
    }

    /** A task run to SUCCEEDED through claim, ack and finish; returns its lease. */
    private TaskLease succeeded(String taskId) {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task(taskId, 1)));
        TaskLease lease = lease(join(core.claim("w1", "s1", 1, requestId())).getAssignments().get(0));
        join(core.acknowledge(lease, "w1", "s1"));
        assertThat(join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).isAccepted()).isTrue();
        return lease;
    }

    @Test
    void aRefusedMoveAnsweredAsTheScriptsReplyFailsTheRunWithIllegalTaskStateException() {
        TaskLease lease = succeeded("t1");
        TaskRecord before = CoreFixture.record(core, "t1");

        assertThatThrownBy(() -> move("t1", TaskState.RUNNING, "run"))
                .isInstanceOf(CompletionException.class).cause()
                .isInstanceOfSatisfying(IllegalTaskStateException.class, e -> {
                    assertThat(e.getTaskId()).isEqualTo("t1");
                    assertThat(e.getFrom()).isEqualTo(TaskState.SUCCEEDED);
                    assertThat(e.getTo()).isEqualTo(TaskState.RUNNING);
                    assertThat(e.getEpoch()).isEqualTo(lease.getEpoch());
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e).hasMessageContaining("'t1'").hasMessageContaining("SUCCEEDED to RUNNING");
                });
        assertThat(CoreFixture.record(core, "t1").toString()).as("nothing written").isEqualTo(before.toString());
        // A move the table allows goes through the same script.
        join(core.submit(task("t2", 0)));
        assertThat(move("t2", TaskState.CANCELLED, "run")).contains("\"state\":\"CANCELLED\"");
    }

    @Test
    void aRefusedMoveAnsweredAsOneItemOfABatchedAnswerIsIllegalTaskStateException() {
        TaskLease lease = succeeded("t1");
        String reply = move("t1", TaskState.FAILED, "item");
        var item = Replies.parse(reply).get(0);
        assertThat(item.get("r").asText()).isEqualTo("ERROR");

        // As LeaseCore reads each answer of ack and finish.
        assertThatThrownBy(() -> Replies.write(item)).isInstanceOfSatisfying(IllegalTaskStateException.class, illegal -> {
            assertThat(illegal.getTaskId()).isEqualTo("t1");
            assertThat(illegal.getFrom()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(illegal.getTo()).isEqualTo(TaskState.FAILED);
            assertThat(illegal.getEpoch()).isEqualTo(lease.getEpoch());
            assertThat(illegal.isRetryable()).isFalse();
        });
        var badArgument = Replies.parse("{\"r\":\"ERROR\",\"error\":\"BAD_ARGUMENT final state must be terminal, was RUNNING\"}");
        assertThatThrownBy(() -> Replies.write(badArgument))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("final state must be terminal, was RUNNING");
    }

    @Test
    void aStoredStateTheTableDoesNotKnowIsRefusedAsAnIllegalMove() {
        join(core.submit(task("t1", 0)));
        try (var connection = client.connect()) {
            var sync = connection.sync();
            String stored = sync.hget(ns.key("tasks"), "t1");
            sync.hset(ns.key("tasks"), "t1", stored.replace("\"state\":\"QUEUED\"", "\"state\":\"PAUSED\""));
        }
        assertThatThrownBy(() -> move("t1", TaskState.CANCELLED, "run")).cause()
                .isInstanceOfSatisfying(IllegalTaskStateException.class, e -> {
                    assertThat(e.getTaskId()).isEqualTo("t1");
                    assertThat(e.getFrom()).isNull();
                    assertThat(e.getTo()).isEqualTo(TaskState.CANCELLED);
                    assertThat(e.getEpoch()).isZero();
                    assertThat(e.getCause()).hasMessageContaining("PAUSED -> CANCELLED");
                });
    }

    @Test
    void callsRedisDoesNotAnswerInTimeFailWithSchedulerTimeoutException(TestRedis redis) {
        Duration timeout = Duration.ofMillis(300);
        try (FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort())) {
            RedisClient slow = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(proxy.getPort())
                    .withTimeout(timeout).build());
            LeaseCore proxied = LeaseCore.create(slow, CoreFixture.shortLeases(ns));
            try {
                join(proxied.submit(task("t1", 0)));
                proxy.blackhole();
                for (CompletableFuture<?> call : List.of(proxied.claim("w1", "s1", 1, requestId()),
                        proxied.submit(task("t2", 0)), proxied.getTask("t1"), proxied.listTasks(TaskState.QUEUED, 0, 10),
                        proxied.queueDepth())) {
                    assertThatThrownBy(() -> join(call)).cause()
                            .isInstanceOfSatisfying(SchedulerTimeoutException.class, e -> {
                                assertThat(e.isRetryable()).isTrue();
                                assertThat(e.getTimeout()).isEqualTo(timeout);
                                assertThat(e.getCause()).isInstanceOf(io.lettuce.core.RedisCommandTimeoutException.class);
                            });
                }
                proxy.pass();
                assertThat(join(proxied.getTask("t1"))).as("answers again once Redis does").isPresent();
            } finally {
                proxied.close();
                slow.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }
}
