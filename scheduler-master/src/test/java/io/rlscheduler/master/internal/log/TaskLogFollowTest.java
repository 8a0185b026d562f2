package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.internal.log.LogFixtures.Recorder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TaskLogFollowTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int TOTAL = 10_000;

    @TempDir
    Path dir;

    private TaskLogManager logs;

    @AfterEach
    void stop() {
        if (logs != null) {
            logs.close();
        }
    }

    private TaskLogManager start(int followerQueueCapacity) {
        logs = new TaskLogManager(dir, new TaskLogManager.Limits(2, 64, 1024, followerQueueCapacity));
        return logs;
    }

    private static List<Long> oneTo(long n) {
        return LongStream.rangeClosed(1, n).boxed().toList();
    }

    /**
     * Writes lines 1..TOTAL in batches of 1 to 40, each batch also resending up to 5 lines already
     * written, waiting for each ack as a worker with one batch in flight would; calls
     * {@code midway} after half of them and goes on at once.
     */
    private void appendAll(String taskId, long epoch, Runnable midway) {
        long acked = 0;
        long next = 1;
        boolean signalled = false;
        java.util.Random random = new java.util.Random(42);
        while (acked < TOTAL) {
            long from = Math.max(1, next - random.nextInt(6));
            long to = Math.min(TOTAL, next + random.nextInt(40));
            acked = await(logs.appendChunks(taskId, epoch, lines(from, to)));
            assertThat(acked).isEqualTo(to);
            next = acked + 1;
            if (!signalled && acked >= TOTAL / 2) {
                signalled = true;
                midway.run();
            }
        }
    }

    @ParameterizedTest(name = "follower queue capacity {0}")
    @ValueSource(ints = {4096, 8})
    void aFollowerJoiningMidwaySeesEveryLineOnceInOrderThenTheEnd(int capacity) throws Exception {
        start(capacity);
        await(logs.open("t1", "tr", 7, 1));
        Recorder recorder = new Recorder();
        CountDownLatch halfWritten = new CountDownLatch(1);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> appendAll("t1", 7, halfWritten::countDown));
        assertThat(halfWritten.await(60, TimeUnit.SECONDS)).isTrue();
        LogFollow follow = logs.follow("t1", recorder);
        writer.get(60, TimeUnit.SECONDS);
        logs.complete("t1", 7, TOTAL, TaskState.SUCCEEDED);

        LogRecord end = await(follow.whenEnded());
        assertThat(recorder.sequences()).containsExactlyElementsOf(oneTo(TOTAL));
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, TOTAL));
        assertThat(recorder.onlyEnd()).isSameAs(end);
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(end.isComplete()).isTrue();
        assertThat(recorder.lines()).allSatisfy(line -> {
            assertThat(line.getAttempt()).isEqualTo(1);
            assertThat(line.getEpoch()).isEqualTo(7);
        });
    }

    @Test
    void manyFollowersJoiningAtDifferentMomentsEachSeeEveryLineOnce() throws Exception {
        start(16);
        await(logs.open("t1", "tr", 7, 1));
        List<Recorder> recorders = new ArrayList<>();
        List<LogFollow> follows = new ArrayList<>();
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> appendAll("t1", 7, () -> { }));
        while (!writer.isDone() && follows.size() < 20) {
            Recorder recorder = new Recorder();
            recorders.add(recorder);
            follows.add(logs.follow("t1", recorder));
            Thread.onSpinWait();
        }
        writer.get(60, TimeUnit.SECONDS);
        logs.complete("t1", 7, TOTAL, TaskState.SUCCEEDED);
        for (int i = 0; i < follows.size(); i++) {
            await(follows.get(i).whenEnded());
            assertThat(recorders.get(i).sequences()).as("follower %d", i).containsExactlyElementsOf(oneTo(TOTAL));
            assertThat(recorders.get(i).onlyEnd().isComplete()).isTrue();
        }
    }

    @Test
    void followingAFinishedTaskReplaysItThenEndsAtOnce() {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 5)));
        logs.complete("t1", 7, 5, TaskState.FAILED);
        Recorder recorder = new Recorder();
        LogRecord end = await(logs.follow("t1", recorder).whenEnded());
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 5));
        assertThat(recorder.lines()).allSatisfy(
                line -> assertThat(line.getStream()).as("replayed lines have no stream").isEqualTo(
                        LogRecord.Stream.UNKNOWN));
        assertThat(recorder.onlyEnd()).isSameAs(end);
        assertThat(end.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(end.isComplete()).isTrue();
    }

    @Test
    void followingATaskWithoutALogWaitsForItsLines() {
        start(64);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        await().atMost(WAIT).until(() -> recorder.lineCount() == 3);
        assertThat(follow.isEnded()).isFalse();
        assertThat(recorder.lines()).allSatisfy(line -> assertThat(line.getStream()).isEqualTo(
                LogRecord.Stream.STDOUT));
        assertThat(recorder.threadName).startsWith("rls-log-follow-");
        logs.complete("t1", 7, 3, TaskState.SUCCEEDED);
        await(follow.whenEnded());
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 3));
        assertThat(recorder.onlyEnd().isComplete()).isTrue();
    }

    @Test
    void aFollowerSeesEachAttemptInOrder() {
        start(64);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        await(logs.open("t1", "tr", 9, 2));
        await(logs.appendChunks("t1", 9, lines(1, 2)));
        logs.complete("t1", 9, 2, TaskState.SUCCEEDED);
        LogRecord end = await(follow.whenEnded());
        List<String> seen = recorder.lines().stream()
                .map(r -> r.getAttempt() + "/" + r.getEpoch() + "/" + r.getSequence()).toList();
        assertThat(seen).containsExactly("1/7/1", "1/7/2", "1/7/3", "2/9/1", "2/9/2");
        assertThat(end.getAttempt()).isEqualTo(2);
        assertThat(end.getEpoch()).isEqualTo(9);
    }

    @Test
    void theEndWaitsForLinesStillMissing() {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        logs.complete("t1", 7, 5, TaskState.SUCCEEDED);
        await().atMost(WAIT).until(() -> recorder.lineCount() == 3);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !follow.isEnded());

        assertThat(await(logs.appendChunks("t1", 7, lines(4, 5)))).isEqualTo(5);
        LogRecord end = await(follow.whenEnded());
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 5));
        assertThat(end.isComplete()).isTrue();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
    }

    @Test
    void abandonEndsFollowersAtOnceMarkedIncomplete() {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        logs.complete("t1", 7, 10, TaskState.SUCCEEDED);
        logs.abandon("t1", TaskState.FAILED, "reaped: worker lease expired");
        LogRecord end = await(follow.whenEnded());
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 3));
        assertThat(recorder.onlyEnd()).isSameAs(end);
        assertThat(end.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(end.isComplete()).isFalse();
        assertThat(end.getNote()).contains("may be incomplete").contains("worker lease expired");

        Recorder later = new Recorder();
        LogRecord laterEnd = await(logs.follow("t1", later).whenEnded());
        assertThat(later.texts()).containsExactlyElementsOf(texts(1, 3));
        assertThat(laterEnd.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(laterEnd.isComplete()).isFalse();
        assertThat(laterEnd.getNote()).isEqualTo(end.getNote());
    }

    @Test
    void abandonEndsAFollowerOfATaskThatNeverLogged() {
        start(64);
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        logs.abandon("t1", TaskState.CANCELLED, null);
        LogRecord end = await(follow.whenEnded());
        assertThat(recorder.lineCount()).isZero();
        assertThat(end.getFinalState()).isEqualTo(TaskState.CANCELLED);
        assertThat(end.isComplete()).isFalse();
    }

    @Test
    void aBlockedConsumerBlocksNeitherWritesNorOtherFollowers() throws Exception {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        CountDownLatch release = new CountDownLatch(1);
        Recorder slow = new Recorder();
        Consumer<LogRecord> blocking = record -> {
            try {
                if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            slow.accept(record);
        };
        LogFollow slowFollow = logs.follow("t1", blocking);
        Recorder fast = new Recorder();
        LogFollow fastFollow = logs.follow("t1", fast);

        // Every ack arrives while the slow consumer sits on its first line.
        CompletableFuture.runAsync(() -> appendAll("t1", 7, () -> { })).get(60, TimeUnit.SECONDS);
        logs.complete("t1", 7, TOTAL, TaskState.SUCCEEDED);
        await(fastFollow.whenEnded());
        assertThat(fast.sequences()).containsExactlyElementsOf(oneTo(TOTAL));
        assertThat(slowFollow.isEnded()).isFalse();

        release.countDown();
        await(slowFollow.whenEnded());
        assertThat(slow.sequences()).as("fell back to the file, lost nothing").containsExactlyElementsOf(oneTo(TOTAL));
        assertThat(slow.onlyEnd().isComplete()).isTrue();
    }

    @Test
    void aThrowingConsumerBreaksNoOtherFollowerAndStillGetsItsEnd() {
        start(64);
        AtomicLong calls = new AtomicLong();
        LogFollow throwing = logs.follow("t1", record -> {
            calls.incrementAndGet();
            throw new IllegalStateException("consumer bug");
        });
        Recorder good = new Recorder();
        LogFollow goodFollow = logs.follow("t1", good);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 100)));
        logs.complete("t1", 7, 100, TaskState.SUCCEEDED);
        await(goodFollow.whenEnded());
        LogRecord end = await(throwing.whenEnded());
        assertThat(end.isComplete()).isTrue();
        assertThat(calls.get()).isEqualTo(101);
        assertThat(good.sequences()).containsExactlyElementsOf(oneTo(100));
    }

    @Test
    void closingAFollowEndsItWithOneEndOfStream() {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        await().atMost(WAIT).until(() -> recorder.lineCount() == 2);
        follow.close();
        follow.close();
        LogRecord end = await(follow.whenEnded());
        await(logs.appendChunks("t1", 7, lines(3, 4)));
        logs.complete("t1", 7, 4, TaskState.SUCCEEDED);
        Recorder other = new Recorder();
        await(logs.follow("t1", other).whenEnded());
        assertThat(recorder.onlyEnd()).isSameAs(end);
        assertThat(end.isComplete()).isFalse();
        assertThat(end.getFinalState()).isNull();
        assertThat(end.getNote()).isEqualTo("follow closed");
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 2));
    }

    @Test
    void aConsumerMayCloseItsOwnFollow() {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 50)));
        Recorder recorder = new Recorder();
        AtomicReference<LogFollow> self = new AtomicReference<>();
        CountDownLatch subscribed = new CountDownLatch(1);
        LogFollow follow = logs.follow("t1", record -> {
            try {
                subscribed.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            recorder.accept(record);
            if (record.isLine() && record.getSequence() == 10) {
                self.get().close();
            }
        });
        self.set(follow);
        subscribed.countDown();
        await(follow.whenEnded());
        assertThat(recorder.sequences()).containsExactlyElementsOf(oneTo(10));
        recorder.onlyEnd();
    }

    @Test
    void closingTheManagerEndsEveryFollower() {
        start(64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        Recorder running = new Recorder();
        LogFollow runningFollow = logs.follow("t1", running);
        Recorder waiting = new Recorder();
        LogFollow waitingFollow = logs.follow("no-log-yet", waiting);
        await().atMost(WAIT).until(() -> running.lineCount() == 2);

        logs.close();
        assertThat(runningFollow.isEnded()).isTrue();
        assertThat(waitingFollow.isEnded()).isTrue();
        for (Recorder recorder : List.of(running, waiting)) {
            LogRecord end = recorder.onlyEnd();
            assertThat(end.isComplete()).isFalse();
            assertThat(end.getFinalState()).isNull();
            assertThat(end.getNote()).contains("closed");
        }
        assertThat(running.texts()).containsExactlyElementsOf(texts(1, 2));
    }
}
