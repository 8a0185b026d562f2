package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFiles;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.internal.log.LogFixtures.Recorder;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoreUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Task logs in the artifact store: an ended log is copied there whole, again after each end; a
 * store that is down while a log ends gets it once back, the log staying readable meanwhile; a
 * manager with an empty log directory (another machine) serves an ended log from the store, and
 * one whose store is down says so instead of waiting or writing a log of its own. Real files and
 * a real directory store on temp directories; the task record is a fixed answer.
 */
class TaskLogStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private Path storeRoot;
    private DirectoryStore store;

    @BeforeEach
    void createStore() {
        storeRoot = dir.resolve("store");
        store = new DirectoryStore(storeRoot);
    }

    /** A manager on {@code logs} with the store, waiting 200 ms for an attempt's missing last lines. */
    private TaskLogManager manager(String logs, TaskLogManager.RecordLookup lookup) {
        return new TaskLogManager(dir.resolve(logs), TaskLogManager.Limits.defaults()
                .withLinePatience(Duration.ofMillis(200)), lookup, store, () -> true);
    }

    /** What a task record tells of task t1: ended (SUCCEEDED) after its attempt 1 printed lines. */
    private static final TaskLogManager.RecordLookup ENDED_WITH_LINES =
            taskId -> CompletableFuture.completedFuture(new TaskLogManager.Recorded(1, 1, "trace-1", null, true));

    private byte[] stored(String taskId) {
        try (InputStream in = store.open(RunLayout.log(taskId))) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] bytes(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The store's directory is moved away and a plain file put in its place: every call fails. */
    private void storeDown() throws IOException {
        Files.move(storeRoot, dir.resolve("store-away"));
        Files.writeString(storeRoot, "not a directory");
    }

    private void storeBack() throws IOException {
        Files.delete(storeRoot);
        Files.move(dir.resolve("store-away"), storeRoot);
    }

    /** Writes attempt 1 of t1 (lines 1 to 3) and ends it; returns once the store holds it. */
    private void endedInTheStore() {
        try (TaskLogManager a = manager("logs-a", TaskLogManager.RecordLookup.NONE)) {
            await(a.open("t1", "trace-1", 1, 1));
            assertThat(await(a.appendChunks("t1", 1, lines(1, 3)))).isEqualTo(3);
            a.complete("t1", 1, 3, TaskState.SUCCEEDED);
            await().atMost(WAIT).until(() -> a.uploads().stored() == 1 && a.uploads().pending() == 0);
        }
    }

    @Test
    void anEndedLogIsInTheStoreByteForByteAndASecondAttemptsEndStoresTheWholeFileAgain() throws Exception {
        try (TaskLogManager logs = manager("logs", TaskLogManager.RecordLookup.NONE)) {
            Path file = logs.getDirectory().resolve("t1.log");
            await(logs.open("t1", "trace-1", 1, 1));
            await(logs.appendChunks("t1", 1, lines(1, 3)));
            assertThat(store.stat(RunLayout.log("t1"))).as("not before its end").isEmpty();
            logs.complete("t1", 1, 3, TaskState.FAILED);
            await().atMost(WAIT).until(() -> logs.uploads().stored() == 1);
            assertThat(stored("t1")).isEqualTo(bytes(file));

            await(logs.open("t1", "trace-1", 2, 2));
            await(logs.appendChunks("t1", 2, lines(1, 2)));
            logs.complete("t1", 2, 2, TaskState.SUCCEEDED);
            await().atMost(WAIT).until(() -> logs.uploads().stored() == 2 && logs.uploads().pending() == 0);
            assertThat(stored("t1")).isEqualTo(bytes(file));
            List<LogRecord> records = LogFiles.read(dir.resolve("elsewhere"), "t1", store);
            assertThat(records).filteredOn(LogRecord::isLine).extracting(LogRecord::getText)
                    .containsExactly("line-1", "line-2", "line-3", "line-1", "line-2");
            assertThat(records).filteredOn(LogRecord::isEndOfStream).extracting(LogRecord::getFinalState)
                    .containsExactly(TaskState.FAILED, TaskState.SUCCEEDED);
            assertThat(logs.uploads().refused()).isZero();
        }
    }

    @Test
    void anEndWrittenWhileAnotherMasterLeadsStaysHereAndTheLeadersCopyIsNotReplaced() {
        AtomicBoolean leading = new AtomicBoolean(false);
        try (TaskLogManager logs = new TaskLogManager(dir.resolve("logs"), TaskLogManager.Limits.defaults(),
                TaskLogManager.RecordLookup.NONE, store, leading::get)) {
            await(logs.open("t1", "trace-1", 1, 1));
            await(logs.appendChunks("t1", 1, lines(1, 1)));
            logs.abandon("t1", TaskState.FAILED, "reaped");
            Path file = logs.getDirectory().resolve("t1.log");
            await().atMost(WAIT).until(() -> LogFixtures.fileLines(file).get(LogFixtures.fileLines(file).size() - 1)
                    .startsWith("##RLS_END"));
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                    .until(() -> logs.uploads().pending() == 0 && store.stat(RunLayout.log("t1")).isEmpty());

            leading.set(true);
            await(logs.open("t1", "trace-1", 2, 2));
            logs.abandon("t1", TaskState.FAILED, "reaped again");
            await().atMost(WAIT).until(() -> logs.uploads().stored() == 1);
            assertThat(stored("t1")).isEqualTo(bytes(file));
        }
    }

    @Test
    void aStoreThatIsDownWhileALogEndsGetsItOnceBackAndTheLogStaysReadableHereMeanwhile() throws Exception {
        try (TaskLogManager logs = manager("logs", TaskLogManager.RecordLookup.NONE)) {
            Path file = logs.getDirectory().resolve("t1.log");
            await(logs.open("t1", "trace-1", 1, 1));
            await(logs.appendChunks("t1", 1, lines(1, 3)));
            storeDown();
            logs.complete("t1", 1, 3, TaskState.SUCCEEDED);
            await().atMost(WAIT).until(() -> logs.uploads().refused() >= 1);
            assertThat(logs.uploads().pending()).isEqualTo(1);
            assertThat(logs.uploads().stored()).isZero();

            Recorder recorder = new Recorder();
            LogFollow follow = logs.follow("t1", recorder);
            assertThat(await(follow.whenEnded()).isComplete()).isTrue();
            assertThat(recorder.texts()).isEqualTo(texts(1, 3));
            assertThat(LogFiles.read(file)).filteredOn(LogRecord::isLine).hasSize(3);

            storeBack();
            await().atMost(WAIT).until(() -> logs.uploads().pending() == 0);
            assertThat(logs.uploads().stored()).isEqualTo(1);
            assertThat(stored("t1")).isEqualTo(bytes(file));
        }
    }

    @Test
    void aManagerWithAnEmptyDirectoryServesAnEndedLogWholeFromTheStoreAndKeepsItsCopy() {
        endedInTheStore();
        try (TaskLogManager b = manager("logs-b", ENDED_WITH_LINES)) {
            Recorder recorder = new Recorder();
            LogRecord end = await(b.follow("t1", recorder).whenEnded());
            assertThat(end.isComplete()).isTrue();
            assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(recorder.texts()).isEqualTo(texts(1, 3));
            recorder.onlyEnd();
            Path file = b.getDirectory().resolve("t1.log");
            assertThat(bytes(file)).as("brought into the log directory").isEqualTo(stored("t1"));

            // The end heard of afterwards (its event, the record) changes nothing, and is not uploaded again.
            b.complete("t1", 1, 3, TaskState.SUCCEEDED);
            Recorder again = new Recorder();
            assertThat(await(b.follow("t1", again).whenEnded()).isComplete()).isTrue();
            assertThat(again.texts()).isEqualTo(texts(1, 3));
            assertThat(bytes(file)).isEqualTo(stored("t1"));
            assertThat(b.uploads().stored()).isZero();
        }
    }

    @Test
    void anEndHeardOfWithoutAFollowerBringsTheLogBackInsteadOfEndingAnEmptyOneHere() {
        endedInTheStore();
        try (TaskLogManager c = manager("logs-c", ENDED_WITH_LINES)) {
            Path file = c.getDirectory().resolve("t1.log");
            // Without the store's copy, this end would wait 200 ms for lines 1 to 3 and then end
            // the attempt here with none of them.
            c.complete("t1", 1, 3, TaskState.SUCCEEDED);
            await().atMost(WAIT).until(() -> Files.exists(file));
            await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(5))
                    .until(() -> java.util.Arrays.equals(bytes(file), stored("t1")));
            Recorder recorder = new Recorder();
            assertThat(await(c.follow("t1", recorder).whenEnded()).isComplete()).isTrue();
            assertThat(recorder.texts()).isEqualTo(texts(1, 3));
        }
    }

    @Test
    void aStoreThatIsDownWhenAnEndedLogIsFollowedFailsTheFollowAndNothingIsWrittenHere() throws Exception {
        endedInTheStore();
        storeDown();
        try (TaskLogManager b = manager("logs-b", ENDED_WITH_LINES)) {
            Path file = b.getDirectory().resolve("t1.log");
            Recorder recorder = new Recorder();
            LogFollow follow = b.follow("t1", recorder);
            assertThat(follow.whenEnded()).failsWithin(WAIT).withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(StoreUnavailableException.class);
            LogRecord end = recorder.onlyEnd();
            assertThat(end.isComplete()).isFalse();
            assertThat(end.getNote()).contains("artifact store");
            assertThat(recorder.lineCount()).isZero();

            // An end heard of meanwhile writes nothing: it would end an empty log here, and
            // contradict the store's once that is back.
            b.complete("t1", 1, 3, TaskState.SUCCEEDED);
            await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(5)).until(() -> !Files.exists(file));

            storeBack();
            Recorder later = new Recorder();
            LogRecord laterEnd = await(b.follow("t1", later).whenEnded());
            assertThat(laterEnd.isComplete()).isTrue();
            assertThat(later.texts()).isEqualTo(texts(1, 3));
            assertThat(bytes(file)).isEqualTo(stored("t1"));
        }
    }
}
