package io.rlscheduler.chaos;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.CheckpointEntry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The resume checks catch what they claim to: a resume from anything but the newest checkpoint
 * committed before the failure, a script whose count does not go on from it, and a commit
 * accepted from an attempt that no longer held the task.
 */
class ResumeChecksTest {

    /** Attempt 1 (epoch 10) on w1 loses the task at 5000; attempt 2 (epoch 20) on w2 is claimed at 5200 and succeeds. */
    private static final List<ResumeChecks.Move> HISTORY = List.of(
            new ResumeChecks.Move(1000, TaskState.ASSIGNED, 10, "w1"),
            new ResumeChecks.Move(1100, TaskState.RUNNING, 10, "w1"),
            new ResumeChecks.Move(5000, TaskState.QUEUED, 10, "w1"),
            new ResumeChecks.Move(5200, TaskState.ASSIGNED, 20, "w2"),
            new ResumeChecks.Move(5300, TaskState.RUNNING, 20, "w2"),
            new ResumeChecks.Move(9000, TaskState.SUCCEEDED, 20, "w2"));

    private final List<CheckpointLedger.Commit> commits = new ArrayList<>(List.of(
            commit(10, 1, 1, "w1", 2000, 10),
            commit(10, 2, 1, "w1", 3000, 20),
            commit(20, 1, 2, "w2", 6000, 30)));
    private final Map<Integer, String> notes = new HashMap<>(Map.of(2, note("e10-2")));
    private final Map<String, List<String>> printed = new HashMap<>(Map.of(
            "w1/1", List.of("chaos_task: resume point: none (no checkpoint.json)", "train.py: task t attempt 1"),
            "w2/2", List.of("chaos_task: resume point: episode 20 (checkpoint.json written by attempt 1)",
                    "train.py: task t attempt 2", "RESUMED from episode 20")));

    private static CheckpointLedger.Commit commit(long epoch, int n, int attempt, String worker, long at, int episode) {
        return new CheckpointLedger.Commit(new CheckpointEntry("e" + epoch + "-" + n, epoch, attempt, n, "m", "s", 100, 1,
                worker, Instant.ofEpochMilli(at)), episode, Integer.toString(attempt), episode < 0 ? "gone" : null);
    }

    private static String note(String from) {
        return "{\"attempt\":2,\"worker\":\"w2\",\"from\":" + (from == null ? "null" : "\"" + from + "\"") + ",\"skipped\":[]}";
    }

    private ResumeChecks.Result check(List<ResumeChecks.Move> history, Optional<TaskLogFile.TaskLog> log) {
        return ResumeChecks.check(history, commits, notes, log,
                (worker, attempt) -> Optional.ofNullable(printed.get(worker + "/" + attempt)));
    }

    private ResumeChecks.Result check() {
        return check(HISTORY, Optional.empty());
    }

    @Test
    void aResumeOnAnotherWorkerFromTheNewestCheckpointOfTheFailedAttemptPasses() {
        ResumeChecks.Result r = check();
        assertThat(r.problems).isEmpty();
        assertThat(r.resumed).isEqualTo(1);
        assertThat(r.fromAnotherWorker).isEqualTo(1);
        assertThat(r.summary).hasToString("2<w1");
    }

    @Test
    void aResumeFromAnOlderCheckpointThanTheNewestIsAViolation() {
        notes.put(2, note("e10-1"));
        assertThat(check().problems).singleElement().asString()
                .contains("attempt 2 (epoch 20 on w2) resumed from e10-1")
                .contains("expected e10-2 (attempt 1 on w1, episode 20), the newest committed before its claim");
    }

    @Test
    void aResumeFromNothingWhileACheckpointWasCommittedIsAViolation() {
        notes.put(2, note(null));
        printed.put("w2/2", List.of("chaos_task: resume point: none (no checkpoint.json)"));
        assertThat(check().problems).hasSize(2).anySatisfy(p -> assertThat(p).contains("resumed from nothing"))
                .anySatisfy(p -> assertThat(p).contains("its script resumed at episode 0"));
    }

