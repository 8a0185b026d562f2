package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.lease;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The core survives an emptied script cache (NOSCRIPT) and a crash and restart of Redis. */
class ScriptCacheAndRestartIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private RedisCommands<String, String> commands;

    @AfterEach
    void close() {
        if (core != null) {
            core.close();
        }
    }

    private TaskRecord record(String id) {
        return CoreFixture.record(core, id);
    }

    /**
     * Empties Redis's script cache, checks that the script is gone, runs the operation and checks
     * that the EVAL fallback cached the script again.
     */
    private <T> T afterFlush(String script, Supplier<T> operation) {
        return afterFlush(LuaScript.load(script), operation);
    }

    private <T> T afterFlush(LuaScript loaded, Supplier<T> operation) {
        String script = loaded.getName();
        String sha = loaded.getSha();
        assertThat(commands.scriptFlush()).isEqualTo("OK");
        assertThat(commands.scriptExists(sha)).as("%s cached after SCRIPT FLUSH", script).containsExactly(false);
        T result = operation.get();
        assertThat(commands.scriptExists(sha)).as("%s cached again by the fallback", script).containsExactly(true);
        return result;
    }

    @Test
    void everyOperationWorksAfterScriptFlush(RedisClient client, RedisNamespace ns, RedisCommands<String, String> commands) {
        this.commands = commands;
        core = LeaseCore.create(client, CoreFixture.leases(ns, Duration.ofSeconds(10), Duration.ofSeconds(10),
                Duration.ofMillis(300)));

        for (String id : List.of("t1", "t2", "t3")) {
            SubmitResult submitted = afterFlush("submit", () -> join(core.submit(task(id, 1))));
            assertThat(submitted.isCreated()).isTrue();
        }
        RequeueResult registered = afterFlush("register", () -> join(core.register(worker("w1", "s1", 0, 1))));
        assertThat(registered.getRequeued()).isEmpty();
        // A worker that holds nothing renews with the bare script.
        assertThat(afterFlush(LuaScript.loadBare("renew"), () -> join(core.heartbeat("w1", "s1", List.of()))).getStatus())
                .isEqualTo(HeartbeatStatus.OK);

        ClaimResult claim = afterFlush("claim", () -> join(core.claim("w1", "s1", 1, requestId())));
        assertThat(claim.getAssignments()).extracting(Assignment::getTaskId).containsExactly("t1");
        TaskLease t1 = lease(claim.getAssignments().get(0));
        assertThat(afterFlush("ack", () -> join(core.acknowledge(t1, "w1", "s1"))).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        HeartbeatResult hb = afterFlush("heartbeat", () -> join(core.heartbeat("w1", "s1", List.of(t1))));
        assertThat(hb.getRenewedTasks()).isEqualTo(1);
        assertThat(afterFlush("finish", () -> join(core.finish(t1, "w1", "s1", TaskState.SUCCEEDED, 0, null, null)))
                .getStatus()).isEqualTo(WriteStatus.APPLIED);
        assertThat(record("t1").getState()).isEqualTo(TaskState.SUCCEEDED);

        assertThat(afterFlush("cancel", () -> join(core.cancel("t2", "not needed"))).getStatus())
                .isEqualTo(CancelStatus.CANCELLED);
        assertThat(record("t2").getState()).isEqualTo(TaskState.CANCELLED);

        // t3 is claimed and never acknowledged: the reaper, run after a flush each time, takes it back.
        Assignment t3 = afterFlush("claim", () -> join(core.claim("w1", "s1", 1, requestId()))).getAssignments().get(0);
        assertThat(t3.getTaskId()).isEqualTo("t3");
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
                afterFlush("reap", () -> join(core.reap())).getRequeued().contains("t3"));
        assertThat(record("t3").getState()).isEqualTo(TaskState.QUEUED);

        List<WorkerInfo> workers = afterFlush("workers", () -> join(core.listWorkers()));
        assertThat(workers).hasSize(1);
        assertThat(workers.get(0).getState()).isEqualTo(WorkerState.IDLE);
        assertThat(workers.get(0).getFreeGpuIds()).containsExactly(0, 1);
        assertThat(workers.get(0).getTasks()).isEmpty();
        assertThat(join(core.queueDepth())).isEqualTo(1);

        // t3 is queued again, older than t4: the claim in the submission's run takes both, in order.
        SubmitAndClaimResult both = afterFlush("submit_claim", () -> join(core.submitAndClaim(task("t4", 0),
                List.of(new WorkerSession("w1", "s1")), 2, requestId(), null)));
        assertThat(both.getSubmit().isCreated()).isTrue();
        assertThat(both.getClaims().get(0).getAssignments()).extracting(Assignment::getTaskId).containsExactly("t3", "t4");
        assertThat(join(core.queueDepth())).isZero();
    }

    @Test
    void stateSurvivesAKillAndRestartOfRedis(TestRedis server, RedisClient client, RedisNamespace ns,
                                             RedisCommands<String, String> commands) {
        server.assumeControllable();
        this.commands = commands;
        core = LeaseCore.create(client, CoreFixture.leases(ns, Duration.ofSeconds(30), Duration.ofSeconds(60),
                Duration.ofSeconds(60)));
        join(core.register(new WorkerRegistration("w1", "s1", Map.of(), 32, 0, List.of(0, 1, 2, 3))));

        // Tasks in every state.
        join(core.submit(task("done", 1)));
        join(core.submit(task("failed", 1)));
        join(core.submit(task("cancelled", 1)));
        List<Assignment> ended = join(core.claim("w1", "s1", 2, requestId())).getAssignments();
        assertThat(ended).extracting(Assignment::getTaskId).containsExactly("done", "failed");
        join(core.acknowledge(lease(ended.get(0)), "w1", "s1"));
        join(core.finish(lease(ended.get(0)), "w1", "s1", TaskState.SUCCEEDED, 0, null, "{\"reward\":1.5}"));
        join(core.finish(lease(ended.get(1)), "w1", "s1", TaskState.FAILED, 2, "boom", null));
        join(core.cancel("cancelled", "no longer needed"));
        join(core.submit(task("running", 2)));
        join(core.submit(task("assigned", 1)));
        List<Assignment> held = join(core.claim("w1", "s1", 2, requestId())).getAssignments();
        assertThat(held).extracting(Assignment::getTaskId).containsExactly("running", "assigned");
        TaskLease running = lease(held.get(0));
        TaskLease assigned = lease(held.get(1));
        join(core.acknowledge(running, "w1", "s1"));
        List<String> ids = new ArrayList<>(List.of("done", "failed", "cancelled", "running", "assigned"));
        for (int i = 0; i < 10; i++) {
            String id = "q-" + i;
            ids.add(id);
            join(core.submit(TaskDefinition.builder(id).priority((i * 7) % 5).build()));
        }

        Map<String, String> before = new LinkedHashMap<>();
        for (String id : ids) {
            before.put(id, record(id).toString());
        }
        String queueKey = ns.hashTag() + ":queue";
        List<String> queueOrder = commands.zrange(queueKey, 0, -1);
        assertThat(queueOrder).hasSize(10).isNotEqualTo(ids.subList(5, 15)); // priority, not submission order
        String epochCounter = commands.get(ns.hashTag() + ":epoch");
        long lastEpoch = Math.max(running.getEpoch(), assigned.getEpoch());
        assertThat(Long.parseLong(epochCounter)).isEqualTo(lastEpoch);
        String workerBefore = CoreFixture.workerInfo(core, "w1").toString();
        long events = commands.xlen(ns.hashTag() + ":events");

        server.kill();
        server.restart();

        // Lettuce reconnects by itself; the first command may wait for that.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> join(core.queueDepth()) == 10);
        for (String id : ids) {
            assertThat(record(id).toString()).as("record of %s after restart", id).isEqualTo(before.get(id));
        }
        assertThat(commands.zrange(queueKey, 0, -1)).isEqualTo(queueOrder);
        assertThat(commands.get(ns.hashTag() + ":epoch")).isEqualTo(epochCounter);
        assertThat(commands.xlen(ns.hashTag() + ":events")).isEqualTo(events);
        assertThat(CoreFixture.workerInfo(core, "w1").toString()).isEqualTo(workerBefore);

        // The leases still hold: the worker renews both, acknowledges one and finishes the other.
        HeartbeatResult hb = join(core.heartbeat("w1", "s1", List.of(running, assigned)));
        assertThat(hb.getStatus()).isEqualTo(HeartbeatStatus.OK);
        assertThat(hb.getRenewedTasks()).isEqualTo(2);
        assertThat(hb.getRevokedTasks()).isEmpty();
        assertThat(join(core.acknowledge(assigned, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.APPLIED);
        assertThat(join(core.finish(running, "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        assertThat(join(core.reap()).getRequeued()).isEmpty();

        // The queue order and the epoch counter: claims come in the old order with larger epochs.
        List<Assignment> next = join(core.claim("w1", "s1", 10, requestId())).getAssignments();
        assertThat(next).extracting(Assignment::getTaskId).isEqualTo(queueOrder);
        long previous = lastEpoch;
        for (Assignment a : next) {
            assertThat(a.getEpoch()).as("epoch of %s", a.getTaskId()).isGreaterThan(previous);
            previous = a.getEpoch();
        }
        assertThat(join(core.queueDepth())).isZero();
    }
}
