package io.rlscheduler.master.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.internal.log.LogFixtures;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher ends a task's log from the event of its end: at the line count its worker recorded
 * (complete once the log holds it, incomplete when the lines do not come within the log manager's
 * patience), or at once, incomplete, when nobody recorded one. A master that missed the event
 * (trimmed, or it was down) ends the log from the record. Real Redis and lease core; the worker's
 * calls are made here directly, as a worker makes them.
 */
class TaskWatcherIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private RedisClient client;
    private LeaseCore core;
    private TaskLogManager logs;
    private TaskWatcher watcher;
    private LeaderStatus leader;
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) throws Exception {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofMillis(100))
                .livenessLease(Duration.ofMillis(500)).taskLease(Duration.ofMillis(500))
                .eventStreamMaxLength(100) // the least: a held watcher falls behind the trim after a few hundred entries
                .build();
        client = RedisClient.create(redis.getUri());
        core = LeaseCore.create(client, options);
        logs = newLogs();
        Dispatcher dispatcher = new Dispatcher(core, () -> null, new WorkerRegistry(), starts -> { }, 16);
        watcher = new TaskWatcher(core, dispatcher, logs);
        watcher.addListener(event -> seen.add(event.getTaskId() + ":" + event.getTo()));
        watcher.start();
        core.register(new WorkerRegistration("w1", "s1", Map.of(), 8, 1L << 30, List.of())).get(30, TimeUnit.SECONDS);
        leader = core.acquireLeadership("m1", "127.0.0.1:1", Duration.ofSeconds(30)).get(30, TimeUnit.SECONDS);
    }

    /** A log manager that waits twice the task lease, 1 s, for an attempt's missing last lines. */
    private TaskLogManager newLogs() {
        return new TaskLogManager(dir, TaskLogManager.Limits.defaults().withLinePatience(PATIENCE));
    }

    private static final Duration PATIENCE = Duration.ofSeconds(1);

    @AfterEach
    void stop() {
        watcher.close();
        logs.close();
        core.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    /** A started watcher of a master that does not lead, on its own log manager. */
    private TaskWatcher startedStandby(TaskLogManager standbyLogs) {
        TaskWatcher standby = new TaskWatcher(core, new Dispatcher(core, () -> null, new WorkerRegistry(),
                starts -> { }, 16), standbyLogs, () -> false);
        standby.start();
        return standby;
    }

    /** Submits, claims and acknowledges a task as worker w1, and opens its log as the dispatcher does. */
    private TaskLease running(String taskId) throws Exception {
        core.submit(TaskDefinition.builder(taskId).build()).get(30, TimeUnit.SECONDS);
        await().atMost(WAIT).until(() -> seen.contains(taskId + ":" + TaskState.QUEUED)); // the watcher follows
        Assignment a = core.claim("w1", "s1", 1, "c-" + taskId, leader).get(30, TimeUnit.SECONDS).getAssignments().get(0);
        TaskLease lease = new TaskLease(taskId, a.getEpoch());
        assertThat(core.acknowledge(lease, "w1", "s1").get(30, TimeUnit.SECONDS).isAccepted()).isTrue();
        LogFixtures.await(logs.open(taskId, "tr", a.getEpoch(), a.getAttempt()));
        return lease;
    }

    /** Records the end as a worker does, with the attempt's line count (-1: not known). */
    private void finish(TaskLease lease, long lines) throws Exception {
        assertThat(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, lines)
                .get(30, TimeUnit.SECONDS).isAccepted()).isTrue();
    }

    @Test
    void theResultOfATaskThatDoesNotExistFailsInsteadOfWaitingForGood() throws Exception {
        java.util.concurrent.CompletableFuture<io.rlscheduler.core.TaskRecord> done = watcher.whenDone("no-such-task");
        org.assertj.core.api.Assertions.assertThat(done).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOf(io.rlscheduler.core.TaskNotFoundException.class)
                .withMessageContaining("no-such-task");
        // A task that exists still waits for its end.
        core.submit(TaskDefinition.builder("exists-1").build()).get(10, TimeUnit.SECONDS);
        java.util.concurrent.CompletableFuture<io.rlscheduler.core.TaskRecord> pending = watcher.whenDone("exists-1");
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !pending.isDone());
    }

    @Test
    void anEndItsWorkerRecordedEndsTheLogCompleteAtTheLineItsEventNames() throws Exception {
        TaskLease lease = running("t1");
        assertThat(LogFixtures.await(logs.appendChunks("t1", lease.getEpoch(), LogFixtures.lines(1, 3)))).isEqualTo(3);
        LogFollow follow = logs.follow("t1", record -> { });
        long before = System.nanoTime();
        finish(lease, 3);

        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).isTrue();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(System.nanoTime() - before).as("from the event, not after a grace")
                .isLessThan(PATIENCE.toNanos());
        assertThat(LogFixtures.fileLines(dir.resolve("t1.log"))).last().asString()
                .isEqualTo("##RLS_END state=SUCCEEDED complete=true last=3");
    }

    @Test
    void lastLinesThatComeAfterTheEventCompleteTheLogAndOnesThatNeverComeEndItIncompleteAfterThePatience()
            throws Exception {
        // The worker records the end, then sends its last lines: the event may come first.
        TaskLease late = running("late-lines");
        assertThat(LogFixtures.await(logs.appendChunks("late-lines", late.getEpoch(), LogFixtures.lines(1, 3)))).isEqualTo(3);
        LogFollow lateFollow = logs.follow("late-lines", record -> { });
        finish(late, 5);
        await().atMost(WAIT).until(() -> seen.contains("late-lines:" + TaskState.SUCCEEDED));
        assertThat(LogFixtures.await(logs.appendChunks("late-lines", late.getEpoch(), LogFixtures.lines(4, 5)))).isEqualTo(5);
        // The worker died after recording the end: lines 4 and 5 never come.
        TaskLease lost = running("lost-lines");
        assertThat(LogFixtures.await(logs.appendChunks("lost-lines", lost.getEpoch(), LogFixtures.lines(1, 3)))).isEqualTo(3);
        LogFollow lostFollow = logs.follow("lost-lines", record -> { });
        long before = System.nanoTime();
        finish(lost, 5);

        LogRecord lateEnd = LogFixtures.await(lateFollow.whenEnded());
        assertThat(lateEnd.isComplete()).isTrue();
        assertThat(LogFixtures.fileLines(dir.resolve("late-lines.log"))).last().asString()
                .isEqualTo("##RLS_END state=SUCCEEDED complete=true last=5");
        LogRecord lostEnd = LogFixtures.await(lostFollow.whenEnded());
        assertThat(System.nanoTime() - before).as("not before the patience").isGreaterThanOrEqualTo(PATIENCE.toNanos());
        assertThat(lostEnd.isComplete()).isFalse();
        assertThat(lostEnd.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(lostEnd.getNote()).contains("lines up to 5 did not come within PT1S").contains("holds lines up to 3");
    }

    /**
     * Two masters share the log directory: the leader ends the log from the event at once; the
     * other, which does not lead, ends its own follower only twice the task lease later, from the
     * leader's end in the file, and writes no second end.
     */
    @Test
    void aMasterThatDoesNotLeadEndsASharedLogLaterFromTheLeadersEndAndWritesNoSecond() throws Exception {
        try (TaskLogManager standbyLogs = newLogs()) {
            TaskWatcher standby = startedStandby(standbyLogs);
            try {
                TaskLease lease = running("shared");
                assertThat(LogFixtures.await(logs.appendChunks("shared", lease.getEpoch(), LogFixtures.lines(1, 3))))
                        .isEqualTo(3);
                LogFollow atLeader = logs.follow("shared", record -> { });
                LogFollow atStandby = standbyLogs.follow("shared", record -> { });
                long before = System.nanoTime();
                finish(lease, 3);

                assertThat(LogFixtures.await(atLeader.whenEnded()).isComplete()).isTrue();
                LogRecord standbyEnd = LogFixtures.await(atStandby.whenEnded());
                assertThat(System.nanoTime() - before).as("twice the task lease after the event")
                        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(1_000));
                assertThat(standbyEnd.isComplete()).isTrue();
                assertThat(LogFixtures.fileLines(dir.resolve("shared.log")))
                        .filteredOn(line -> line.startsWith("##RLS_END")).containsExactly(
                                "##RLS_END state=SUCCEEDED complete=true last=3");
            } finally {
                standby.close();
            }
        }
    }

    @Test
    void aFollowerOnAMasterThatDoesNotLeadGetsTheLeadersEndAndThatMasterWritesNone() throws Exception {
        try (TaskLogManager standbyLogs = newLogs()) {
            TaskWatcher standby = startedStandby(standbyLogs);
            try {
                TaskLease lease = running("shared");
                assertThat(LogFixtures.await(logs.appendChunks("shared", lease.getEpoch(), LogFixtures.lines(1, 3))))
                        .isEqualTo(3);
                watcher.close(); // the leader does not hear of the end: it writes it below, late
                finish(lease, 3);
                LogFollow atStandby = standbyLogs.follow("shared", record -> { });
                standby.followed("shared");
                await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() ->
                        !atStandby.whenEnded().isDone() && LogFixtures.fileLines(dir.resolve("shared.log")).stream()
                                .noneMatch(l -> l.startsWith("##RLS_END")));

                logs.complete("shared", lease.getEpoch(), 3, TaskState.SUCCEEDED); // as the leader's watcher does
                assertThat(LogFixtures.await(atStandby.whenEnded()).isComplete()).isTrue();
                await().during(Duration.ofMillis(1_500)).atMost(Duration.ofSeconds(5)).until(() ->
                        LogFixtures.fileLines(dir.resolve("shared.log")).stream().filter(l -> l.startsWith("##RLS_END"))
                                .toList().equals(List.of("##RLS_END state=SUCCEEDED complete=true last=3")));
            } finally {
                standby.close();
            }
        }
    }

    @Test
    void anEndNobodyRecordedALineCountForEndsTheLogAtOnceMarkedIncomplete() throws Exception {
        TaskLease lease = running("t1");
        assertThat(LogFixtures.await(logs.appendChunks("t1", lease.getEpoch(), LogFixtures.lines(1, 2)))).isEqualTo(2);
        LogFollow follow = logs.follow("t1", record -> { });
        finish(lease, -1);

        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).isFalse();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(end.getNote()).contains("without its worker recording where its log ends");
    }

    /**
     * The watcher's event thread is held (by a listener) while a running task ends, a waited-on
     * task is cancelled, and 400 more entries trim both ends from the stream unread: the gap makes
     * the watcher re-read those tasks, so the result completes and the log is ended from the
     * record, as when the event comes.
     */
    @Test
    void endsWhoseEventsWereTrimmedUnreadStillCompleteResultsAndEndLogs() throws Exception {
        TaskLease lease = running("t1");
        assertThat(LogFixtures.await(logs.appendChunks("t1", lease.getEpoch(), LogFixtures.lines(1, 2)))).isEqualTo(2);
        LogFollow follow = logs.follow("t1", record -> { });
        core.submit(TaskDefinition.builder("t2").build()).get(30, TimeUnit.SECONDS);
        java.util.concurrent.CompletableFuture<io.rlscheduler.core.TaskRecord> result = watcher.whenDone("t2");
        await().atMost(WAIT).until(() -> seen.contains("t2:" + TaskState.QUEUED));

        io.rlscheduler.testkit.Gate gate = new io.rlscheduler.testkit.Gate();
        watcher.addListener(event -> {
            if ("hold".equals(event.getTaskId())) {
                gate.hold();
            }
        });
        core.submit(TaskDefinition.builder("hold").build()).get(30, TimeUnit.SECONDS);
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        finish(lease, 2);
        core.cancel("t2", "not needed").get(30, TimeUnit.SECONDS);
        for (int i = 0; i < 400; i++) {
            core.submit(TaskDefinition.builder("filler-" + i).build()).get(30, TimeUnit.SECONDS); // an entry each
        }
        gate.release();

        assertThat(result.get(30, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.CANCELLED);
        assertThat(watcher.getGaps()).isEqualTo(1);
        assertThat(seen).as("the ends' own events were trimmed unread")
                .doesNotContain("t1:" + TaskState.SUCCEEDED, "t2:" + TaskState.CANCELLED);
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).as("the record names line 2, which the log holds").isTrue();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
    }

    /**
     * A master that was not running when tasks ended (here: its watcher closed, then a new
     * manager and watcher on the same log directory, as after a restart) learns their ends from
     * the records when followers come: a log that holds the recorded last line is completed; one
     * whose lines all went to another master (no file here) ends incomplete after the patience; a
     * log whose last line the worker resends after the restart is completed by it. A follower of a
     * task still running is left to wait.
     */
    @Test
    void aRestartedMasterEndsTheLogsOfTasksThatEndedWhileItWasDownFromTheirRecords() throws Exception {
        TaskLease lease = running("t1");
        TaskLease stillRunning = running("t2");
        TaskLease resent = running("t4");
        assertThat(LogFixtures.await(logs.appendChunks("t1", lease.getEpoch(), LogFixtures.lines(1, 2)))).isEqualTo(2);
        assertThat(LogFixtures.await(logs.appendChunks("t4", resent.getEpoch(), LogFixtures.lines(1, 1)))).isEqualTo(1);
        watcher.close();
        logs.close();
        finish(lease, 2); // while no master watches
        finish(resent, 2);
        // t3 ran and printed 5 lines, all to another master: this log directory has nothing of it.
        core.submit(TaskDefinition.builder("t3").build()).get(30, TimeUnit.SECONDS);
        // w1's liveness lease is 500 ms: renewed first, or the claim finds it not live.
        core.heartbeat("w1", "s1", List.of(stillRunning)).get(30, TimeUnit.SECONDS);
        Assignment a3 = core.claim("w1", "s1", 1, "c-t3", leader).get(30, TimeUnit.SECONDS).getAssignments().get(0);
        TaskLease lease3 = new TaskLease("t3", a3.getEpoch());
        assertThat(core.acknowledge(lease3, "w1", "s1").get(30, TimeUnit.SECONDS).isAccepted()).isTrue();
        finish(lease3, 5);

        logs = newLogs();
        watcher = new TaskWatcher(core, new Dispatcher(core, () -> null, new WorkerRegistry(), starts -> { }, 16), logs);
        watcher.start();
        java.util.List<LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();
        LogFollow follow = logs.follow("t1", records::add);
        watcher.followed("t1");
        watcher.followed("t1"); // a second follow changes nothing
        LogFollow running = logs.follow("t2", record -> { });
        watcher.followed("t2");
        long before = System.nanoTime();
        LogFollow elsewhere = logs.follow("t3", record -> { });
        watcher.followed("t3");
        LogFollow resentFollow = logs.follow("t4", record -> { });
        watcher.followed("t4");

        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).isTrue();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(records).extracting(LogRecord::getText).startsWith("line-1", "line-2");
        // The worker reconnects and resends the line this master lacks.
        assertThat(LogFixtures.await(logs.appendChunks("t4", resent.getEpoch(), LogFixtures.lines(1, 2)))).isEqualTo(2);
        assertThat(LogFixtures.await(resentFollow.whenEnded()).isComplete()).isTrue();
        LogRecord elsewhereEnd = LogFixtures.await(elsewhere.whenEnded());
        assertThat(System.nanoTime() - before).as("not before the patience").isGreaterThanOrEqualTo(PATIENCE.toNanos());
        assertThat(elsewhereEnd.isComplete()).as("its 5 lines are not here").isFalse();
        assertThat(elsewhereEnd.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(LogFixtures.await(logs.awaitsEnd("t1"))).isEqualTo(TaskLogManager.Awaiting.NOTHING);
        await().during(Duration.ofMillis(1_500)).atMost(Duration.ofSeconds(5))
                .until(() -> !running.whenEnded().isDone()); // t2 still runs: past the patience, not ended
        assertThat(LogFixtures.await(logs.awaitsEnd("t2"))).isEqualTo(TaskLogManager.Awaiting.ATTEMPT_END);
        finish(stillRunning, 0);
    }
}
