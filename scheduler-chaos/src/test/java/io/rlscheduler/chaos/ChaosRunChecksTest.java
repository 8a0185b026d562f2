package io.rlscheduler.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** The chaos run's checks catch what they claim to: overlapping attempts and incomplete or doubled logs. */
class ChaosRunChecksTest {

    @Test
    void attemptsOneAfterTheOtherDoNotOverlap() {
        AttemptMarks marks = AttemptMarks.parse(List.of(
                "start 7 100.0 1 11", "stop 7 101.5 signal=15",
                "start 9 102.0 2 12", "stop 9 103.0 error=BrokenPipeError",
                "start 12 104.0 3 13", "stop 12 110.0 exit=0"));
        assertThat(marks.overlap()).isNull();
        assertThat(marks.completed()).isEqualTo(1);
        assertThat(marks.summary()).isEqualTo("1:term 2:error=BrokenPipeError 3:done");
    }

    @Test
    void anAttemptStartingBeforeTheEarlierOneStoppedOverlaps() {
        AttemptMarks marks = AttemptMarks.parse(List.of(
                "start 7 100.0 1 11", "start 9 102.0 2 12", "stop 9 106.0 exit=0", "stop 7 103.0 signal=15"));
        assertThat(marks.overlap()).contains("epoch 9 started at 102.000000 before epoch 7 stopped at 103.000000");
    }

    @Test
    void anAttemptOverlappingAnyEarlierOneNotOnlyTheLastIsFound() {
        // 7 runs long; 9 starts and stops inside it; 12 starts after 9 stopped but before 7 did.
        AttemptMarks marks = AttemptMarks.parse(List.of(
                "start 7 100.0 1 11", "start 9 101.0 2 12", "stop 9 102.0 signal=15", "start 12 103.0 3 13",
                "stop 7 104.0 exit=0", "stop 12 105.0 exit=0"));
        assertThat(marks.overlap()).contains("before epoch 7 stopped");
    }

    @Test
    void anAttemptWithoutAStopMarkFollowedByAnotherCountsAsOverlapping() {
        AttemptMarks marks = AttemptMarks.parse(List.of("start 7 100.0 1 11", "start 9 102.0 2 12", "stop 9 103.0 exit=0"));
        assertThat(marks.overlap()).contains("epoch 7 has no stop mark");
    }

    @Test
    void twoStartsForOneEpochCountAsOverlapping() {
        AttemptMarks marks = AttemptMarks.parse(List.of("start 7 100.0 1 11", "start 7 100.5 1 12", "stop 7 103.0 exit=0"));
        assertThat(marks.overlap()).isNotNull();
    }

    @Test
    void twoCompletedAttemptsAreARerunNotAnOverlap() {
        AttemptMarks marks = AttemptMarks.parse(List.of(
                "start 7 100.0 1 11", "stop 7 101.0 exit=0", "start 9 104.0 2 12", "stop 9 104.2 exit=0"));
        assertThat(marks.overlap()).isNull();
        assertThat(marks.completed()).isEqualTo(2);
    }

    @TempDir
    static Path dir;

