package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.fileLines;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.internal.log.LogFixtures.Recorder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A new manager on the same directory (a master restart) carries on each log where it stopped. */
class TaskLogRecoveryTest {

    @TempDir
    Path dir;

    private TaskLogManager logs;

    @AfterEach
    void stop() {
        if (logs != null) {
            logs.close();
        }
    }

    private TaskLogManager restart() {
        if (logs != null) {
            logs.close();
        }
        logs = new TaskLogManager(dir);
        return logs;
    }

    private List<String> body(String taskId) {
        List<String> all = fileLines(dir.resolve(taskId + ".log"));
        return all.subList(2, all.size());
    }

    @Test
    void aResendAfterARestartAddsNothingTwice() {
        restart();
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 5)));
        restart();
        assertThat(await(logs.appendChunks("t1", 7, lines(3, 8)))).isEqualTo(8);
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 8)))).isEqualTo(8);
        assertThat(fileLines(dir.resolve("t1.log"))).startsWith("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7");
        assertThat(body("t1")).containsExactlyElementsOf(texts(1, 8));
    }

    @Test
    void theRecoveredEpochMakesOlderBatchesStale() {
        restart();
        await(logs.open("t1", "tr", 7, 1));
        await(logs.open("t1", "tr", 9, 2));
        await(logs.appendChunks("t1", 9, lines(1, 2)));
        restart();
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 3)))).isEqualTo(-1L);
        await(logs.open("t1", "tr", 9, 2));
        assertThat(await(logs.appendChunks("t1", 9, lines(1, 3)))).isEqualTo(3);
        // Attempt 1 printed nothing and was superseded before it ended: it left no marker.
        assertThat(fileLines(dir.resolve("t1.log"))).containsExactly("TRACE_ID:tr",
                "##RLS_ATTEMPT attempt=2 epoch=9", "line-1", "line-2", "line-3");
    }

    @Test
    void aLineCutShortByACrashIsCutOffAndWrittenAgainWhenResent() throws IOException {
        Files.writeString(dir.resolve("t1.log"), "TRACE_ID:tr\n##RLS_ATTEMPT attempt=1 epoch=7\nline-1\nline-2\nlin",
                StandardCharsets.UTF_8);
        restart();
        assertThat(await(logs.appendChunks("t1", 7, lines(2, 4)))).isEqualTo(4);
        assertThat(body("t1")).containsExactlyElementsOf(texts(1, 4));
    }

    @Test
    void aNewAttemptAfterARestartStartsItsOwnSequence() {
        restart();
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        restart();
        await(logs.open("t1", "tr", 9, 2));
        assertThat(await(logs.appendChunks("t1", 9, lines(1, 1)))).isEqualTo(1);
        assertThat(fileLines(dir.resolve("t1.log"))).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7",
                "line-1", "line-2", "line-3", "##RLS_ATTEMPT attempt=2 epoch=9", "line-1");
    }

    @Test
    void aCompletedLogStaysCompleteAfterARestart() {
        restart();
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 3)));
        logs.complete("t1", 7, 3, TaskState.SUCCEEDED);
        restart();
        assertThat(await(logs.appendChunks("t1", 7, lines(1, 5)))).as("nothing after the end").isEqualTo(3);

        Recorder recorder = new Recorder();
        LogRecord end = await(logs.follow("t1", recorder).whenEnded());
        assertThat(recorder.texts()).containsExactlyElementsOf(texts(1, 3));
        assertThat(end).isSameAs(recorder.onlyEnd());
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(end.isComplete()).isTrue();
        assertThat(end.getEpoch()).isEqualTo(7);
    }

    @Test
    void anAbandonedLogStaysEndedAfterARestart() {
        restart();
        logs.abandon("t1", TaskState.FAILED, "worker lost");
        restart();
        Recorder recorder = new Recorder();
        LogRecord end = await(logs.follow("t1", recorder).whenEnded());
        assertThat(recorder.lineCount()).isZero();
        assertThat(end.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(end.isComplete()).isFalse();
        assertThat(end.getNote()).contains("worker lost");
    }

    @Test
    void followersOfARecoveredLogGetEachAttemptInOrder() {
        restart();
        await(logs.open("t1", "tr", 7, 1));
        await(logs.appendChunks("t1", 7, lines(1, 2)));
        await(logs.open("t1", "tr", 9, 2));
        await(logs.appendChunks("t1", 9, lines(1, 1)));
        restart();
        Recorder recorder = new Recorder();
        var follow = logs.follow("t1", recorder);
        await(logs.appendChunks("t1", 9, lines(1, 2)));
        logs.complete("t1", 9, 2, TaskState.SUCCEEDED);
        await(follow.whenEnded());
        List<String> seen = new ArrayList<>();
        for (LogRecord record : recorder.lines()) {
            seen.add(record.getAttempt() + "/" + record.getEpoch() + "/" + record.getSequence() + "/" + record.getText());
        }
        assertThat(seen).containsExactly("1/7/1/line-1", "1/7/2/line-2", "2/9/1/line-1", "2/9/2/line-2");
        recorder.onlyEnd();
    }
}
