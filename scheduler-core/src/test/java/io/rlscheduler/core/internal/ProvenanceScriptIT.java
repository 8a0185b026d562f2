package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.lease;
import static io.rlscheduler.core.internal.CoreFixture.record;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * provenance.lua, and finish.lua carrying an attempt's provenance, against a real Redis: the holder's
 * provenance is stored; nobody else's is.
 */
class ProvenanceScriptIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final String SHA = "a".repeat(64);
    private static final String COMMIT = "c".repeat(40);

    private LeaseCore core;
    private RedisClient client;
    private RedisNamespace ns;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = CoreFixture.core(client, ns);
        this.client = client;
        this.ns = ns;
    }

    @AfterEach
    void close() {
        core.close();
    }

    private TaskLease claimOne(String worker, String session) {
        ClaimResult claim = join(core.claim(worker, session, 1, requestId()));
        assertThat(claim.getAssignments()).hasSize(1);
        return lease(claim.getAssignments().get(0));
    }

    /** Registers w1 (session s1, GPU 0), submits t1 (one GPU) and has w1 claim and acknowledge it. */
    private TaskLease runningT1() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = claimOne("w1", "s1");
        join(core.acknowledge(lease, "w1", "s1"));
        return lease;
    }

    private static AttemptProvenance provenance(TaskLease lease, int attempt, String worker, String sha) {
        return ProvenanceFormat.of(lease.getTaskId(), attempt, lease.getEpoch(), worker, "box-1", "/scripts/train.py", sha,
                COMMIT, true, "python3", "Python 3.11.7", List.of(0, 1), Arrays.asList("GPU-0000", null));
    }

    private Map<String, String> stored(String taskId) {
        try (var connection = client.connect()) {
            return connection.sync().hgetall(new Keys(ns.name()).provenance(taskId));
        }
    }

    @Test
    void theHoldersProvenanceIsStoredUnderItsAttemptAndReadBackAsWritten() {
        join(core.register(worker("w1", "s1", 0, 1)));
        join(core.submit(task("t1", 2)));
        TaskLease lease = claimOne("w1", "s1");
        join(core.acknowledge(lease, "w1", "s1"));
        String before = record(core, "t1").toString();

        WriteResult written = join(core.provenance().record(provenance(lease, 1, "w1", SHA), "s1"));

        assertThat(written.getStatus()).isEqualTo(WriteStatus.APPLIED);
        assertThat(record(core, "t1").toString()).as("the task record is not written").isEqualTo(before);
        assertThat(stored("t1")).containsOnlyKeys("1");
        List<AttemptProvenance> read = join(core.provenance().of("t1"));
        assertThat(read).singleElement().satisfies(p -> {
            assertThat(p.getTaskId()).isEqualTo("t1");
            assertThat(p.getAttempt()).isEqualTo(1);
            assertThat(p.getEpoch()).isEqualTo(lease.getEpoch());
            assertThat(p.getWorkerId()).isEqualTo("w1");
            assertThat(p.getHostname()).isEqualTo("box-1");
            assertThat(p.getScriptFile()).isEqualTo("/scripts/train.py");
            assertThat(p.getScriptSha256()).isEqualTo(SHA);
            assertThat(p.getGitCommit()).isEqualTo(COMMIT);
            assertThat(p.isGitDirty()).isTrue();
            assertThat(p.getInterpreter()).isEqualTo("python3");
            assertThat(p.getInterpreterVersion()).isEqualTo("Python 3.11.7");
            assertThat(p.getGpus()).extracting(AttemptProvenance.Gpu::getIndex).containsExactly(0, 1);
            assertThat(p.getGpus()).extracting(AttemptProvenance.Gpu::getUuid).containsExactly("GPU-0000", null);
        });
        assertThat(join(core.provenance().record(provenance(lease, 1, "w1", SHA), "s1")).getStatus())
                .isEqualTo(WriteStatus.DUPLICATE);
    }

    @Test
    void anAttemptThatRanNoFileHasOnlyItsHostAndGpus() {
        join(core.register(worker("w1", "s1", 3)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = claimOne("w1", "s1");
        join(core.acknowledge(lease, "w1", "s1"));
        AttemptProvenance inJvm = ProvenanceFormat.of("t1", 1, lease.getEpoch(), "w1", "box-1", null, null, null, true,
                null, null, List.of(3), Arrays.asList((String) null));

        assertThat(join(core.provenance().record(inJvm, "s1")).getStatus()).isEqualTo(WriteStatus.APPLIED);

        assertThat(stored("t1").get("1")).isEqualTo("{\"epoch\":\"" + lease.getEpoch()
                + "\",\"worker\":\"w1\",\"host\":\"box-1\",\"gpus\":[{\"index\":3}]}");
        AttemptProvenance read = join(core.provenance().of("t1")).get(0);
        assertThat(read.getScriptFile()).isNull();
        assertThat(read.getScriptSha256()).isNull();
        assertThat(read.getGitCommit()).isNull();
        assertThat(read.isGitDirty()).as("no commit, so not dirty").isFalse();
        assertThat(read.getInterpreter()).isNull();
        assertThat(read.getGpus()).singleElement().satisfies(g -> {
            assertThat(g.getIndex()).isEqualTo(3);
            assertThat(g.getUuid()).isNull();
        });
    }

    @Test
    void aStaleEpochAForeignWorkerOrSessionAndAnUnknownTaskStoreNothing() {
        TaskLease lease = runningT1();
        join(core.register(worker("w2", "s2", 0)));

        TaskLease stale = new TaskLease("t1", lease.getEpoch() - 1);
        assertThat(join(core.provenance().record(provenance(stale, 1, "w1", SHA), "s1")).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(join(core.provenance().record(provenance(lease, 1, "w2", SHA), "s2")).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(join(core.provenance().record(provenance(lease, 1, "w1", SHA), "s-other")).getStatus())
                .isEqualTo(WriteStatus.WRONG_SESSION);
        assertThat(join(core.provenance().record(provenance(new TaskLease("nope", lease.getEpoch()), 1, "w1", SHA), "s1"))
                .getStatus()).isEqualTo(WriteStatus.UNKNOWN_TASK);

        assertThat(stored("t1")).isEmpty();
        assertThat(stored("nope")).isEmpty();
        assertThat(join(core.provenance().of("t1"))).isEmpty();
    }

    @Test
    void anAttemptThatLostTheTaskCannotOverwriteTheNextAttemptsProvenance() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease first = claimOne("w1", "s1");
        join(core.acknowledge(first, "w1", "s1"));
        assertThat(join(core.provenance().record(provenance(first, 1, "w1", SHA), "s1")).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        // A new session of the worker: the old one's task is taken back and claimed again.
        assertThat(join(core.register(worker("w1", "s2", 0))).getRequeued()).containsExactly("t1");
        TaskLease second = claimOne("w1", "s2");
        join(core.acknowledge(second, "w1", "s2"));
        assertThat(join(core.provenance().record(provenance(second, 2, "w1", "b".repeat(64)), "s2")).getStatus())
                .isEqualTo(WriteStatus.APPLIED);

        // The first attempt's write comes late, changed: refused, both attempts as they were.
        assertThat(join(core.provenance().record(provenance(first, 1, "w1", "d".repeat(64)), "s1")).getStatus())
                .isEqualTo(WriteStatus.STALE);
        join(core.finish(second, "w1", "s2", TaskState.SUCCEEDED, 0, null, null));
        assertThat(join(core.provenance().of("t1"))).extracting(AttemptProvenance::getAttempt, AttemptProvenance::getEpoch,
                AttemptProvenance::getScriptSha256).containsExactly(
                org.assertj.core.groups.Tuple.tuple(1, first.getEpoch(), SHA),
                org.assertj.core.groups.Tuple.tuple(2, second.getEpoch(), "b".repeat(64)));
    }

    @Test
    void anEndThatCarriesTheProvenanceStoresItInTheSameRunAsAStandaloneWriteWould() {
        join(core.register(worker("w1", "s1", 0, 1)));
        join(core.submit(task("t1", 2)));
        join(core.submit(task("t2", 2)));
        TaskLease lease = claimOne("w1", "s1");
        join(core.acknowledge(lease, "w1", "s1"));

        WriteResult ended = join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, 0,
                provenance(lease, 1, "w1", SHA)));

        assertThat(ended.getStatus()).isEqualTo(WriteStatus.APPLIED);
        assertThat(record(core, lease.getTaskId()).getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(stored(lease.getTaskId())).containsOnlyKeys("1");
        assertThat(join(core.provenance().of(lease.getTaskId()))).singleElement().satisfies(p -> {
            assertThat(p.getEpoch()).isEqualTo(lease.getEpoch());
            assertThat(p.getScriptSha256()).isEqualTo(SHA);
            assertThat(p.getGpus()).extracting(AttemptProvenance.Gpu::getUuid).containsExactly("GPU-0000", null);
        });
        // The same bytes as provenance.lua would have stored.
        join(core.register(worker("w2", "s2", 0, 1)));
        TaskLease other = claimOne("w2", "s2");
        join(core.acknowledge(other, "w2", "s2"));
        join(core.provenance().record(provenance(other, 1, "w2", SHA), "s2"));
        assertThat(stored(other.getTaskId()).get("1").replace(Long.toString(other.getEpoch()), "E").replace("w2", "W"))
                .isEqualTo(stored(lease.getTaskId()).get("1").replace(Long.toString(lease.getEpoch()), "E")
                        .replace("w1", "W"));
    }

    @Test
    void aReplayedEndKeepsTheFirstProvenanceAndAStaleOrForeignEndStoresNone() {
        TaskLease lease = runningT1();
        join(core.register(worker("w2", "s2", 0)));

        TaskLease stale = new TaskLease("t1", lease.getEpoch() - 1);
        assertThat(join(core.finish(stale, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, 0,
                provenance(stale, 1, "w1", SHA))).getStatus()).isEqualTo(WriteStatus.STALE);
        assertThat(join(core.finish(lease, "w2", "s2", TaskState.SUCCEEDED, 0, null, null, null, 0,
                provenance(lease, 1, "w2", SHA))).getStatus()).isEqualTo(WriteStatus.STALE);
        assertThat(join(core.finish(lease, "w1", "s-other", TaskState.SUCCEEDED, 0, null, null, null, 0,
                provenance(lease, 1, "w1", SHA))).getStatus()).isEqualTo(WriteStatus.WRONG_SESSION);
        assertThat(stored("t1")).as("no refused end stored anything").isEmpty();
        assertThat(record(core, "t1").getState()).isEqualTo(TaskState.RUNNING);

        assertThat(join(core.finish(lease, "w1", "s1", TaskState.FAILED, 1, "boom", null, null, 0,
                provenance(lease, 1, "w1", SHA))).getStatus()).isEqualTo(WriteStatus.APPLIED);
        // A replay (the first answer lost), carrying other bytes: DUPLICATE, the first provenance kept.
        assertThat(join(core.finish(lease, "w1", "s1", TaskState.FAILED, 1, "boom", null, null, 0,
                provenance(lease, 1, "w1", "d".repeat(64)))).getStatus()).isEqualTo(WriteStatus.DUPLICATE);
        assertThat(join(core.provenance().of("t1"))).singleElement()
                .satisfies(p -> assertThat(p.getScriptSha256()).isEqualTo(SHA));
    }

    @Test
    void anEndWithoutProvenanceStoresNoneAndTheProvenanceWrittenAloneAfterItIsTaken() {
        TaskLease lease = runningT1();

        assertThat(join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, 0, null)).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        assertThat(stored("t1")).isEmpty();
        // Collected too late for the end: written alone afterwards, still the holder's.
        assertThat(join(core.provenance().record(provenance(lease, 1, "w1", SHA), "s1")).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        assertThat(stored("t1")).containsOnlyKeys("1");
    }

    @Test
    void anEndCarryingAnotherAttemptsProvenanceIsRefusedBeforeAnythingRuns() {
        TaskLease lease = runningT1();

        org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> core.finish(lease, "w1", "s1",
                TaskState.SUCCEEDED, 0, null, null, null, 0, provenance(new TaskLease("t1", lease.getEpoch() + 1), 1, "w1", SHA)))
                .withMessageContaining("not that of the attempt ending");
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> core.finish(lease, "w1", "s1",
                TaskState.SUCCEEDED, 0, null, null, null, 0, provenance(lease, 1, "w2", SHA)));
        assertThat(record(core, "t1").getState()).isEqualTo(TaskState.RUNNING);
        assertThat(stored("t1")).isEmpty();
    }

    @Test
    void endsSharingOneRunEachStoreTheirOwnProvenanceOnly() {
        join(core.register(worker("w1", "s1", 0, 1, 2, 3, 4, 5, 6, 7)));
        for (int i = 0; i < 8; i++) {
            join(core.submit(task("b" + i, 1)));
        }
        ClaimResult claim = join(core.claim("w1", "s1", 8, requestId()));
        assertThat(claim.getAssignments()).hasSize(8);
        List<TaskLease> leases = claim.getAssignments().stream().map(CoreFixture::lease).toList();
        for (TaskLease l : leases) {
            join(core.acknowledge(l, "w1", "s1"));
        }

        // Sent without waiting, so that they share script runs (LeaseCore batches concurrent ends):
        // the even ones carry their provenance, b3's end is of a foreign session.
        List<java.util.concurrent.CompletableFuture<WriteResult>> ends = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            TaskLease l = leases.get(i);
            ends.add(core.finish(l, "w1", l.getTaskId().equals("b3") ? "s-other" : "s1", TaskState.SUCCEEDED, 0, null,
                    null, null, 0, i % 2 == 0 || l.getTaskId().equals("b3")
                            ? provenance(l, 1, "w1", Integer.toHexString(i).repeat(64)) : null));
        }

        for (int i = 0; i < 8; i++) {
            TaskLease l = leases.get(i);
            boolean foreign = l.getTaskId().equals("b3");
            assertThat(join(ends.get(i)).getStatus()).as(l.getTaskId())
                    .isEqualTo(foreign ? WriteStatus.WRONG_SESSION : WriteStatus.APPLIED);
            if (i % 2 == 0 && !foreign) {
                String sha = Integer.toHexString(i).repeat(64);
                assertThat(join(core.provenance().of(l.getTaskId()))).as(l.getTaskId()).singleElement()
                        .satisfies(p -> {
                            assertThat(p.getScriptSha256()).isEqualTo(sha);
                            assertThat(p.getEpoch()).isEqualTo(l.getEpoch());
                        });
            } else {
                assertThat(stored(l.getTaskId())).as(l.getTaskId()).isEmpty();
            }
        }
    }

    @Test
    void aFinishCallOfAnotherArgumentLayoutIsRefusedWholeAndChangesNothing() {
        TaskLease lease = runningT1();
        Keys keys = new Keys(ns.name());
        String[] tenArguments = {"100000", "t1", Long.toString(lease.getEpoch()), "w1", "s1", "SUCCEEDED", "0", "", "", "",
                "0"};

        try (var connection = client.connect()) {
            // The layout before provenance: 10 arguments an outcome and no provenance key.
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> join(LuaScript.load("finish")
                            .run(connection.async(), keys.core(), tenArguments)))
                    .rootCause().hasMessageContaining("BAD_ARGUMENT finish takes 11 arguments and a provenance key per outcome");
            // 11 arguments but no key for the outcome.
            String[] eleven = java.util.Arrays.copyOf(tenArguments, 12);
            eleven[11] = "";
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> join(LuaScript.load("finish")
                            .run(connection.async(), keys.core(), eleven)))
                    .rootCause().hasMessageContaining("was given 11 arguments and 0 keys");
        }
        assertThat(record(core, "t1").getState()).isEqualTo(TaskState.RUNNING);
        assertThat(stored("t1")).isEmpty();
    }
}