    @Test
    void aScriptWhoseCountDoesNotGoOnFromTheCheckpointIsAViolation() {
        printed.put("w2/2", List.of("chaos_task: resume point: episode 10 (checkpoint.json written by attempt 1)",
                "RESUMED from episode 10"));
        assertThat(check().problems).singleElement().asString()
                .contains("attempt 2 (epoch 20 on w2): its script resumed at episode 10 (chaos_task: resume point: episode 10")
                .contains("expected episode 20 of e10-2");
    }

    @Test
    void aCommitAfterItsAttemptLostTheTaskIsAStaleCommitAccepted() {
        commits.add(2, commit(10, 3, 1, "w1", 5100, 25));
        notes.put(2, note("e10-3"));
        printed.put("w2/2", List.of("RESUMED from episode 25"));
        assertThat(check().problems).singleElement().asString()
                .contains("checkpoint e10-3 was committed at " + Instant.ofEpochMilli(5100))
                .contains("lost at " + Instant.ofEpochMilli(5000)).contains("a stale commit accepted");
    }

    @Test
    void withoutANoteTheWorkersLineInTheLogSaysWhatWasRestored() {
        notes.clear();
        TaskLogFile.AttemptBlock block = new TaskLogFile.AttemptBlock(20);
        block.lines.add("rl-scheduler: resuming from checkpoint e10-1 (attempt 1 on w1: 1 files, 100 bytes; 1 fetched in 2 ms)");
        Optional<TaskLogFile.TaskLog> log = Optional.of(new TaskLogFile.TaskLog(List.of(block)));
        assertThat(check(HISTORY, log).problems).anySatisfy(p -> assertThat(p)
                .contains("resumed from e10-1 (its line in the log), expected e10-2"));
    }

    @Test
    void anAttemptWithNothingCommittedBeforeItsClaimIsNotChecked() {
        commits.subList(0, 2).clear();
        notes.clear();
        printed.put("w2/2", List.of("RESUMED from episode 7"));
        ResumeChecks.Result r = check();
        assertThat(r.problems).isEmpty();
        assertThat(r.resumed).isZero();
        assertThat(r.nothingCommitted).isEqualTo(1);
        assertThat(r.fromUncommitted).isEqualTo(1);
    }

    @Test
    void aResumeFromACheckpointWhoseContentWasNotReadIsCountedUnverified() {
        commits.set(1, commit(10, 2, 1, "w1", 3000, -1));
        ResumeChecks.Result r = check();
        assertThat(r.problems).isEmpty();
        assertThat(r.unverified).isEqualTo(1);
    }

    @Test
    void anAttemptClaimedAndLostBeforeItsScriptStartedIsNotCheckedButItsSuccessorIs() {
        List<ResumeChecks.Move> history = List.of(
                new ResumeChecks.Move(1000, TaskState.ASSIGNED, 10, "w1"),
                new ResumeChecks.Move(1100, TaskState.RUNNING, 10, "w1"),
                new ResumeChecks.Move(5000, TaskState.QUEUED, 10, "w1"),
                new ResumeChecks.Move(5050, TaskState.ASSIGNED, 15, "w3"),
                new ResumeChecks.Move(5150, TaskState.QUEUED, 15, "w3"),
                new ResumeChecks.Move(5200, TaskState.ASSIGNED, 20, "w2"),
                new ResumeChecks.Move(9000, TaskState.SUCCEEDED, 20, "w2"));
        notes.clear();
        notes.put(3, note("e10-2"));
        printed.put("w2/3", printed.remove("w2/2"));
        ResumeChecks.Result r = check(history, Optional.empty());
        assertThat(r.problems).isEmpty();
        assertThat(r.resumed).isEqualTo(1);
        assertThat(r.summary).hasToString("3<w1");
    }
}
