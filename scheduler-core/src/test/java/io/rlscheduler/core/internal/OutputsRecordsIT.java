package io.rlscheduler.core.internal;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.running;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.OutputsState;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fenced records of what each attempt left in its run directory (outputs.lua), against a real Redis. */
class OutputsRecordsIT {

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

    private WriteStatus record(TaskLease lease, String worker, String session, int attempt, OutputsState state, String error) {
        return join(artifacts.recordOutputs(lease, worker, session, new OutputsNote(attempt, state,
                "tasks/t/outputs/attempt-" + attempt + ".manifest.json", 3, (1L << 50) + 7, error,
                List.of("a\\x0ab.txt: a name that cannot be stored"), 1))).getStatus();
    }

    @Test
    void theAttemptThatEndedRecordsPendingThenCompleteAndAReplayChangesNothing() {
        TaskLease lease = running(core, "w1", "s");
        join(core.finish(lease, "w1", "s", TaskState.FAILED, 1, "exited with code 1", null));
        assertThat(join(artifacts.outputs("t"))).isEmpty();

        assertThat(record(lease, "w1", "s", 1, OutputsState.PENDING, "")).isEqualTo(WriteStatus.APPLIED);
        assertThat(join(artifacts.outputs("t"))).singleElement().satisfies(o -> {
            assertThat(o.getState()).isEqualTo(OutputsState.PENDING);
            assertThat(o.isComplete()).isFalse();
        });
        assertThat(record(lease, "w1", "s", 1, OutputsState.PENDING, "waiting for the store")).isEqualTo(WriteStatus.APPLIED);
        assertThat(record(lease, "w1", "s", 1, OutputsState.COMPLETE, "")).isEqualTo(WriteStatus.APPLIED);
        assertThat(record(lease, "w1", "s", 1, OutputsState.COMPLETE, "")).isEqualTo(WriteStatus.DUPLICATE);
        assertThat(record(lease, "w1", "s", 1, OutputsState.INCOMPLETE, "x")).isEqualTo(WriteStatus.WRONG_STATE);
        assertThat(record(lease, "w1", "s", 1, OutputsState.PENDING, "")).isEqualTo(WriteStatus.WRONG_STATE);

        AttemptOutputs o = join(artifacts.outputs("t")).get(0);
        assertThat(o.getState()).isEqualTo(OutputsState.COMPLETE);
        assertThat(o.isComplete()).isTrue();
        assertThat(o.getAttempt()).isEqualTo(1);
        assertThat(o.getEpoch()).isEqualTo(lease.getEpoch());
        assertThat(o.getWorkerId()).isEqualTo("w1");
        assertThat(o.getManifestKey()).isEqualTo("tasks/t/outputs/attempt-1.manifest.json");
        assertThat(o.getFiles()).isEqualTo(3);
        assertThat(o.getBytes()).as("exact past Lua's doubles").isEqualTo((1L << 50) + 7);
        assertThat(o.getError()).isEmpty();
        assertThat(o.getSkipped()).containsExactly("a\\x0ab.txt: a name that cannot be stored");
        assertThat(o.getSkippedCount()).isEqualTo(1);
        assertThat(o.getUpdatedAtMillis()).isPositive();
    }

    @Test
    void writesOfAnAttemptThatDoesNotHoldTheTaskAreRefusedAndChangeNothing() {
        TaskLease lease = running(core, "w1", "s");
        join(core.register(worker("w2", "s2")));
        assertThat(record(new TaskLease("t", lease.getEpoch() + 1), "w1", "s", 1, OutputsState.COMPLETE, ""))
                .isEqualTo(WriteStatus.STALE);
        assertThat(record(lease, "w2", "s2", 1, OutputsState.COMPLETE, "")).isEqualTo(WriteStatus.STALE);
        assertThat(record(lease, "w1", "other-session", 1, OutputsState.COMPLETE, "")).isEqualTo(WriteStatus.WRONG_SESSION);
        assertThat(record(lease, "w1", "s", 2, OutputsState.COMPLETE, "")).as("another attempt's number")
                .isEqualTo(WriteStatus.STALE);
        assertThat(join(artifacts.recordOutputs(new TaskLease("nope", 1), "w1", "s", new OutputsNote(1,
                OutputsState.COMPLETE, "m", 0, 0, "", List.of(), 0))).getStatus()).isEqualTo(WriteStatus.UNKNOWN_TASK);
        assertThat(join(artifacts.outputs("t"))).isEmpty();
    }

    @Test
    void anAttemptWhoseTaskWasTakenBackCannotRecordButTheNextAttemptRecordsItsOwn() {
        TaskLease first = running(core, "w1", "s");
        // The worker restarts with a new session: its task is taken back and re-queued.
        assertThat(join(core.register(worker("w1", "s-new"))).getRequeued()).containsExactly("t");
        assertThat(record(first, "w1", "s", 1, OutputsState.INCOMPLETE, "fenced")).isEqualTo(WriteStatus.STALE);

        join(core.register(worker("w2", "s2")));
        Assignment a = join(core.claim("w2", "s2", 1, requestId())).getAssignments().get(0);
        TaskLease second = new TaskLease("t", a.getEpoch());
        join(core.acknowledge(second, "w2", "s2"));
        assertThat(record(second, "w2", "s2", 2, OutputsState.COMPLETE, "")).as("recorded while it runs")
                .isEqualTo(WriteStatus.APPLIED);
        assertThat(join(artifacts.outputs("t"))).extracting(AttemptOutputs::getAttempt, AttemptOutputs::getWorkerId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(2, "w2"));
    }

    @Test
    void theRecordListsAtMostTheFirstEntriesLeftOutAndCountsThemAll() {
        TaskLease lease = running(core, "w1", "s");
        List<String> many = java.util.stream.IntStream.range(0, 50).mapToObj(i -> "f" + i + ": over maxOutputFiles (10)").toList();
        join(artifacts.recordOutputs(lease, "w1", "s", new OutputsNote(1, OutputsState.INCOMPLETE, "m", 10, 10,
                "50 files over maxOutputFiles (10) not stored", many, 50)));
        AttemptOutputs o = join(artifacts.outputs("t")).get(0);
        assertThat(o.getSkipped()).hasSize(AttemptOutputs.MAX_LISTED).startsWith("f0: over maxOutputFiles (10)");
        assertThat(o.getSkippedCount()).isEqualTo(50);
        assertThat(o.getState()).isEqualTo(OutputsState.INCOMPLETE);
    }
}
