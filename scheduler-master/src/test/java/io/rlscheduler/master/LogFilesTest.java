package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.internal.log.LogFixtures;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.protocol.LogChunk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The public reader of the master's log files reads them as the master does. */
class LogFilesTest {

    @TempDir
    Path dir;

    private Path write(String taskId, String... lines) throws IOException {
        Path file = LogFiles.fileOf(dir, taskId);
        Files.writeString(file, String.join("\n", lines), StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void readsLinesWithTheirNumbersAndOneEndPerEndedAttempt() throws IOException {
        Path file = write("t1",
                "TRACE_ID:tr-1",
                "##RLS_ATTEMPT attempt=1 epoch=7",
                "one",
                "##RLS_TEXT ##RLS_END state=SUCCEEDED complete=true last=1",
                "##RLS_END state=FAILED complete=false last=2 reason=worker gone",
                "late",
                "##RLS_ATTEMPT attempt=2 epoch=9",
                "again",
                "##RLS_END state=SUCCEEDED complete=true last=1",
                "");
        List<LogRecord> records = LogFiles.read(file);

        assertThat(records).extracting(LogRecord::getKind, LogRecord::getAttempt, LogRecord::getEpoch,
                LogRecord::getSequence).containsExactly(
                        tuple(LogRecord.Kind.LINE, 1, 7L, 1L),
                        tuple(LogRecord.Kind.LINE, 1, 7L, 2L),
                        tuple(LogRecord.Kind.END_OF_STREAM, 1, 7L, 0L),
                        tuple(LogRecord.Kind.LINE, 1, 7L, 3L),
                        tuple(LogRecord.Kind.LINE, 2, 9L, 1L),
                        tuple(LogRecord.Kind.END_OF_STREAM, 2, 9L, 0L));
        assertThat(records).filteredOn(LogRecord::isLine).extracting(LogRecord::getText)
                .as("an escaped line is read back as printed").containsExactly("one",
                        "##RLS_END state=SUCCEEDED complete=true last=1", "late", "again");
        assertThat(records).allSatisfy(r -> assertThat(r.getTaskId()).isEqualTo("t1"));
        assertThat(records).allSatisfy(r -> assertThat(r.getStream()).isEqualTo(LogRecord.Stream.UNKNOWN));
        LogRecord abandoned = records.get(2);
        assertThat(abandoned.getFinalState()).isEqualTo(TaskState.FAILED);
        assertThat(abandoned.isComplete()).isFalse();
        assertThat(abandoned.getNote()).isEqualTo("worker gone");
        LogRecord completed = records.get(5);
        assertThat(completed.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(completed.isComplete()).isTrue();
        assertThat(completed.getNote()).isNull();
    }

    @Test
    void readsWhatTheManagerWrote() throws Exception {
        try (TaskLogManager logs = new TaskLogManager(dir)) {
            logs.open("t2", "tr-2", 5, 1).get(30, TimeUnit.SECONDS);
            List<LogChunk> lines = List.of(LogFixtures.chunk(1, "line-1\n##RLS_ATTEMPT forged\nline-3\n"));
            assertThat(logs.appendChunks("t2", 5, lines).get(30, TimeUnit.SECONDS)).isEqualTo(3);
            logs.complete("t2", 5, 3, TaskState.SUCCEEDED);
        } // close() writes and forces what was asked before it
        assertThat(LogFiles.read(LogFiles.fileOf(dir, "t2"))).extracting(LogRecord::getKind, LogRecord::getSequence,
                LogRecord::getText, LogRecord::getFinalState).containsExactly(
                        tuple(LogRecord.Kind.LINE, 1L, "line-1", null),
                        tuple(LogRecord.Kind.LINE, 2L, "##RLS_ATTEMPT forged", null),
                        tuple(LogRecord.Kind.LINE, 3L, "line-3", null),
                        tuple(LogRecord.Kind.END_OF_STREAM, 0L, null, TaskState.SUCCEEDED));
    }

    @Test
    void numbersLinesAfterTheLinesAnotherMasterAcknowledged() throws IOException {
        Path file = write("t1", "TRACE_ID:unknown", "##RLS_ATTEMPT attempt=0 epoch=3 after=40", "forty-one", "");
        assertThat(LogFiles.read(file)).singleElement().satisfies(r -> {
            assertThat(r.getSequence()).isEqualTo(41);
            assertThat(r.getText()).isEqualTo("forty-one");
        });
    }

    @Test
    void skipsALastLineWithoutLfAndTextBeforeAnyAttempt() throws IOException {
        Path file = write("t1", "TRACE_ID:tr", "not task output", "##RLS_ATTEMPT attempt=1 epoch=1", "whole", "cut sh");
        assertThat(LogFiles.read(file)).extracting(LogRecord::getText).containsExactly("whole");
    }

    @Test
    void aMissingFileIsNoSuchFile() {
        assertThatThrownBy(() -> LogFiles.read(dir.resolve("none.log"))).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void namesTheFileOfAValidTaskIdOnly() {
        assertThat(LogFiles.fileOf(dir, "t-1")).isEqualTo(dir.toAbsolutePath().normalize().resolve("t-1.log"));
        assertThatThrownBy(() -> LogFiles.fileOf(dir, "../escape")).isInstanceOf(IllegalArgumentException.class);
    }
}
