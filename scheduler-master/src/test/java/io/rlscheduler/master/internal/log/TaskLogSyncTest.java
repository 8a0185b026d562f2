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
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The force of an ended attempt's file happens on a sync thread: the I/O thread goes on with other
 * tasks meanwhile, and followers get END_OF_STREAM only once the file is forced.
 */
class TaskLogSyncTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private TaskLogManager logs;
    private final HeldForcer forcer = new HeldForcer();

    @AfterEach
    void stop() {
        forcer.release();
        if (logs != null) {
            logs.close();
        }
    }

    private TaskLogManager start(int ioThreads, int maxOpenFiles) {
        logs = new TaskLogManager(dir, new TaskLogManager.Limits(ioThreads, maxOpenFiles, 1024, 64, 1), forcer);
        return logs;
    }

    /** Forces files for real, but each waits until released; records what it forced. */
    private static final class HeldForcer implements TaskLogManager.FileForcer {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        final Set<String> forced = ConcurrentHashMap.newKeySet();
        volatile IOException failure;

        @Override
        public void force(Path file) throws IOException {
            entered.countDown();
            try {
                if (!released.await(60, TimeUnit.SECONDS)) {
                    throw new IOException("test forcer never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            if (failure != null) {
                throw failure;
            }
            try (var channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ)) {
                channel.force(false);
            }
            forced.add(file.getFileName().toString());
        }

        void release() {
            released.countDown();
        }
    }

    @Test
    void followersGetTheEndOnlyOnceTheFileIsForcedWhileOtherTasksGoOn() throws Exception {
        start(1, 64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        Recorder early = new Recorder();
        LogFollow earlyFollow = logs.follow("t1", early);
        logs.complete("t1", 7, 3, TaskState.SUCCEEDED);
        assertThat(forcer.entered.await(30, TimeUnit.SECONDS)).as("the force started").isTrue();

        // The end is written and the I/O thread (one, shared by every task) is free while the force waits.
        assertThat(fileLines(dir.resolve("t1.log"))).endsWith("##RLS_END state=SUCCEEDED complete=true last=3");
        await(logs.open("t2", "tr", 8, 1));
        assertThat(await(logs.appendChunks("t2", 8, lines(1, 2)))).isEqualTo(2);
        // A follower of the ended attempt that subscribes now waits for the force too. Its attach
        // is queued on the I/O thread before this append, so it has been handled once this returns.
        Recorder late = new Recorder();
        LogFollow lateFollow = logs.follow("t1", late);
        assertThat(await(logs.appendChunks("t2", 8, lines(3, 3)))).isEqualTo(3);
        assertThat(earlyFollow.isEnded()).isFalse();
        assertThat(lateFollow.isEnded()).isFalse();
        assertThat(forcer.forced).isEmpty();

        forcer.release();
        LogRecord earlyEnd = LogFixtures.await(earlyFollow.whenEnded());
        LogRecord lateEnd = LogFixtures.await(lateFollow.whenEnded());
        assertThat(forcer.forced).contains("t1.log");
        for (Recorder recorder : List.of(early, late)) {
            assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 3));
            assertThat(recorder.onlyEnd().isComplete()).isTrue();
        }
        assertThat(earlyEnd.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(lateEnd.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
    }

    @Test
    void theLoadCountsForcesWaitingOpenFilesAndFollowers() throws Exception {
        start(1, 64); // one I/O thread, one sync thread
        for (String id : List.of("t1", "t2", "t3")) {
            await(logs.open(id, "tr", 7, 1));
            await(logs.appendChunks(id, 7, lines(1, 2)));
        }
        assertThat(logs.load()).isEqualTo(new TaskLogManager.Load(0, 0, 3, 0));
        LogFollow follow = logs.follow("t3", new Recorder());
        assertThat(logs.load().followers()).isEqualTo(1);

        // t1's force holds the one sync thread: t2's waits in its queue.
        logs.complete("t1", 7, 2, TaskState.SUCCEEDED);
        assertThat(forcer.entered.await(30, TimeUnit.SECONDS)).isTrue();
        logs.complete("t2", 7, 2, TaskState.SUCCEEDED);
        await().atMost(WAIT).until(() -> logs.load().syncBacklog() == 1);
        assertThat(logs.load().openFiles()).isEqualTo(1);

        forcer.release();
        await().atMost(WAIT).until(() -> logs.load().syncBacklog() == 0 && forcer.forced.size() == 2);
        follow.close();
        LogFixtures.await(follow.whenEnded());
        await().atMost(WAIT).until(() -> logs.load().followers() == 0);
        assertThat(logs.load().writeBacklog()).isZero();
    }

    @Test
    void aFollowerOfALaterAttemptDoesNotWaitForTheEarlierAttemptsForce() throws Exception {
        start(1, 64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 1)));
        logs.complete("t1", 7, 1, TaskState.FAILED);
        assertThat(forcer.entered.await(30, TimeUnit.SECONDS)).isTrue();
        await(logs.open("t1", "tr", 9, 2));
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        await(logs.appendChunks("t1", 9, lines(1, 2)));
        // Attempt 1's line from the file, then attempt 2's two, live.
        await().atMost(WAIT).until(() -> recorder.lineCount() == 3);
        assertThat(follow.isEnded()).isFalse();
        forcer.release();
        logs.complete("t1", 9, 2, TaskState.SUCCEEDED);
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.getEpoch()).isEqualTo(9);
        assertThat(end.isComplete()).isTrue();
    }

    @Test
    void closeForcesTheFilesStillQueuedAndTheirFollowersGetACompleteEnd() throws Exception {
        start(1, 64);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        logs.complete("t1", 7, 2, TaskState.SUCCEEDED);
        assertThat(forcer.entered.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(logs::close);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> !closing.isDone() && !follow.isEnded());

        forcer.release();
        closing.get(30, TimeUnit.SECONDS);
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(forcer.forced).contains("t1.log");
        assertThat(end.isComplete()).as(String.valueOf(end.getNote())).isTrue();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 2));
    }

    @Test
    void aForceThatFailsStillEndsTheFollowers() {
        start(1, 64);
        forcer.failure = new IOException("disk on fire");
        forcer.release();
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 1)));
        Recorder recorder = new Recorder();
        LogFollow follow = logs.follow("t1", recorder);
        logs.complete("t1", 7, 1, TaskState.SUCCEEDED);
        LogRecord end = LogFixtures.await(follow.whenEnded());
        assertThat(end.isComplete()).isTrue();
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 1));
    }

    @Test
    void theLeastRecentlyUsedFileIsClosedFirst() throws Exception {
        forcer.release();
        start(1, 2);
        for (String task : List.of("a", "b")) {
            await(logs.open(task, "tr", 1, 1));
            await(logs.appendChunks(task, 1, lines(1, 1)));
        }
        await(logs.appendChunks("a", 1, lines(2, 2))); // a is now used more recently than b
        await(logs.open("c", "tr", 1, 1));
        await(logs.appendChunks("c", 1, lines(1, 1)));
        assertThat(logs.openFileCount()).isEqualTo(2);
        assertThat(openLogFiles()).containsExactlyInAnyOrder("a.log", "c.log");
        assertThat(await(logs.appendChunks("b", 1, lines(2, 3)))).isEqualTo(3);
        assertThat(openLogFiles()).containsExactlyInAnyOrder("b.log", "c.log");
        assertThat(fileLines(dir.resolve("b.log"))).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=1",
                "line-1", "line-2", "line-3");
    }

    /** The names of this process's open files in the log directory, from /proc/self/fd. */
    private Set<String> openLogFiles() throws IOException {
        Path fds = Path.of("/proc/self/fd");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(fds), "needs /proc");
        Path logDir = dir.toRealPath();
        try (Stream<Path> list = Files.list(fds)) {
            return list.map(fd -> {
                try {
                    return Files.readSymbolicLink(fd);
                } catch (IOException gone) {
                    return null;
                }
            }).filter(target -> target != null && logDir.equals(target.getParent()))
                    .map(target -> target.getFileName().toString()).collect(Collectors.toSet());
        }
    }
}
