package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static io.rlscheduler.master.internal.log.LogFixtures.fileLines;
import static io.rlscheduler.master.internal.log.LogFixtures.lines;
import static io.rlscheduler.master.internal.log.LogFixtures.texts;
import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.TaskState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two masters sharing one log directory, one after the other: a master that wrote part of a log,
 * lost the leadership while another master carried the log on, and touches the task again (it
 * leads again, or it ends the log itself) must work from the file as it is now, not from what it
 * remembers, so that a log holds one end and never a stale {@code ##RLS_END complete=false} after
 * the other master's complete end.
 */
class TaskLogSharedDirectoryTest {

    @TempDir
    Path dir;

    private TaskLogManager first;
    private TaskLogManager second;

    @BeforeEach
    void start() {
        first = new TaskLogManager(dir);
        second = new TaskLogManager(dir);
    }

    @AfterEach
    void stop() {
        first.close();
        second.close();
    }

    private List<String> body(String taskId) {
        List<String> all = fileLines(dir.resolve(taskId + ".log"));
        return all.subList(2, all.size());
    }

    @Test
    void aFormerWriterDoesNotEndALogTheOtherMasterAlreadyEnded() {
        await(first.open("t1", "tr", 7, 1));
        await(first.appendChunks("t1", 7, lines(1, 3)));
        // Leadership moves: the other master receives the rest and completes the log.
        assertThat(await(second.appendChunks("t1", 7, lines(1, 5)))).isEqualTo(5);
        second.complete("t1", 7, 5, TaskState.SUCCEEDED);
        await(second.appendChunks("t1", 7, List.of()));
        // The former leader, which never got the last lines, ends the log with what it has.
        first.abandon("t1", TaskState.SUCCEEDED, "failed by the reaper");
        await(first.appendChunks("t1", 7, List.of()));

        List<String> expected = new ArrayList<>(texts(1, 5));
        expected.add("##RLS_END state=SUCCEEDED complete=true last=5");
        assertThat(body("t1")).as("one end, the complete one").containsExactlyElementsOf(expected);
    }

    @Test
    void aFormerWriterLeadingAgainWritesNoLineTwice() {
        await(first.open("t1", "tr", 7, 1));
        await(first.appendChunks("t1", 7, lines(1, 3)));
        assertThat(await(second.appendChunks("t1", 7, lines(1, 5)))).isEqualTo(5);
        // Leadership comes back; the worker resends from the last line the first master acknowledged.
        assertThat(await(first.appendChunks("t1", 7, lines(4, 7)))).isEqualTo(7);
        assertThat(body("t1")).containsExactlyElementsOf(texts(1, 7));
    }

    @Test
    void aFormerWriterSeesANewAttemptTheOtherMasterStarted() {
        await(first.open("t1", "tr", 7, 1));
        await(first.appendChunks("t1", 7, lines(1, 3)));
        await(second.open("t1", "tr", 9, 2));
        await(second.appendChunks("t1", 9, lines(1, 2)));
        assertThat(await(first.appendChunks("t1", 7, lines(4, 5)))).as("epoch 7 is stale now").isEqualTo(-1L);
        assertThat(await(first.appendChunks("t1", 9, lines(1, 4)))).isEqualTo(4);
        assertThat(fileLines(dir.resolve("t1.log"))).containsExactly("TRACE_ID:tr", "##RLS_ATTEMPT attempt=1 epoch=7",
                "line-1", "line-2", "line-3", "##RLS_ATTEMPT attempt=2 epoch=9", "line-1", "line-2", "line-3", "line-4");
    }

    /**
     * The other master is in the middle of writing a line (here: its first bytes are in the file)
     * when this one, which only reads, follows the log: this one reads the complete lines and cuts
     * nothing; the writer finishes its line, and the follower gets it.
     */
    @Test
    void aMasterThatOnlyReadsNeverCutsALineTheOtherIsWriting() throws Exception {
        await(first.open("t1", "tr", 7, 1));
        await(first.appendChunks("t1", 7, lines(1, 3)));
        Path file = dir.resolve("t1.log");
        java.nio.file.Files.writeString(file, "lin", java.nio.file.StandardOpenOption.APPEND); // being written
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.rlscheduler.master.LogFollow follow = second.follow("t1", r -> {
            if (r.getText() != null) {
                seen.add(r.getText());
            }
        });
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> seen.equals(texts(1, 3)));
        assertThat(java.nio.file.Files.readString(file)).as("nothing cut").endsWith("line-3\nlin");

        java.nio.file.Files.writeString(file, "e-4\n", java.nio.file.StandardOpenOption.APPEND); // the write ends
        second.complete("t1", 7, 4, TaskState.SUCCEEDED);
        assertThat(await(follow.whenEnded()).isComplete()).isTrue();
        assertThat(seen).containsExactlyElementsOf(texts(1, 4));
        assertThat(body("t1")).containsExactlyElementsOf(List.of("line-1", "line-2", "line-3", "line-4",
                "##RLS_END state=SUCCEEDED complete=true last=4"));
    }

    /**
     * A former writer waits for an attempt's last lines when leadership moves; the other master
     * gets them and ends the log. When the former writer's patience runs out it finds that end
     * in the file and writes no second one.
     */
    @Test
    void aFormerWriterWhosePatienceRunsOutWritesNoSecondEnd() {
        try (TaskLogManager patient = new TaskLogManager(dir,
                TaskLogManager.Limits.defaults().withLinePatience(java.time.Duration.ofMillis(300)))) {
            await(patient.open("t2", "tr", 7, 1));
            await(patient.appendChunks("t2", 7, lines(1, 3)));
            patient.complete("t2", 7, 5, TaskState.SUCCEEDED); // lines 4 and 5 not here yet
            assertThat(await(second.appendChunks("t2", 7, lines(1, 5)))).isEqualTo(5);
            second.complete("t2", 7, 5, TaskState.SUCCEEDED);
            await(second.appendChunks("t2", 7, List.of()));
            org.awaitility.Awaitility.await().during(java.time.Duration.ofSeconds(1)).atMost(java.time.Duration.ofSeconds(5))
                    .until(() -> body("t2").equals(List.of("line-1", "line-2", "line-3", "line-4", "line-5",
                            "##RLS_END state=SUCCEEDED complete=true last=5")));
        }
    }
}
