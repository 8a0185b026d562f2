package io.rlscheduler.master;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.internal.ProvenanceFormat;
import io.rlscheduler.core.internal.RecordFixture;
import java.util.List;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RunComparison} flags runs whose code differed, from their attempts' provenance. */
class RunComparisonTest {

    private static final String SHA_A = "a1".repeat(32);
    private static final String SHA_B = "b2".repeat(32);
    private static final String COMMIT_1 = "c1".repeat(20);
    private static final String COMMIT_2 = "d2".repeat(20);

    private static AttemptProvenance attempt(String taskId, int attempt, String sha, String commit, boolean dirty) {
        return ProvenanceFormat.of(taskId, attempt, 1000L + attempt, "w1", "box", "/scripts/train.py", sha, commit, dirty,
                "python3", "Python 3.11.7", List.of(), List.of());
    }

    /** Runs run-1, run-2, ... of train.py with lr 0.1, 0.2, ..., each with the given attempts. */
    @SafeVarargs
    private static RunComparison compare(List<AttemptProvenance>... attempts) {
        List<io.rlscheduler.core.TaskRecord> records = new java.util.ArrayList<>();
        for (int i = 0; i < attempts.length; i++) {
            records.add(RecordFixture.queued("run-" + (i + 1),
                    "{\"script\":\"train.py\",\"parameters\":{\"lr\":0." + (i + 1) + "}}"));
        }
        return RunComparison.of(records, List.of(attempts));
    }

    @Test
    void runsOfTheSameCodeAreNotFlaggedAndTheTableNamesTheirCodeOnce() {
        RunComparison c = compare(List.of(attempt("run-1", 1, SHA_A, COMMIT_1, false)),
                List.of(attempt("run-2", 1, SHA_A, COMMIT_1, false), attempt("run-2", 2, SHA_A, COMMIT_1, false)));

        assertThat(c.isCodeDiffering()).isFalse();
        assertThat(c.getRuns().get(1).getProvenance()).extracting(AttemptProvenance::getAttempt).containsExactly(1, 2);
        assertThat(c.toTable()).isEqualTo("""
                2 runs of train.py at sha256:a1a1a1a1a1a1 git:c1c1c1c1c1c1; the same in all: (no parameter)
                task   state   lr
                run-1  QUEUED  0.1
                run-2  QUEUED  0.2
                """);
    }

    @Test
    void aDifferentScriptHashCommitOrDirtyTreeIsFlaggedAndShownPerRun() {
        List<AttemptProvenance> base = List.of(attempt("run-1", 1, SHA_A, COMMIT_1, false));
        assertThat(compare(base, List.of(attempt("run-2", 1, SHA_B, COMMIT_1, false))).isCodeDiffering())
                .as("another script hash").isTrue();
        assertThat(compare(base, List.of(attempt("run-2", 1, SHA_A, COMMIT_2, false))).isCodeDiffering())
                .as("another commit").isTrue();
        assertThat(compare(base, List.of(attempt("run-2", 1, SHA_A, null, false))).isCodeDiffering())
                .as("outside a work tree").isTrue();

        RunComparison dirty = compare(base, List.of(attempt("run-2", 1, SHA_A, COMMIT_1, true)), List.of());
        assertThat(dirty.isCodeDiffering()).as("a dirty tree").isTrue();
        assertThat(dirty.toTable()).isEqualTo("""
                3 runs of train.py, their code differing; the same in all: (no parameter)
                task   state   code                                        lr
                run-1  QUEUED  sha256:a1a1a1a1a1a1 git:c1c1c1c1c1c1        0.1
                run-2  QUEUED  sha256:a1a1a1a1a1a1 git:c1c1c1c1c1c1+dirty  0.2
                run-3  QUEUED  -                                           0.3
                """);
    }

    @Test
    void attemptsOfOneRunThatRanDifferentCodeAreFlagged() {
        RunComparison c = compare(List.of(attempt("run-1", 1, SHA_A, COMMIT_1, false),
                attempt("run-1", 2, SHA_B, COMMIT_2, false)));

        assertThat(c.isCodeDiffering()).isTrue();
        assertThat(c.toTable()).contains("run-1  QUEUED  sha256:b2b2b2b2b2b2 git:d2d2d2d2d2d2 (attempts differ)");
    }

    @Test
    void runsWithoutProvenanceAreNotCountedAndRunsWithoutAScriptFileCompareEqual() {
        assertThat(compare(List.of(attempt("run-1", 1, SHA_A, COMMIT_1, false)), List.of()).isCodeDiffering()).isFalse();
        assertThat(compare(List.of(), List.of()).isCodeDiffering()).isFalse();
        AttemptProvenance inJvm = ProvenanceFormat.of("run-1", 1, 1L, "w1", "box", null, null, null, false, null, null,
                List.of(0), java.util.Arrays.asList((String) null));
        RunComparison c = compare(List.of(inJvm), List.of(inJvm));
        assertThat(c.isCodeDiffering()).isFalse();
        assertThat(c.toTable()).startsWith("2 runs of train.py at (no script file); ");
    }
}