    /** Writes a log file of these lines and reads it back as the checks do. */
    private static TaskLogFile.TaskLog log(String... lines) {
        try {
            Path file = dir.resolve("t.log");
            Files.write(file, List.of(lines), StandardCharsets.UTF_8);
            return TaskLogFile.read(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final List<String> PRINTED = List.of("train.py: go", "RLS_METRIC {\"episode\":1}", "done");

    @Test
    void theFinalAttemptsLinesAreComparedExactlyAfterItsMarker() {
        TaskLogFile.TaskLog log = log("TRACE_ID:t",
                "##RLS_ATTEMPT attempt=1 epoch=7", "train.py: go", "something else",
                "##RLS_ATTEMPT attempt=2 epoch=9", "train.py: go", "RLS_METRIC {\"episode\":1}", "done",
                "##RLS_END state=SUCCEEDED complete=true last=3");
        assertThat(ChaosChecks.finalAttemptProblem(log, 9, PRINTED)).isNull();
        assertThat(ChaosChecks.finalAttemptProblem(log, 7, PRINTED)).contains("differs");
        assertThat(ChaosChecks.finalAttemptProblem(log, 8, PRINTED)).contains("no line or end of epoch 8");
    }

    @Test
    void theWorkersOwnLinesInTheLogAreNotComparedWithWhatTheScriptPrinted() {
        TaskLogFile.TaskLog log = log("TRACE_ID:t", "##RLS_ATTEMPT attempt=2 epoch=9",
                "rl-scheduler: resuming from checkpoint e7-3 (attempt 1 on w1: 1 files, 900 bytes; 1 fetched in 3 ms)",
                "train.py: go", "RLS_METRIC {\"episode\":1}", "rl-scheduler: checkpoint e9-1 not committed yet: down; retrying",
                "done", "##RLS_END state=SUCCEEDED complete=true last=5");
        assertThat(ChaosChecks.finalAttemptProblem(log, 9, PRINTED)).isNull();
    }

    @Test
    void escapedLinesAreComparedAsPrinted() {
        TaskLogFile.TaskLog log = log("TRACE_ID:t", "##RLS_ATTEMPT attempt=1 epoch=9",
                "##RLS_TEXT ##RLS_END fake", "##RLS_END state=SUCCEEDED complete=true last=1");
        assertThat(ChaosChecks.finalAttemptProblem(log, 9, List.of("##RLS_END fake"))).isNull();
    }

    @Test
    void aMissingDoubledOrReorderedLineIsFound() {
        assertThat(problem("train.py: go", "done")).contains("differs from what it printed at line 2");
        assertThat(problem("train.py: go", "train.py: go", "RLS_METRIC {\"episode\":1}", "done")).contains("line 2");
        assertThat(problem("RLS_METRIC {\"episode\":1}", "train.py: go", "done")).contains("line 1");
    }

    @Test
    void anIncompleteEndOrASecondEndIsFound() {
        TaskLogFile.TaskLog incomplete = log("TRACE_ID:t", "##RLS_ATTEMPT attempt=1 epoch=9",
                "train.py: go", "RLS_METRIC {\"episode\":1}", "done", "##RLS_END state=SUCCEEDED complete=false last=3");
        assertThat(ChaosChecks.finalAttemptProblem(incomplete, 9, PRINTED)).contains("complete=false");
        TaskLogFile.TaskLog doubled = log("TRACE_ID:t", "##RLS_ATTEMPT attempt=1 epoch=9",
                "train.py: go", "RLS_METRIC {\"episode\":1}", "done", "##RLS_END state=SUCCEEDED complete=true last=3",
                "##RLS_END state=SUCCEEDED complete=false last=2 reason=stale");
        assertThat(ChaosChecks.finalAttemptProblem(doubled, 9, PRINTED)).contains("more record(s) after its end");
        TaskLogFile.TaskLog unended = log("TRACE_ID:t", "##RLS_ATTEMPT attempt=1 epoch=9",
                "train.py: go", "RLS_METRIC {\"episode\":1}", "done");
        assertThat(ChaosChecks.finalAttemptProblem(unended, 9, PRINTED)).contains("no end");
    }

    @Test
    void theLastLineHasTheExactForm() {
        ChaosReport clean = new ChaosReport(40, 40, 0, 0, 0, 2, 12, List.of());
        assertThat(clean.summary()).isEqualTo("chaos: 40 tasks, 40 succeeded exactly once, 0 lost, 0 duplicated, 0 overlapping,"
                + " 12 resumed from another worker's checkpoint");
        assertThat(clean.isClean()).isTrue();
        ChaosReport dirty = new ChaosReport(40, 38, 1, 0, 1, 0, 3, List.of("a", "b"));
        assertThat(dirty.summary()).isEqualTo("chaos: 40 tasks, 38 succeeded exactly once, 1 lost, 0 duplicated, 1 overlapping,"
                + " 3 resumed from another worker's checkpoint");
        assertThat(dirty.isClean()).isFalse();
    }

    private static String problem(String... logLines) {
        List<String> file = new java.util.ArrayList<>(List.of("TRACE_ID:t", "##RLS_ATTEMPT attempt=1 epoch=9"));
        file.addAll(List.of(logLines));
        file.add("##RLS_END state=SUCCEEDED complete=true last=" + logLines.length);
        return ChaosChecks.finalAttemptProblem(log(file.toArray(new String[0])), 9, PRINTED);
    }
}
