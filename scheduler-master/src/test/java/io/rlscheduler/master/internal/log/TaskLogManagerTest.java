package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.chunk;
import static io.rlscheduler.master.internal.log.LogFixtures.fileLines;
import static io.rlscheduler.master.internal.log.LogFixtures.line;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TaskLogManagerTest {

    @TempDir
    Path root;

    private Path dir;
    private TaskLogManager logs;

    @BeforeEach
    void start() {
        dir = root.resolve("logs");
        logs = new TaskLogManager(dir);
    }

    @AfterEach
    void stop() {
        logs.close();
    }

    private List<String> file(String taskId) {
        return fileLines(dir.resolve(taskId + ".log"));
    }

    private static List<String> concat(List<String> head, List<String> tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(tail);
        return all;
    }

    @Test
    void createsTheDirectoryAndTheFileWithTheFirstLineWhoseFirstLineIsTheTraceId() {
        assertThat(dir).isDirectory();
        await(logs.open("t1", "trace-abc", 7, 1));
        assertThat(dir.resolve("t1.log")).as("no file before the attempt prints").doesNotExist();
        await(logs.appendChunks("t1", 7, lines(1, 1)));
        assertThat(file("t1")).containsExactly("TRACE_ID:trace-abc", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1");
    }

    @Test
    void openAllStartsEachAttemptAsOpenDoes() {
        List<TaskLogManager.AttemptStart> starts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            starts.add(new TaskLogManager.AttemptStart("t" + i, "trace-" + i, 10 + i, i + 1));
        }
        logs.openAll(starts);
        for (int i = 0; i < 6; i++) {
            assertThat(await(logs.appendChunks("t" + i, 9, lines(1, 1)))).as("older than the started attempt").isEqualTo(-1);
            assertThat(await(logs.appendChunks("t" + i, 10 + i, lines(1, 2)))).isEqualTo(2);
            assertThat(file("t" + i)).containsExactly("TRACE_ID:trace-" + i,
                    "##RLS_ATTEMPT attempt=" + (i + 1) + " epoch=" + (10 + i), "line-1", "line-2");
        }
    }

    @Test
    void unendedAttemptsAreTheStartedOnesNotCompletedOrAbandonedNorWaitingForTheirLastLines() {
        for (String taskId : List.of("running", "completed", "abandoned", "waiting-for-lines")) {
            await(logs.open(taskId, "trace", 3, 1));
        }
        await(logs.appendChunks("completed", 3, lines(1, 2)));
        logs.complete("completed", 3, 2, TaskState.SUCCEEDED);
        logs.abandon("abandoned", TaskState.FAILED, "reaped");
        await(logs.appendChunks("waiting-for-lines", 3, lines(1, 2)));
        logs.complete("waiting-for-lines", 3, 5, TaskState.SUCCEEDED); // lines 3 to 5 have not come
        assertThat(await(logs.unendedAttempts())).containsExactly("running");
    }

    @Test
    void openAllWithOneInvalidStartStartsNone() {
        List<TaskLogManager.AttemptStart> starts = List.of(new TaskLogManager.AttemptStart("good", "trace-g", 7, 2),
                new TaskLogManager.AttemptStart("../escape", "trace-e", 7, 1));
        assertThatThrownBy(() -> logs.openAll(starts)).isInstanceOf(IllegalArgumentException.class);
        assertThat(await(logs.appendChunks("good", 7, lines(1, 1)))).isEqualTo(1);
        assertThat(file("good")).as("not started by openAll: a batch of an unknown attempt starts it")
                .containsExactly("TRACE_ID:unknown", "##RLS_ATTEMPT attempt=0 epoch=7", "line-1");
    }

    @Test
    void writesChunksLineByLineWithEscapesAndCarriageReturnsAsSpaces() {
        await(logs.open("t1", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(1, "one\n##RLS_END state=X complete=true\n"),
                chunk(3, LogStream.LOG_STREAM_STDERR, "a\rb\n\n\u00e9t\u00e9\n"))))).isEqualTo(5);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "one",
                "##RLS_TEXT ##RLS_END state=X complete=true", "a b", "", "\u00e9t\u00e9");
        // Read back as a follower does: the escaped line is output, not an end.
        LogFixtures.Recorder recorder = new LogFixtures.Recorder();
        logs.complete("t1", 7, 5, TaskState.SUCCEEDED);
        await(logs.follow("t1", recorder).whenEnded());
        assertThat(recorder.records()).filteredOn(r -> !r.isEndOfStream()).extracting(LogRecord::getText)
                .containsExactly("one", "##RLS_END state=X complete=true", "a b", "", "\u00e9t\u00e9");
    }

    @Test
    void aChunkThatRepeatsLinesWritesOnlyTheNewOnesAndAGapEndsTheBatch() {
        await(logs.open("t1", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(1, "line-1\nline-2\nline-3\n"))))).isEqualTo(3);
        // A resend from before an ack: 2 and 3 are skipped inside the chunk, 4 and 5 written.
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(2, "line-2\nline-3\nline-4\nline-5\n")))))
                .isEqualTo(5);
        // Only repeats: nothing written.
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(1, "x\ny\n"))))).isEqualTo(5);
        // A gap (7 while 6 is missing) ends the batch: the chunk after it is not written either.
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(6, "line-6\n"), chunk(8, "line-8\n"),
                chunk(7, "line-7\n"))))).isEqualTo(6);
        assertThat(file("t1").subList(2, file("t1").size())).containsExactlyElementsOf(texts(1, 6));
    }

    @Test
    void linesAfterTheAttemptsLastAreNotWrittenEvenInsideAChunk() {
        await(logs.open("t1", "tr", 7, 1));
        logs.complete("t1", 7, 2, TaskState.SUCCEEDED);
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(1, "line-1\nline-2\nline-3\n"))))).isEqualTo(2);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1", "line-2",
                "##RLS_END state=SUCCEEDED complete=true last=2");
    }

    @Test
    void aMalformedChunkFailsTheWholeBatchAndWritesNothing() {
        await(logs.open("t1", "tr", 7, 1));
        for (LogChunk bad : List.of(chunk(2, "no final LF"), chunk(2, ""), chunk(0, "zero\n"))) {
            CompletableFuture<Long> result = logs.appendChunks("t1", 7, List.of(chunk(1, "line-1\n"), bad));
            assertThatThrownBy(() -> result.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalArgumentException.class);
        }
        assertThat(dir.resolve("t1.log")).doesNotExist();
        assertThat(await(logs.appendChunks("t1", 7, List.of(chunk(1, "line-1\n"))))).as("still serving").isEqualTo(1);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1");
    }

    @Test
    void liveFollowersGetEachChunkLineWithItsStreamAndSequence() {
        await(logs.open("t1", "tr", 7, 1));
        LogFixtures.Recorder recorder = new LogFixtures.Recorder();
        logs.follow("t1", recorder);
        await(logs.appendChunks("t1", 7, List.of(chunk(1, "a\nb\n"), chunk(3, LogStream.LOG_STREAM_STDERR, "##RLS_x\n"))));
        logs.complete("t1", 7, 3, TaskState.SUCCEEDED);
        LogRecord end = await(logs.follow("t1", r -> { }).whenEnded());
        assertThat(end.isComplete()).isTrue();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> recorder.records().stream().anyMatch(LogRecord::isEndOfStream));
        List<LogRecord> lines = recorder.records().stream().filter(r -> !r.isEndOfStream()).toList();
        assertThat(lines).extracting(LogRecord::getText).containsExactly("a", "b", "##RLS_x");
        assertThat(lines).extracting(LogRecord::getSequence).containsExactly(1L, 2L, 3L);
        assertThat(lines).extracting(LogRecord::getEpoch).containsOnly(7L);
        assertThat(lines).as("live lines keep their stream").extracting(LogRecord::getStream)
                .containsExactly(LogRecord.Stream.STDOUT, LogRecord.Stream.STDOUT, LogRecord.Stream.STDERR);
    }

    @Test
    void linesAcknowledgedByAnotherMasterAreSkippedUnderAMarkerThatSaysSo() throws Exception {
        // A master without the lines another master acknowledged (its own log directory): the
        // worker no longer has them, so the log goes on after them instead of waiting for good.
        TaskLogManager.Written written = await(logs.write("t1", 7, 5, List.of(chunk(6, "six\nseven\n"))));
        assertThat(written.acked()).isEqualTo(7);
        assertThat(written.gap()).isFalse();
        assertThat(file("t1")).containsExactly("TRACE_ID:unknown", "##RLS_ATTEMPT attempt=0 epoch=7 after=5", "six",
                "seven");
        // Lines this log has are never skipped: acknowledged at or below the last line changes nothing.
        assertThat(await(logs.write("t1", 7, 7, List.of(chunk(8, "eight\n")))).acked()).isEqualTo(8);
        assertThat(file("t1")).hasSize(5);

        // Read back by a follower and by a new manager (a restart): the numbers go on after the skip.
        logs.complete("t1", 7, 8, TaskState.SUCCEEDED);
        LogFixtures.Recorder recorder = new LogFixtures.Recorder();
        await(logs.follow("t1", recorder).whenEnded());
        assertThat(recorder.records()).filteredOn(r -> !r.isEndOfStream()).extracting(LogRecord::getSequence)
                .containsExactly(6L, 7L, 8L);
        logs.close();
        logs = new TaskLogManager(dir);
        LogFixtures.Recorder again = new LogFixtures.Recorder();
        LogRecord end = await(logs.follow("t1", again).whenEnded());
        assertThat(end.isComplete()).isTrue();
        assertThat(again.records()).filteredOn(r -> !r.isEndOfStream()).extracting(LogRecord::getText)
                .containsExactly("six", "seven", "eight");
    }

    @Test
    void anEmptyBatchThatSaysTheLastLinesAreGoneLetsTheCompletionEndTheLog() {
        // The tail of an attempt: another master acknowledged every line, and the end's event
        // completes the log here. The worker, with nothing left to resend, says so in a batch
        // without lines.
        await(logs.open("t3", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t3", 7, List.of(chunk(1, "line-1\n"))))).isEqualTo(1);
        assertThat(await(logs.write("t3", 7, 3, List.of())).acked()).isEqualTo(3);
        logs.complete("t3", 7, 3, TaskState.SUCCEEDED);
        LogRecord end = await(logs.follow("t3", r -> { }).whenEnded());
        assertThat(end.isComplete()).isTrue();
        assertThat(file("t3")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1",
                "##RLS_ATTEMPT attempt=1 epoch=7 after=3", "##RLS_END state=SUCCEEDED complete=true last=3");
    }

    @Test
    void aSkipAfterLinesTheLogHasWritesASecondMarkerOfTheSameAttempt() {
        await(logs.open("t2", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t2", 7, List.of(chunk(1, "line-1\nline-2\n"))))).isEqualTo(2);
        assertThat(await(logs.write("t2", 7, 4, List.of(chunk(5, "line-5\n")))).acked()).isEqualTo(5);
        assertThat(file("t2")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1", "line-2",
                "##RLS_ATTEMPT attempt=1 epoch=7 after=4", "line-5");
        // A restarted manager reads where the attempt stands: line 6 is next, 5 a duplicate.
        logs.close();
        logs = new TaskLogManager(dir);
        assertThat(await(logs.appendChunks("t2", 7, List.of(chunk(5, "line-5\nline-6\n"))))).isEqualTo(6);
        logs.complete("t2", 7, 6, TaskState.SUCCEEDED);
        LogFixtures.Recorder recorder = new LogFixtures.Recorder();
        await(logs.follow("t2", recorder).whenEnded());
        assertThat(recorder.records()).filteredOn(r -> !r.isEndOfStream()).extracting(LogRecord::getSequence)
                .containsExactly(1L, 2L, 5L, 6L);
        assertThat(file("t2")).endsWith("line-5", "line-6", "##RLS_END state=SUCCEEDED complete=true last=6");
    }

    @Test
    void writesLinesInSequenceOrderAndAcksTheLast() {
        await(logs.open("t1", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 3)))).isEqualTo(3);
        assertThat(await(logs.appendChunks("t1", 7, List.of(line(4, "line-4"), line(5, "line-5"))))).isEqualTo(5);
        assertThat(file("t1")).containsExactlyElementsOf(
                concat(List.of("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7"), texts(1, 5)));
    }

    @Test
    void skipsLinesAlreadyWrittenWhenAWorkerResends() {
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 4)));
        assertThat(await(logs.appendChunks("t1", 7, lines(2, 6)))).isEqualTo(6);
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 6)))).isEqualTo(6);
        assertThat(await(logs.appendChunks("t1", 7, List.of(line(3, "again"), line(3, "again"))))).isEqualTo(6);
        assertThat(file("t1").subList(2, file("t1").size())).containsExactlyElementsOf(texts(1, 6));
    }

    @Test
    void aGapEndsTheBatchAndTheAckIsTheContiguousPrefix() {
        await(logs.open("t1", "tr", 7, 1));
        List<LogChunk> batch = new ArrayList<>(lines(1, 3));
        batch.addAll(lines(5, 8));
        assertThat(await(logs.appendChunks("t1", 7, batch))).isEqualTo(3);
        assertThat(await(logs.appendChunks("t1", 7, lines(6, 9)))).as("still missing 4").isEqualTo(3);
        assertThat(file("t1").subList(2, file("t1").size())).containsExactlyElementsOf(texts(1, 3));

        assertThat(await(logs.appendChunks("t1", 7, lines(4, 9)))).as("resent from the ack").isEqualTo(9);
        assertThat(file("t1").subList(2, file("t1").size())).containsExactlyElementsOf(texts(1, 9));
    }

    @Test
    void aBatchOfAnOlderEpochIsStaleAndWritesNothing() {
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        await(logs.open("t1", "tr", 9, 2));
        assertThat(await(logs.appendChunks("t1", 7, lines(3, 5)))).isEqualTo(-1L);
        await(logs.open("t1", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t1", 9, lines(1, 1)))).isEqualTo(1);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1", "line-2",
                "##RLS_ATTEMPT attempt=2 epoch=9", "line-1");
    }

    @Test
    void aNewAttemptGetsAMarkerAndSequenceNumbersStartAgain() {
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        await(logs.open("t1", "tr", 9, 2));
        assertThat(await(logs.appendChunks("t1", 9, lines(1, 2)))).isEqualTo(2);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1", "line-2",
                "##RLS_ATTEMPT attempt=2 epoch=9", "line-1", "line-2");
    }

    @Test
    void openingTheSameEpochTwiceWritesOneMarker() {
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 1)));
        await(logs.open("t1", "tr", 7, 1));
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 2)))).isEqualTo(2);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1", "line-2");
    }

    @Test
    void aBatchOfANewerEpochStartsThatAttemptAndCreatesTheFileIfNeeded() {
        assertThat(await(logs.appendChunks("t1", 12, lines(1, 2)))).isEqualTo(2);
        assertThat(file("t1")).containsExactly("TRACE_ID:unknown", "##RLS_ATTEMPT attempt=0 epoch=12", "line-1",
                "line-2");
        await(logs.open("t1", "tr", 12, 3));
        assertThat(file("t1")).as("open of the epoch already started writes nothing").hasSize(4);
    }

    @Test
    void aNewerEpochWhoseFirstBatchDoesNotStartAtOneIsAckedAtZero() {
        assertThat(await(logs.appendChunks("t1", 12, lines(5, 6)))).isZero();
        assertThat(await(logs.appendChunks("t1", 12, lines(1, 6)))).isEqualTo(6);
    }

    @Test
    void lineBreaksInsideALineBecomeSpacesSoOneLineIsOneFileLine() {
        await(logs.open("t1", "tr\nx", 7, 1));
        await(logs.appendChunks("t1", 7, List.of(chunk(1, "a\rb\nc\r\rd\n\n"))));
        assertThat(file("t1")).containsExactly("TRACE_ID:tr x", "##RLS_ATTEMPT attempt=1 epoch=7", "a b", "c  d", "");
    }

    @Test
    void outputCannotForgeAMarker() throws IOException {
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, List.of(line(1, "##RLS_ATTEMPT attempt=5 epoch=99"), line(2, "ok"))));
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7",
                "##RLS_TEXT ##RLS_ATTEMPT attempt=5 epoch=99", "ok");
        logs.close();
        logs = new TaskLogManager(dir);
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 3)))).as("epoch 7 is still current, 2 lines written")
                .isEqualTo(3);
    }

    @Test
    void completionWritesTheEndAndClosesTheFile() {
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        assertThat(logs.openFileCount()).isEqualTo(1);
        logs.complete("t1", 7, 2, TaskState.SUCCEEDED);
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 4)))).as("nothing after the last sequence").isEqualTo(2);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1", "line-2",
                "##RLS_END state=SUCCEEDED complete=true last=2");
        assertThat(logs.openFileCount()).isZero();
    }

    @Test
    void invalidTaskIdsAreRejectedBeforeAnythingIsWritten() throws IOException {
        for (String bad : new String[] {"../x", "..", ".", "a/b", "/tmp/x", "", "x\\y", ".hidden", "a\u0000b",
                "x".repeat(129)}) {
            assertThatThrownBy(() -> logs.open(bad, "tr", 1, 1)).isInstanceOf(IllegalArgumentException.class);
            CompletableFuture<Long> append = logs.appendChunks(bad, 1, lines(1, 1));
            assertThatThrownBy(() -> append.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> logs.follow(bad, r -> { })).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> logs.complete(bad, 1, 1, TaskState.SUCCEEDED))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> logs.abandon(bad, TaskState.FAILED, "x")).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> logs.open(null, "tr", 1, 1)).isInstanceOf(IllegalArgumentException.class);
        // A round trip through the I/O thread, so a write wrongly queued would have happened by now.
        await(logs.appendChunks("ok", 1, lines(1, 1)));
        try (Stream<Path> all = Files.walk(root)) {
            assertThat(all.filter(Files::isRegularFile).toList()).containsExactly(dir.resolve("ok.log"));
        }
    }

    @Test
    void negativeEpochsAreRejected() {
        assertThatThrownBy(() -> logs.open("t1", "tr", -1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(logs.appendChunks("t1", -5, lines(1, 1))).isCompletedExceptionally();
        assertThat(dir.resolve("t1.log")).doesNotExist();
    }

    @Test
    void openFilesStayWithinTheLimitAndReopenedFilesGoOnCorrectly() {
        logs.close();
        logs = new TaskLogManager(dir, new TaskLogManager.Limits(1, 2, 100, 16));
        for (int round = 0; round < 3; round++) {
            for (int task = 0; task < 10; task++) {
                String id = "task-" + task;
                await(logs.open(id, "tr", 7, 1));
                await(logs.appendChunks(id, 7, lines(round * 2 + 1, round * 2 + 2)));
                assertThat(logs.openFileCount()).isLessThanOrEqualTo(2);
            }
        }
        for (int task = 0; task < 10; task++) {
            assertThat(file("task-" + task)).containsExactlyElementsOf(
                    concat(List.of("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7"), texts(1, 6)));
        }
    }

    @Test
    void tasksDroppedFromTheCacheAreReadBackWithoutDuplicates() {
        logs.close();
        logs = new TaskLogManager(dir, new TaskLogManager.Limits(1, 1, 2, 16));
        for (int task = 0; task < 6; task++) {
            await(logs.open("task-" + task, "tr", 7, 1));
            await(logs.appendChunks("task-" + task, 7, lines(1, 3)));
        }
        for (int task = 0; task < 6; task++) {
            assertThat(await(logs.appendChunks("task-" + task, 7, lines(2, 5)))).isEqualTo(5);
            assertThat(await(logs.appendChunks("task-" + task, 6, lines(1, 9)))).isEqualTo(-1L);
        }
        for (int task = 0; task < 6; task++) {
            assertThat(file("task-" + task)).containsExactlyElementsOf(
                    concat(List.of("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7"), texts(1, 5)));
        }
    }

    @Test
    void aLogFileThatIsASymbolicLinkIsNeverWrittenThrough() throws Exception {
        Path target = Files.writeString(root.resolve("elsewhere.txt"), "untouched\n");
        Files.createSymbolicLink(dir.resolve("linked.log"), target);
        Files.createSymbolicLink(dir.resolve("dangling.log"), root.resolve("nothing-here.txt"));

        assertThat(logs.open("linked", "tr", 7, 1)).failsWithin(30, TimeUnit.SECONDS); // an existing file is read
        await(logs.open("dangling", "tr", 7, 1)); // a missing one is not touched until there is something to write
        assertThat(logs.appendChunks("linked", 7, lines(1, 1))).failsWithin(30, TimeUnit.SECONDS);
        assertThat(logs.appendChunks("dangling", 7, lines(1, 1))).failsWithin(30, TimeUnit.SECONDS);

        assertThat(Files.readString(target)).isEqualTo("untouched\n");
        assertThat(root.resolve("nothing-here.txt")).doesNotExist();
    }

    @Test
    void closeIsIdempotentAndLaterCallsFail() {
        await(logs.open("t1", "tr", 7, 1));
        logs.close();
        logs.close();
        assertThat(logs.appendChunks("t1", 7, lines(1, 1))).isCompletedExceptionally();
        assertThat(logs.open("t1", "tr", 8, 2)).isCompletedExceptionally();
        assertThatThrownBy(() -> logs.follow("t1", r -> { })).isInstanceOf(IllegalStateException.class);
        logs.complete("t1", 7, 0, TaskState.SUCCEEDED);
        assertThat(file("t1")).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7");
    }

    @Test
    void callsDoNoFileIoOnTheCallersThread() {
        // File I/O on an interrupted thread fails (the channel is closed by the interrupt), so
        // these calls succeed only if the I/O happens elsewhere.
        Thread.currentThread().interrupt();
        CompletableFuture<Void> open;
        CompletableFuture<Long> append;
        try {
            open = logs.open("t1", "tr", 7, 1);
            append = logs.appendChunks("t1", 7, lines(1, 3));
            logs.complete("t1", 7, 3, TaskState.SUCCEEDED);
        } finally {
            assertThat(Thread.interrupted()).as("the caller's interrupt is left alone").isTrue();
        }
        await(open);
        assertThat(await(append)).isEqualTo(3);
        await(logs.follow("t1", record -> { }).whenEnded()); // queued after the completion
        assertThat(file("t1")).endsWith("##RLS_END state=SUCCEEDED complete=true last=3");
    }
}
