package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.chunk;
import static io.rlscheduler.master.internal.log.LogFixtures.fileLines;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFiles;
import io.rlscheduler.master.LogRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cap on a task's log file: the lines that fit are written, the one that would go past it and
 * every later one of the task are acknowledged but not written, the file says where it was cut,
 * and the attempt's end and the followers say so too.
 */
class TaskLogSizeLimitTest {

    /** The file's first two lines for trace "tr" and attempt 1 at epoch 7. */
    private static final String HEAD = "TRACE_ID:tr\n##RLS_ATTEMPT attempt=1 epoch=7\n";

    @TempDir
    Path root;

    private final List<String> events = new CopyOnWriteArrayList<>();
    private TaskLogManager logs;

    @AfterEach
    void stop() {
        if (logs != null) {
            logs.close();
        }
    }

    private TaskLogManager start(long maxLogBytes) {
        logs = new TaskLogManager(root.resolve("logs"), TaskLogManager.Limits.defaults().withMaxLogBytes(maxLogBytes),
                TaskLogManager.RecordLookup.NONE, null, () -> false, new LogEvents() {
                    @Override
                    public void attemptEnded(String taskId, long epoch, boolean complete) {
                        events.add("ended " + taskId + " " + epoch);
                    }

                    @Override
                    public void logCut(String taskId, long epoch, long bytes) {
                        events.add("cut " + taskId + " " + epoch + " " + bytes);
                    }
                });
        return logs;
    }

    private Path file(String taskId) {
        return root.resolve("logs").resolve(taskId + ".log");
    }

    /** The bytes of the head and lines line-1..line-n. */
    private static long bytesUpTo(int n) {
        StringBuilder text = new StringBuilder(HEAD);
        texts(1, n).forEach(line -> text.append(line).append('\n'));
        return text.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void linesThatFitAreWrittenAndTheLineThatWouldPassTheCapCutsTheLog() throws Exception {
        long cap = bytesUpTo(5) + 3; // line 6 ("line-6\n", 7 bytes) does not fit
        start(cap);
        await(logs.open("t1", "tr", 7, 1));
        TaskLogManager.Written written = await(logs.write("t1", 7, lines(1, 10)));

        assertThat(written).isEqualTo(new TaskLogManager.Written(10, false, true));
        long kept = bytesUpTo(5);
        List<String> expected = new ArrayList<>(List.of("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7"));
        expected.addAll(texts(1, 5));
        expected.add("##RLS_CUT at=" + kept + " limit=" + cap);
        assertThat(fileLines(file("t1"))).containsExactlyElementsOf(expected);
        assertThat(events).containsExactly("cut t1 7 " + kept);
        assertThat(logs.logsCut()).isEqualTo(1);

        // Later lines are acknowledged and dropped; nothing more is written.
        long size = Files.size(file("t1"));
        assertThat(await(logs.write("t1", 7, lines(11, 20)))).isEqualTo(new TaskLogManager.Written(20, false, true));
        assertThat(await(logs.write("t1", 7, 25, List.of()))).isEqualTo(new TaskLogManager.Written(25, false, true));
        assertThat(Files.size(file("t1"))).isEqualTo(size);
        assertThat(logs.logsCut()).isEqualTo(1);
    }

    @Test
    void theEndOfACutAttemptComesAtOnceIncompleteAndSaysWhereTheLogWasCut() throws Exception {
        long cap = bytesUpTo(3);
        start(cap);
        await(logs.open("t1", "tr", 7, 1));
        LogFixtures.Recorder recorder = new LogFixtures.Recorder();
        logs.follow("t1", recorder);
        await(logs.write("t1", 7, lines(1, 8)));
        logs.complete("t1", 7, 100, TaskState.SUCCEEDED);

        LogRecord end = await(logs.follow("t1", r -> { }).whenEnded());
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(end.isComplete()).as("lines 4 to 100 are not in the log").isFalse();
        assertThat(end.isLogCut()).isTrue();
        assertThat(end.getLogCutAt()).isEqualTo(cap);
        assertThat(end.getNote()).contains("cut at " + cap + " bytes");
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> recorder.records().stream().anyMatch(LogRecord::isEndOfStream));
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 3));
        assertThat(recorder.onlyEnd().isLogCut()).isTrue();
        List<String> lines = fileLines(file("t1"));
        assertThat(lines.get(lines.size() - 1)).startsWith("##RLS_END state=SUCCEEDED complete=false last=3 cut=" + cap
                + " reason=the log was cut at " + cap);
        assertThat(events).containsExactly("cut t1 7 " + cap, "ended t1 7");

        // LogFiles shows the cut in the attempt's end, and the lines before it.
        List<LogRecord> read = LogFiles.read(file("t1"));
        assertThat(read.stream().filter(LogRecord::isLine).map(LogRecord::getText)).containsExactlyElementsOf(texts(1, 3));
        assertThat(read.get(read.size() - 1)).satisfies(r -> {
            assertThat(r.isEndOfStream()).isTrue();
            assertThat(r.getLogCutAt()).isEqualTo(cap);
        });
    }

    @Test
    void aRestartedManagerKeepsTheCutAndLaterAttemptsWriteOnlyTheirMarkers() throws Exception {
        long cap = bytesUpTo(2);
        start(cap);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.write("t1", 7, lines(1, 4)));
        logs.close();
        long size = Files.size(file("t1"));

        start(cap);
        assertThat(await(logs.write("t1", 7, lines(5, 6)))).as("read from the file's cut marker")
                .isEqualTo(new TaskLogManager.Written(6, false, true));
        assertThat(Files.size(file("t1"))).isEqualTo(size);
        await(logs.open("t1", "tr", 9, 2));
        assertThat(await(logs.write("t1", 9, lines(1, 3)))).as("the cap is per task: a new attempt is cut too")
                .isEqualTo(new TaskLogManager.Written(3, false, true));
        logs.complete("t1", 9, 3, TaskState.FAILED);
        LogRecord end = await(logs.follow("t1", r -> { }).whenEnded());
        assertThat(end.getEpoch()).isEqualTo(9);
        assertThat(end.isLogCut()).isTrue();
        assertThat(fileLines(file("t1"))).endsWith("##RLS_CUT at=" + cap + " limit=" + cap,
                "##RLS_ATTEMPT attempt=2 epoch=9",
                "##RLS_END state=FAILED complete=false last=0 cut=" + cap + " reason=the log was cut at " + cap
                        + " bytes, the limit of " + cap + " bytes per task: the lines after it were not kept");
        assertThat(logs.logsCut()).as("cut by the manager before").isZero();
    }

    @Test
    void anEscapedLineCountsWithItsEscapeAndOtherTasksAreNotCut() {
        long cap = bytesUpTo(1) + "##RLS_x\n".length(); // fits as printed, not with "##RLS_TEXT " before it
        start(cap);
        await(logs.open("t1", "tr", 7, 1));
        await(logs.open("t2", "tr", 7, 1));
        assertThat(await(logs.write("t1", 7, List.of(chunk(1, "line-1\n##RLS_x\n"))))).satisfies(w -> {
            assertThat(w.cut()).isTrue();
            assertThat(w.acked()).isEqualTo(2);
        });
        assertThat(fileLines(file("t1"))).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7", "line-1",
                "##RLS_CUT at=" + bytesUpTo(1) + " limit=" + cap);
        assertThat(await(logs.write("t2", 7, lines(1, 1)))).isEqualTo(new TaskLogManager.Written(1, false, false));
        assertThat(fileLines(file("t2"))).containsExactlyElementsOf(
                Stream.concat(Stream.of("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7"), texts(1, 1).stream()).toList());
    }
}
