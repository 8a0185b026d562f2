package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.internal.log.LogFixtures;
import io.rlscheduler.testkit.Gate;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ends a master did not see. A master whose event thread a task listener held while the stream
 * was trimmed past it: the result of a task that ended meanwhile still completes, the listeners
 * are told of the gap, and health counts it. And a master started after a task ended: a follow
 * of its log still ends. A real master on real Redis; no workers (the test makes their calls).
 */
class MasterEventGapIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    @TempDir
    Path dir;

    @Test
    void aResultWhoseEndEventWasTrimmedUnreadStillCompletesAndHealthCountsTheGap(TestRedis redis, RedisNamespace ns)
            throws Exception {
        try (SchedulerMaster master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret("event-gap-test-shared-secret".getBytes(StandardCharsets.UTF_8))
                .coreOptions(CoreOptions.builder().namespace(ns.name()).eventStreamMaxLength(100).build())
                .logDirectory(dir.resolve("logs")).masterId("m1").build().start()) {
            TaskHandle waited = master.submit(TaskSpec.python("train.py").taskId("waited").build());
            CompletableFuture<TaskResult> result = waited.result();

            Gate gate = new Gate();
            List<TaskEvent> seen = new CopyOnWriteArrayList<>();
            master.addTaskListener(event -> {
                seen.add(event);
                if ("hold".equals(event.getTaskId())) {
                    gate.hold();
                }
            });
            master.submit(TaskSpec.python("train.py").taskId("hold").build());
            assertThat(gate.awaitHeld(java.time.Duration.ofSeconds(30))).isTrue();
            assertThat(waited.cancel()).isTrue();
            for (int i = 0; i < 400; i++) {
                master.submit(TaskSpec.python("train.py").taskId("filler-" + i).build()); // an entry each
            }
            assertThat(result).as("its end event is behind the held listener").isNotDone();
            assertThat(master.health().getEventGaps()).isZero();
            gate.release();

            assertThat(result.get(30, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.CANCELLED);
            assertThat(master.health().getEventGaps()).isEqualTo(1);
            // The listeners get the gap after the master has acted on it, and the events after it later still.
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> seen.stream().anyMatch(e -> "filler-399".equals(e.getTaskId())));
            assertThat(seen).filteredOn(e -> e.getKind() == TaskEvent.Kind.GAP).singleElement()
                    .satisfies(gap -> assertThat(gap.getFields()).containsKeys("after", "next"));
            assertThat(seen).as("the end's own event was trimmed unread")
                    .noneMatch(e -> "waited".equals(e.getTaskId()) && e.getTo() == TaskState.CANCELLED);
        }
    }

    /**
     * A master started on a log directory whose file holds an attempt that ended while no master
     * ran (written here by a log manager of an earlier run): following the task through the API
     * replays its lines and ends from the task's record, complete, instead of waiting for good.
     */
    @Test
    void followingALogWhoseTaskEndedWhileNoMasterRanEndsCompleteFromTheRecord(TestRedis redis, RedisNamespace ns)
            throws Exception {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).taskLease(java.time.Duration.ofSeconds(2))
                .livenessLease(java.time.Duration.ofSeconds(2)).heartbeatInterval(java.time.Duration.ofMillis(200)).build();
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.getUri());
        io.rlscheduler.core.internal.LeaseCore core = io.rlscheduler.core.internal.LeaseCore.create(client, options);
        try {
            core.register(new io.rlscheduler.core.internal.WorkerRegistration("w1", "s1", java.util.Map.of(), 8, 1L << 30,
                    List.of())).get(10, TimeUnit.SECONDS);
            core.submit(io.rlscheduler.core.internal.TaskDefinition.builder("t1").build()).get(10, TimeUnit.SECONDS);
            io.rlscheduler.core.internal.Assignment a = core.claim("w1", "s1", 1, "c-1").get(10, TimeUnit.SECONDS)
                    .getAssignments().get(0);
            io.rlscheduler.core.TaskLease lease = new io.rlscheduler.core.TaskLease("t1", a.getEpoch());
            assertThat(core.acknowledge(lease, "w1", "s1").get(10, TimeUnit.SECONDS).isAccepted()).isTrue();
            try (io.rlscheduler.master.internal.log.TaskLogManager earlier =
                         new io.rlscheduler.master.internal.log.TaskLogManager(dir.resolve("logs"))) {
                earlier.open("t1", "trace-1", a.getEpoch(), a.getAttempt()).get(10, TimeUnit.SECONDS);
                assertThat(earlier.appendChunks("t1", a.getEpoch(), LogFixtures.lines(1, 2)).get(10, TimeUnit.SECONDS))
                        .isEqualTo(2);
            }
            long ended = System.nanoTime();
            assertThat(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, 2)
                    .get(10, TimeUnit.SECONDS).isAccepted()).isTrue();

            try (SchedulerMaster master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                    .secret("event-gap-test-shared-secret".getBytes(StandardCharsets.UTF_8)).coreOptions(options)
                    .logDirectory(dir.resolve("logs")).masterId("m1").build().start()) {
                List<LogRecord> records = new CopyOnWriteArrayList<>();
                LogFollow follow = master.task("t1").followLogs(records::add);
                LogRecord end = follow.whenEnded().get(30, TimeUnit.SECONDS);
                // The worker recorded 2 lines with the end, and both are here: the record alone
                // completes the log, at once (with a line missing it would wait for it, then end
                // incomplete; TaskWatcherIT covers both).
                assertThat(System.nanoTime() - ended).as("without waiting out a grace")
                        .isLessThan(TimeUnit.MILLISECONDS.toNanos(4_000));
                assertThat(end.isComplete()).isTrue();
                assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
                assertThat(records).extracting(LogRecord::getText).startsWith("line-1", "line-2");
            }
        } finally {
            core.close();
            client.shutdown(java.time.Duration.ZERO, java.time.Duration.ofSeconds(2));
        }
    }
}
