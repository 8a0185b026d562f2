package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.fileLines;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.internal.log.LogFixtures.Recorder;
import io.rlscheduler.master.internal.log.TaskLogManager.Recorded;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attempt's marker goes to the file with its first line: an attempt that ends complete without
 * a line, on a task without a file, leaves no file and needs no force; followers, batches and
 * completions of a task the manager knows nothing of ask the record lookup.
 */
class TaskLogSilentAttemptTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private TaskLogManager logs;
    private final List<String> forced = new CopyOnWriteArrayList<>();
    /** Every lookup asked, per task, in order; each answered by the test. */
    private final Map<String, List<CompletableFuture<Recorded>>> lookups = new ConcurrentHashMap<>();

    @AfterEach
    void stop() {
        if (logs != null) {
            logs.close();
        }
    }

    private void start(int maxCachedTasks) {
        logs = new TaskLogManager(dir, new TaskLogManager.Limits(1, 16, maxCachedTasks, 64, 1),
                file -> forced.add(file.getFileName().toString()),
                taskId -> {
                    if (taskId.startsWith("null-")) {
                        return null; // a broken lookup
                    }
                    CompletableFuture<Recorded> lookup = new CompletableFuture<>();
                    lookups.computeIfAbsent(taskId, id -> new CopyOnWriteArrayList<>()).add(lookup);
                    return lookup;
                });
        logs.lookupTimeout(Duration.ofMinutes(5)); // the test answers each lookup itself
    }

    /** The task's first lookup, once asked. */
    private CompletableFuture<Recorded> lookupOf(String taskId) {
        return lookupOf(taskId, 0);
    }

    /** The task's lookup number {@code n} (from 0), once asked. */
    private CompletableFuture<Recorded> lookupOf(String taskId, int n) {
        await().atMost(WAIT).until(() -> lookups.getOrDefault(taskId, List.of()).size() > n);
        return lookups.get(taskId).get(n);
    }

    private int lookupsOf(String taskId) {
        return lookups.getOrDefault(taskId, List.of()).size();
    }

    /** What the record of a task tells that ended with {@code end}, its last attempt printing nothing. */
    private static Recorded silent(LogRecord end) {
        return new Recorded(end.getEpoch(), end.getAttempt(), "tr", end);
    }

    /** What the record of a task tells whose newest attempt runs. */
    private static Recorded running(long epoch, int attempt, String traceId) {
        return new Recorded(epoch, attempt, traceId, null);
    }

    @Test
    void anAttemptThatPrintsNothingLeavesNoFileAndItsFollowersEndWithoutAForce() {
        start(1024);
        await(logs.open("t1", "tr", 7, 1));
        Recorder early = new Recorder();
        LogFollow earlyFollow = logs.follow("t1", early);
        logs.complete("t1", 7, 0, TaskState.SUCCEEDED);

        LogRecord end = LogFixtures.await(earlyFollow.whenEnded());
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(end.isComplete()).isTrue();
        assertThat(end.getAttempt()).isEqualTo(1);
        assertThat(end.getEpoch()).isEqualTo(7);
        assertThat(early.onlyEnd()).isSameAs(end);
        assertThat(early.lineCount()).isZero();

        Recorder late = new Recorder();
        LogRecord lateEnd = LogFixtures.await(logs.follow("t1", late).whenEnded());
        assertThat(lateEnd).isEqualTo(end);
        assertThat(late.onlyEnd()).isSameAs(lateEnd);
        // A line resent after the end is beyond the attempt's last: nothing is written.
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 1)))).isZero();
        assertThat(dir.resolve("t1.log")).doesNotExist();
        assertThat(forced).isEmpty();
        assertThat(lookups).as("the state was known: no lookup").isEmpty();
    }

    @Test
    void aFollowerOfATaskWithNoFileAndNoStateGetsTheLookupsEnd() {
        start(1024);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("gone", recorder);
        LogRecord told = LogRecord.endOfStream("gone", 2, 9, TaskState.SUCCEEDED, true, null);
        lookupOf("gone").complete(silent(told));

        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end).isEqualTo(told);
        assertThat(recorder.onlyEnd()).isSameAs(end);
        assertThat(recorder.lineCount()).isZero();
        assertThat(dir.resolve("gone.log")).doesNotExist();
    }

    @Test
    void aFollowerWhoseLookupKnowsNoEndWaitsForTheLog() {
        start(1024);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t2", recorder);
        lookupOf("t2").complete(null);
        await(logs.open("t2", "tr", 7, 1));
        await(logs.appendChunks("t2", 7, lines(1, 2)));
        await().atMost(WAIT).until(() -> recorder.lineCount() == 2);
        assertThat(follow.isEnded()).isFalse();
        logs.complete("t2", 7, 2, TaskState.FAILED);
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 2));
    }

    @Test
    void linesWrittenBeforeTheFollowersLookupAnswersWinOverItsEnd() {
        start(1024);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t3", recorder);
        CompletableFuture<Recorded> lookup = lookupOf("t3");
        // The batch asks the record too (the manager knows nothing of the task), and is written once it answers.
        CompletableFuture<Long> first = logs.appendChunks("t3", 7, lines(1, 1));
        lookupOf("t3", 1).complete(running(7, 1, "tr"));
        assertThat(await(first)).isEqualTo(1);
        lookup.complete(silent(LogRecord.endOfStream("t3", 1, 7, TaskState.SUCCEEDED, true, null))); // stale by now
        // Queued behind the lookup's answer on the one I/O thread: handled after it.
        assertThat(await(logs.appendChunks("t3", 7, lines(2, 2)))).isEqualTo(2);
        await().atMost(WAIT).until(() -> recorder.lineCount() == 2);
        assertThat(follow.isEnded()).isFalse();
        logs.complete("t3", 7, 2, TaskState.SUCCEEDED);
        assertThat(LogFixtures.await(follow.whenEnded()).isComplete()).isTrue();
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 2));
    }

    @Test
    void anAbandonedAttemptWithoutLinesIsWrittenDownAndForced() {
        start(1024);
        await(logs.open("t4", "trace-4", 7, 1));
        LogFollow follow = logs.follow("t4", new Recorder());
        logs.abandon("t4", TaskState.FAILED, "worker lost");
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).isFalse();
        assertThat(fileLines(dir.resolve("t4.log"))).hasSize(3).startsWith("TRACE_ID:trace-4",
                "##RLS_ATTEMPT attempt=1 epoch=7");
        assertThat(fileLines(dir.resolve("t4.log")).get(2)).startsWith("##RLS_END state=FAILED complete=false last=0");
        assertThat(forced).containsExactly("t4.log");
    }

    @Test
    void anAbandonOfATaskThatEndedSilentlyElsewhereWritesNothing() {
        start(1024);
        // An abandon on a master without a file of the task: its attempt printed nothing.
        logs.abandon("t8", TaskState.SUCCEEDED, "failed by the reaper");
        LogRecord told = LogRecord.endOfStream("t8", 1, 7, TaskState.SUCCEEDED, true, null);
        lookupOf("t8").complete(silent(told));
        Recorder recorder = new Recorder();
        LogRecord end = LogFixtures.await(logs.follow("t8", recorder).whenEnded());
        assertThat(end).isEqualTo(told);
        // The record's end stays known here: a resent batch of an older attempt is stale without another lookup.
        assertThat(await(logs.appendChunks("t8", 5, lines(1, 1)))).isEqualTo(-1);
        assertThat(dir.resolve("t8.log")).doesNotExist();
        assertThat(forced).isEmpty();
        assertThat(lookupsOf("t8")).isEqualTo(1);
    }

    @Test
    void aFollowerWaitingOnATaskThatThenEndsSilentlyGetsTheRecordsEnd() {
        start(1024);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t20", recorder);
        lookupOf("t20").complete(running(9, 2, "tr")); // the follower's: the task runs, so it waits
        logs.complete("t20", 9, 0, TaskState.SUCCEEDED);
        LogRecord told = LogRecord.endOfStream("t20", 2, 9, TaskState.SUCCEEDED, true, null);
        lookupOf("t20", 1).complete(silent(told)); // the completion's: by now the record says it ended
        assertThat(LogFixtures.await(follow.whenEnded())).isEqualTo(told);
        assertThat(recorder.onlyEnd()).isSameAs(follow.whenEnded().join());
        assertThat(dir.resolve("t20.log")).doesNotExist();
    }

    @Test
    void aTaskWhoseRecordEndedWithoutItsLogsEndIsEndedIncompleteAndItsLinesStillWritten() {
        start(1024);
        CompletableFuture<Long> batch = logs.appendChunks("t21", 7, lines(1, 1));
        LogRecord told = LogRecord.endOfStream("t21", 1, 7, TaskState.FAILED, false, "reaped");
        lookupOf("t21").complete(new Recorded(7, 1, "trace-21", told));
        assertThat(await(batch)).isEqualTo(1);
        LogRecord end = LogFixtures.await(logs.follow("t21", new Recorder()).whenEnded());
        assertThat(end.isComplete()).isFalse();
        assertThat(end.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(end.getNote()).contains("without its worker recording where its log ends");
        assertThat(fileLines(dir.resolve("t21.log"))).hasSize(4).startsWith("TRACE_ID:trace-21",
                "##RLS_ATTEMPT attempt=1 epoch=7");
        assertThat(fileLines(dir.resolve("t21.log")).get(2)).startsWith("##RLS_END state=FAILED complete=false last=0");
        assertThat(fileLines(dir.resolve("t21.log")).get(3)).isEqualTo("line-1");
    }

    @Test
    void closeWithAnAbandonWaitingForItsLookupWritesNothingForIt() {
        start(1024);
        logs.abandon("t22", TaskState.SUCCEEDED, "failed by the reaper");
        lookupOf("t22"); // asked, never answered: the task may have ended silently
        logs.close();
        assertThat(dir.resolve("t22.log")).doesNotExist();
        assertThat(forced).isEmpty();
    }

    @Test
    void aLookupThatReturnsNullCountsAsFailed() {
        start(1024);
        assertThat(await(logs.appendChunks("null-1", 7, lines(1, 1)))).isEqualTo(1);
        assertThat(await(logs.appendChunks("null-1", 7, lines(2, 2)))).isEqualTo(2);
    }

    @Test
    void anAbandonOfATaskTheLookupKnowsNoSilentEndOfIsWrittenDown() {
        start(1024);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t9", recorder);
        logs.abandon("t9", TaskState.FAILED, "reaped");
        lookupOf("t9").complete(null); // the follower's
        lookupOf("t9", 1).complete(null); // the abandon's
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).isFalse();
        assertThat(end.getNote()).contains("reaped");
        assertThat(fileLines(dir.resolve("t9.log"))).hasSize(2);
        assertThat(fileLines(dir.resolve("t9.log")).get(1)).startsWith("##RLS_END state=FAILED complete=false");
    }

    @Test
    void anAttemptWithoutLinesAfterOneThatPrintedIsWrittenDown() {
        start(1024);
        await(logs.open("t5", "tr", 7, 1));
        await(logs.appendChunks("t5", 7, lines(1, 2)));
        logs.complete("t5", 7, 2, TaskState.FAILED);
        await(logs.open("t5", "tr", 9, 2));
        LogFollow follow = logs.follow("t5", new Recorder());
        logs.complete("t5", 9, 0, TaskState.SUCCEEDED);
        assertThat(LogFixtures.await(follow.whenEnded()).getEpoch()).isEqualTo(9);
        assertThat(fileLines(dir.resolve("t5.log"))).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7",
                "line-1", "line-2", "##RLS_END state=FAILED complete=true last=2", "##RLS_ATTEMPT attempt=2 epoch=9",
                "##RLS_END state=SUCCEEDED complete=true last=0");
        assertThat(forced).containsExactly("t5.log", "t5.log");
    }

    @Test
    void aStartedAttemptDroppedFromTheCacheKeepsItsMarkerInTheFile() {
        start(1);
        await(logs.open("a", "trace-a", 7, 3));
        await(logs.open("b", "trace-b", 8, 1)); // a is dropped: its marker goes to the file
        assertThat(fileLines(dir.resolve("a.log"))).containsExactly("TRACE_ID:trace-a", "##RLS_ATTEMPT attempt=3 epoch=7");
        assertThat(await(logs.appendChunks("a", 7, lines(1, 2)))).isEqualTo(2);
        assertThat(fileLines(dir.resolve("a.log"))).containsExactly("TRACE_ID:trace-a", "##RLS_ATTEMPT attempt=3 epoch=7",
                "line-1", "line-2");
        // b was dropped in turn, its marker written: its end then goes after it, as for any file.
        logs.complete("b", 8, 0, TaskState.SUCCEEDED);
        await(logs.appendChunks("a", 7, lines(3, 3)));
        assertThat(fileLines(dir.resolve("b.log"))).containsExactly("TRACE_ID:trace-b", "##RLS_ATTEMPT attempt=1 epoch=8",
                "##RLS_END state=SUCCEEDED complete=true last=0");
    }

    @Test
    void closeWritesTheMarkersOfStartedAttempts() {
        start(1024);
        await(logs.open("t6", "trace-6", 7, 1));
        await(logs.open("t7", "trace-7", 7, 1));
        logs.complete("t7", 7, 0, TaskState.SUCCEEDED);
        logs.close();
        assertThat(fileLines(dir.resolve("t6.log"))).containsExactly("TRACE_ID:trace-6", "##RLS_ATTEMPT attempt=1 epoch=7");
        assertThat(dir.resolve("t7.log")).as("ended: nothing to keep").doesNotExist();
    }

    @Test
    void aFencedAttemptsResentLinesAndEndAreStaleOnceATaskThatEndedSilentlyIsDroppedFromTheCache() {
        start(1);
        await(logs.open("t10", "tr", 9, 2));
        logs.complete("t10", 9, 0, TaskState.SUCCEEDED);
        await(logs.open("other", "tr", 5, 1)); // t10's state is dropped: nothing of it is left here
        // Attempt 1 (epoch 7) ran on a worker cut off from the master, which now resends its lines and end.
        CompletableFuture<Long> resent = logs.appendChunks("t10", 7, lines(1, 2));
        LogRecord told = LogRecord.endOfStream("t10", 2, 9, TaskState.SUCCEEDED, true, null);
        lookupOf("t10").complete(silent(told));
        assertThat(await(resent)).as("stale").isEqualTo(-1);
        logs.complete("t10", 7, 2, TaskState.FAILED);
        Recorder recorder = new Recorder();
        assertThat(LogFixtures.await(logs.follow("t10", recorder).whenEnded())).isEqualTo(told);
        assertThat(recorder.lineCount()).isZero();
        assertThat(dir.resolve("t10.log")).doesNotExist();
        assertThat(forced).isEmpty();
        assertThat(lookupsOf("t10")).as("asked once; the follower found the state").isEqualTo(1);
    }

    @Test
    void aRestartedManagerStartsTheRecordsNewestAttemptSoThatOlderBatchesAreStale() {
        start(1024);
        CompletableFuture<Long> old = logs.appendChunks("t11", 7, lines(1, 1));
        CompletableFuture<Long> current = logs.appendChunks("t11", 9, lines(1, 2));
        lookupOf("t11").complete(running(9, 2, "trace-11"));
        assertThat(await(old)).isEqualTo(-1);
        assertThat(await(current)).isEqualTo(2);
        logs.complete("t11", 7, 1, TaskState.FAILED); // stale as well
        logs.complete("t11", 9, 2, TaskState.SUCCEEDED);
        assertThat(LogFixtures.await(logs.follow("t11", new Recorder()).whenEnded()).isComplete()).isTrue();
        assertThat(fileLines(dir.resolve("t11.log"))).containsExactly("TRACE_ID:trace-11",
                "##RLS_ATTEMPT attempt=2 epoch=9", "line-1", "line-2", "##RLS_END state=SUCCEEDED complete=true last=2");
        assertThat(lookupsOf("t11")).isEqualTo(1);
    }

    @Test
    void everyOperationOnATaskWaitsInOrderForItsLookup() {
        start(1024);
        CompletableFuture<Long> first = logs.appendChunks("t12", 7, lines(1, 1));
        CompletableFuture<Void> open = logs.open("t12", "tr", 9, 2);
        CompletableFuture<Long> afterOpen = logs.appendChunks("t12", 7, lines(2, 2));
        CompletableFuture<Recorded> lookup = lookupOf("t12");
        await(logs.open("t13", "tr", 1, 1)); // the one I/O thread has handled all of the above
        assertThat(first).isNotDone();
        assertThat(open).isNotDone();
        assertThat(afterOpen).isNotDone();
        lookup.complete(running(7, 1, "tr"));
        assertThat(await(first)).isEqualTo(1);
        await(open);
        assertThat(await(afterOpen)).as("the attempt of epoch 9 started before it").isEqualTo(-1);
        assertThat(fileLines(dir.resolve("t12.log"))).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7",
                "line-1");
    }

    @Test
    void aBatchIsWrittenWhenTheLookupFails() {
        start(1024);
        CompletableFuture<Long> batch = logs.appendChunks("t14", 7, lines(1, 2));
        lookupOf("t14").completeExceptionally(new IllegalStateException("Redis is away"));
        assertThat(await(batch)).isEqualTo(2);
        assertThat(fileLines(dir.resolve("t14.log"))).containsExactly("TRACE_ID:unknown", "##RLS_ATTEMPT attempt=0 epoch=7",
                "line-1", "line-2");
    }

    @Test
    void closeRunsTheOperationsWaitingForALookup() {
        start(1024);
        CompletableFuture<Long> batch = logs.appendChunks("t15", 7, lines(1, 1));
        lookupOf("t15");
        logs.close();
        assertThat(await(batch)).isEqualTo(1);
        assertThat(fileLines(dir.resolve("t15.log"))).containsExactly("TRACE_ID:unknown", "##RLS_ATTEMPT attempt=0 epoch=7",
                "line-1");
    }
}
