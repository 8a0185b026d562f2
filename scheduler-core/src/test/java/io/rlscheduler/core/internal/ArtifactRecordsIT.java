package io.rlscheduler.core.internal;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fenced, forward-only move of a task's latest-checkpoint pointer (checkpoint.lua), and the published store, against a real Redis. */
class ArtifactRecordsIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private ArtifactRecords artifacts;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = CoreFixture.core(client, ns);
        artifacts = core.artifacts();
    }

    @AfterEach
    void close() {
        core.close();
    }

    /** Registers w1 (session s), submits and claims task t, acknowledges it; returns its lease. */
    private TaskLease running(String worker, String session) {
        return CoreFixture.running(core, worker, session);
    }

    private CheckpointCommit commit(TaskLease lease, String worker, String session, int n, int keep) {
        return join(artifacts.commit(lease, worker, session, 1, n, "tasks/t/checkpoints/e" + lease.getEpoch() + "-" + n
                + ".manifest.json", "ab".repeat(32), 100L * n, n, keep, 0));
    }

    @Test
    void theHolderMovesThePointerForwardOnlyAndAReplayChangesNothing() {
        TaskLease lease = running("w1", "s");
        assertThat(join(artifacts.committed("t"))).isEmpty();
        assertThat(commit(lease, "w1", "s", 1, 5).status()).isEqualTo(CheckpointCommit.Status.COMMITTED);
        CheckpointCommit third = commit(lease, "w1", "s", 3, 5);
        assertThat(third.status()).isEqualTo(CheckpointCommit.Status.COMMITTED);
        assertThat(third.id()).isEqualTo("e" + lease.getEpoch() + "-3");

        assertThat(commit(lease, "w1", "s", 3, 5).status()).isEqualTo(CheckpointCommit.Status.DUPLICATE);
        assertThat(commit(lease, "w1", "s", 1, 5).status()).as("a replay of a kept one that is not the newest")
                .isEqualTo(CheckpointCommit.Status.DUPLICATE);
        CheckpointCommit behind = commit(lease, "w1", "s", 2, 5);
        assertThat(behind.status()).isEqualTo(CheckpointCommit.Status.BEHIND);
        assertThat(behind.id()).isEqualTo(third.id());

        List<CheckpointEntry> list = join(artifacts.committed("t"));
        assertThat(list).extracting(CheckpointEntry::number).containsExactly(3, 1);
        CheckpointEntry newest = list.get(0);
        assertThat(newest.epoch()).isEqualTo(lease.getEpoch());
        assertThat(newest.bytes()).isEqualTo(300);
        assertThat(newest.files()).isEqualTo(3);
        assertThat(newest.workerId()).isEqualTo("w1");
        assertThat(newest.manifestKey()).endsWith("-3.manifest.json");
    }

    /**
     * A commit replayed after its attempt lost the task (Lettuce re-sends a command whose answer a
     * broken connection lost, as when Redis restarts from its AOF) answers DUPLICATE, not STALE:
     * the worker deletes the objects of a checkpoint it is told was not committed.
     */
    @Test
    void aCommitReplayedAfterItsAttemptLostTheTaskAnswersDuplicateWhileTheCheckpointIsKept() {
        TaskLease first = running("w1", "s");
        assertThat(commit(first, "w1", "s", 1, 2).status()).isEqualTo(CheckpointCommit.Status.COMMITTED);
        assertThat(join(core.register(worker("w1", "s-new"))).getRequeued()).containsExactly("t");

        CheckpointCommit replay = commit(first, "w1", "s", 1, 2);
        assertThat(replay.status()).isEqualTo(CheckpointCommit.Status.DUPLICATE);
        assertThat(replay.id()).isEqualTo("e" + first.getEpoch() + "-1");
        assertThat(replay.evicted()).isEmpty();
        assertThat(commit(first, "w1", "s", 2, 2).status()).as("a new one of the lost attempt")
                .isEqualTo(CheckpointCommit.Status.STALE);
        assertThat(join(artifacts.committed("t"))).extracting(CheckpointEntry::number).containsExactly(1);
    }

    @Test
    void writesOfAnAttemptThatDoesNotHoldTheTaskAreRefusedAndChangeNothing() {
        TaskLease lease = running("w1", "s");
        commit(lease, "w1", "s", 1, 5);
        join(core.register(worker("w2", "s2")));
        assertThat(commit(new TaskLease("t", lease.getEpoch() + 1), "w1", "s", 2, 5).status())
                .isEqualTo(CheckpointCommit.Status.STALE);
        assertThat(commit(lease, "w2", "s2", 2, 5).status()).isEqualTo(CheckpointCommit.Status.STALE);
        assertThat(commit(lease, "w1", "other-session", 2, 5).status()).isEqualTo(CheckpointCommit.Status.WRONG_SESSION);
        assertThat(join(artifacts.commit(new TaskLease("nope", 1), "w1", "s", 1, 1, "k", "x", 1, 1, 1, 0)).status())
                .isEqualTo(CheckpointCommit.Status.UNKNOWN_TASK);
        assertThat(join(artifacts.noteRestore(new TaskLease("t", lease.getEpoch() + 1), "w1", "s", 1, "{}"))).isFalse();
        assertThat(join(artifacts.committed("t"))).extracting(CheckpointEntry::number).containsExactly(1);
        assertThat(join(artifacts.restores("t"))).isEmpty();
    }

    @Test
    void anAttemptWhoseTaskWasTakenBackCannotCommitButTheNextAttemptGoesOnFromItsCheckpoints() {
        TaskLease first = running("w1", "s");
        commit(first, "w1", "s", 1, 5);
        // The worker restarts with a new session: its task is taken back and re-queued.
        assertThat(join(core.register(worker("w1", "s-new"))).getRequeued()).containsExactly("t");
        assertThat(commit(first, "w1", "s", 2, 5).status()).isEqualTo(CheckpointCommit.Status.STALE);

        join(core.register(worker("w2", "s2")));
        Assignment a = join(core.claim("w2", "s2", 1, requestId())).getAssignments().get(0);
        TaskLease second = new TaskLease("t", a.getEpoch());
        assertThat(second.getEpoch()).isGreaterThan(first.getEpoch());
        join(core.acknowledge(second, "w2", "s2"));
        assertThat(join(artifacts.noteRestore(second, "w2", "s2", 2, "{\"from\":\"e" + first.getEpoch() + "-1\"}"))).isTrue();
        // Number 1 of a later epoch is newer than number 1 of an earlier one.
        assertThat(join(artifacts.commit(second, "w2", "s2", 2, 1, "m", "cd".repeat(32), 5, 1, 5, 0)).status())
                .isEqualTo(CheckpointCommit.Status.COMMITTED);
        assertThat(join(artifacts.committed("t"))).extracting(CheckpointEntry::epoch)
                .containsExactly(second.getEpoch(), first.getEpoch());
        assertThat(join(artifacts.restores("t"))).containsOnlyKeys(2);
    }

    @Test
    void theNewestAreKeptAndTheDroppedOnesReturnedForDeletion() {
        TaskLease lease = running("w1", "s");
        commit(lease, "w1", "s", 1, 2);
        commit(lease, "w1", "s", 2, 2);
        CheckpointCommit third = commit(lease, "w1", "s", 3, 2);
        assertThat(third.evicted()).extracting(CheckpointEntry::number).containsExactly(1);
        assertThat(join(artifacts.committed("t"))).extracting(CheckpointEntry::number).containsExactly(3, 2);
        assertThat(commit(lease, "w1", "s", 4, 2).evicted()).extracting(CheckpointEntry::manifestKey)
                .containsExactly("tasks/t/checkpoints/e" + lease.getEpoch() + "-2.manifest.json");
    }

    @Test
    void theLastCommitOfAnAttemptThatEndedIsStillItsToMake() {
        TaskLease lease = running("w1", "s");
        join(core.finish(lease, "w1", "s", TaskState.FAILED, 1, "boom", null));
        assertThat(commit(lease, "w1", "s", 1, 5).status()).isEqualTo(CheckpointCommit.Status.COMMITTED);
    }

    @Test
    void theStoreTheMastersPublishIsReadBack() {
        assertThat(join(artifacts.publishedStore())).isNull();
        assertThat(join(artifacts.publishStore("file:/srv/runs/"))).isNull();
        assertThat(join(artifacts.publishStore("s3://lab/runs"))).isEqualTo("file:/srv/runs/");
        assertThat(join(artifacts.publishedStore())).isEqualTo("s3://lab/runs");
    }

    @Test
    void aCheckpointThatWouldTakeTheTaskOverItsByteLimitIsRefusedAndSaidInTheRecord() {
        TaskLease lease = running("w1", "s");
        assertThat(join(artifacts.commit(lease, "w1", "s", 1, 1, "m1", "ab".repeat(32), 600, 1, 2, 1000)).status())
                .isEqualTo(CheckpointCommit.Status.COMMITTED);
        // With two kept, 600 + 500 would be held together: over 1000.
        CheckpointCommit over = join(artifacts.commit(lease, "w1", "s", 1, 2, "m2", "ab".repeat(32), 500, 1, 2, 1000));
        assertThat(over.status()).isEqualTo(CheckpointCommit.Status.TOO_LARGE);
        assertThat(join(artifacts.committed("t"))).extracting(CheckpointEntry::number).containsExactly(1);
        assertThat(CoreFixture.record(core, "t").getArtifactError())
                .isEqualTo("checkpoint e" + lease.getEpoch() + "-2 not committed: the 2 kept checkpoints would hold 1100 bytes,"
                        + " over the task's limit of 1000 bytes (maxCheckpointBytes)");
        // One that fits is committed, and clears the error.
        assertThat(join(artifacts.commit(lease, "w1", "s", 1, 3, "m3", "ab".repeat(32), 300, 1, 2, 1000)).status())
                .isEqualTo(CheckpointCommit.Status.COMMITTED);
        assertThat(CoreFixture.record(core, "t").getArtifactError()).isEmpty();
    }

    @Test
    void aLogCutIsNotedInTheTaskRecordOnceAndTheFirstNoteStays() {
        TaskLease lease = running("w1", "s");
        assertThat(join(core.getTask("t")).orElseThrow().isLogCut()).isFalse();
        assertThat(join(core.getTask("t")).orElseThrow().getLogCutAt()).isEqualTo(-1);

        assertThat(join(artifacts.noteLogCut("t", 4096))).isTrue();
        assertThat(join(artifacts.noteLogCut("t", 9999))).as("written once").isFalse();
        assertThat(join(artifacts.noteLogCut("no-such-task", 1))).isFalse();
        var record = join(core.getTask("t")).orElseThrow();
        assertThat(record.isLogCut()).isTrue();
        assertThat(record.getLogCutAt()).isEqualTo(4096);
        assertThat(record.getState()).as("the task runs on").isEqualTo(TaskState.RUNNING);
        assertThat(record.getEpoch()).isEqualTo(lease.getEpoch());
    }
}
