package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.List;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Success and rejection paths of every lease script against a real Redis. */
class LeaseScriptsIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

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

    private TaskRecord record(String id) {
        return join(core.getTask(id)).orElseThrow();
    }

    private Assignment claimOne(String worker, String session) {
        ClaimResult claim = join(core.claim(worker, session, 1, requestId()));
        assertThat(claim.getStatus()).isEqualTo(ClaimStatus.OK);
        assertThat(claim.getAssignments()).hasSize(1);
        return claim.getAssignments().get(0);
    }

    @Test
    void submitQueuesTaskAndKeepsSpecExactly() {
        SubmitResult result = join(core.submit(task("t1", 1)));
        assertThat(result.isCreated()).isTrue();
        TaskRecord t = record("t1");
        // The submit answer builds the new record in Java; it must be the one Redis holds.
        assertThat(result.getTask().toString()).isEqualTo(t.toString());
        assertThat(t.getState()).isEqualTo(TaskState.QUEUED);
        assertThat(t.getSpecJson()).isEqualTo("{\"script\":\"train.py\",\"lr\":0.123456789012345678}");
        assertThat(t.getOwner()).isEqualTo("alice");
        assertThat(t.getAttempt()).isZero();
        assertThat(t.getHistory()).extracting(TaskTransition::getTo).containsExactly(TaskState.QUEUED);
        assertThat(join(core.queueDepth())).isEqualTo(1);
    }

    @Test
    void resubmittingAnIdReturnsTheExistingTaskUnchanged() {
        join(core.submit(task("t1", 1)));
        TaskRecord before = record("t1");
        SubmitResult again = join(core.submit(TaskDefinition.builder("t1").gpus(3).owner("bob").build()));
        assertThat(again.isCreated()).isFalse();
        assertThat(again.getTask().toString()).isEqualTo(before.toString());
        assertThat(record("t1").toString()).isEqualTo(before.toString());
        assertThat(join(core.queueDepth())).isEqualTo(1);
    }

    @Test
    void claimAckFinishRunsTheWholeLifecycle() {
        join(core.register(worker("w1", "s1", 0, 1)));
        join(core.submit(task("t1", 1)));

        Assignment a = claimOne("w1", "s1");
        assertThat(a.getTaskId()).isEqualTo("t1");
        assertThat(a.getAttempt()).isEqualTo(1);
        assertThat(a.getGpuIds()).containsExactly(0);
        assertThat(a.getEpoch()).isGreaterThan(1_600_000_000_000_000L); // floored with the Redis clock, in µs
        TaskRecord assigned = record("t1");
        assertThat(assigned.getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(assigned.getWorkerId()).isEqualTo("w1");
        assertThat(assigned.getEpoch()).isEqualTo(a.getEpoch());
        assertThat(workerInfo("w1").getFreeGpuIds()).containsExactly(1);
        assertThat(workerInfo("w1").getTasks()).containsExactly(new TaskLease("t1", a.getEpoch()));

        TaskLease lease = new TaskLease("t1", a.getEpoch());
        assertThat(join(core.acknowledge(lease, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.APPLIED);
        assertThat(record("t1").getState()).isEqualTo(TaskState.RUNNING);

        WriteResult done = join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, "{\"reward\":195.5}"));
        assertThat(done.getStatus()).isEqualTo(WriteStatus.APPLIED);
        TaskRecord finished = record("t1");
        assertThat(finished.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(finished.getExitCode()).isZero();
        assertThat(finished.getFinalMetricsJson()).isEqualTo("{\"reward\":195.5}");
        assertThat(finished.getHistory()).extracting(TaskTransition::getTo)
                .containsExactly(TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING, TaskState.SUCCEEDED);
        assertThat(workerInfo("w1").getFreeGpuIds()).containsExactly(0, 1);
        assertThat(workerInfo("w1").getTasks()).isEmpty();
    }

    @Test
    void finishRecordsTheAttemptsOutputLineCountWhenGiven() {
        join(core.register(worker("w1", "s1", 0, 1, 2)));
        join(core.submit(task("t1", 1)));
        join(core.submit(task("t2", 1)));
        join(core.submit(task("t3", 1)));
        assertThat(record("t1").getLogLines()).as("not finished yet").isEqualTo(-1);
        TaskLease printed = lease(claimOne("w1", "s1"));
        TaskLease silent = lease(claimOne("w1", "s1"));
        TaskLease unknown = lease(claimOne("w1", "s1"));
        for (TaskLease lease : List.of(printed, silent, unknown)) {
            join(core.acknowledge(lease, "w1", "s1"));
        }

        join(core.finish(printed, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, "/runs/a", 1234));
        join(core.finish(silent, "w1", "s1", TaskState.FAILED, 1, "boom", null, null, 0));
        join(core.finish(unknown, "w1", "s1", TaskState.SUCCEEDED, 0, null, null));

        assertThat(record(printed.getTaskId()).getLogLines()).isEqualTo(1234);
        assertThat(record(silent.getTaskId()).getLogLines()).isZero();
        assertThat(record(unknown.getTaskId()).getLogLines()).isEqualTo(-1);
        // A replay with another count is a duplicate and changes nothing.
        assertThat(join(core.finish(silent, "w1", "s1", TaskState.FAILED, 1, "boom", null, null, 7)).getStatus())
                .isEqualTo(WriteStatus.DUPLICATE);
        assertThat(record(silent.getTaskId()).getLogLines()).isZero();
        assertThatThrownBy(() -> core.finish(printed, "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, -2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("logLines");
    }

    @Test
    void replayedAckAndFinishAreDuplicatesWithTheSameAnswer() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        join(core.acknowledge(lease, "w1", "s1"));
        assertThat(join(core.acknowledge(lease, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.DUPLICATE);
        join(core.finish(lease, "w1", "s1", TaskState.FAILED, 3, "boom", null));
        TaskRecord after = record("t1");
        WriteResult replay = join(core.finish(lease, "w1", "s1", TaskState.FAILED, 3, "boom", null));
        assertThat(replay.getStatus()).isEqualTo(WriteStatus.DUPLICATE);
        assertThat(replay.isAccepted()).isTrue();
        assertThat(record("t1").toString()).isEqualTo(after.toString());
        WriteResult other = join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null));
        assertThat(other.getStatus()).isEqualTo(WriteStatus.WRONG_STATE);
        assertThat(record("t1").toString()).isEqualTo(after.toString());
    }

    @Test
    void replayedClaimReturnsTheFirstAnswerAndAssignsNothingMore() {
        join(core.register(worker("w1", "s1", 0, 1)));
        join(core.submit(task("t1", 1)));
        join(core.submit(task("t2", 1)));
        String request = requestId();
        ClaimResult first = join(core.claim("w1", "s1", 1, request));
        ClaimResult replay = join(core.claim("w1", "s1", 1, request));
        assertThat(replay.toString()).isEqualTo(first.toString());
        assertThat(record("t2").getState()).isEqualTo(TaskState.QUEUED);
        assertThat(join(core.queueDepth())).isEqualTo(1);
    }

    @Test
    void oneClaimServesSeveralWorkersInOrderEachUpToItsLimit() {
        join(core.register(worker("w1", "s1")));
        join(core.register(worker("w2", "s2")));
        for (int i = 1; i <= 3; i++) {
            join(core.submit(TaskDefinition.builder("t" + i).specJson("{\"n\":" + i + "}").build()));
        }
        List<ClaimResult> results = join(core.claim(List.of(new WorkerSession("w2", "s2"),
                new WorkerSession("ghost", "s9"), new WorkerSession("w1", "wrong"), new WorkerSession("w1", "s1")),
                2, requestId(), null));
        assertThat(results).extracting(ClaimResult::getStatus).containsExactly(ClaimStatus.OK,
                ClaimStatus.UNKNOWN_WORKER, ClaimStatus.WRONG_SESSION, ClaimStatus.OK);
        assertThat(results.get(0).getAssignments()).extracting(Assignment::getTaskId).containsExactly("t1", "t2");
        assertThat(results.get(3).getAssignments()).extracting(Assignment::getTaskId).containsExactly("t3");
        // Each assignment carries its own task's spec (read for the whole run at its end).
        assertThat(results.get(0).getAssignments()).extracting(Assignment::getSpecJson)
                .containsExactly("{\"n\":1}", "{\"n\":2}");
        assertThat(results.get(3).getAssignments()).extracting(Assignment::getSpecJson).containsExactly("{\"n\":3}");
        assertThat(results.get(3).getQueued()).isZero();
        assertThat(record("t1").getWorkerId()).isEqualTo("w2");
        assertThat(record("t3").getWorkerId()).isEqualTo("w1");
        assertThat(join(core.listWorkers())).extracting(WorkerInfo::getWorkerId, WorkerInfo::getFreeCpuSlots)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("w1", 7),
                        org.assertj.core.groups.Tuple.tuple("w2", 6));
        // Once the queue ran dry, later workers answer OK with nothing, unread (even an unknown one).
        join(core.submit(task("t4", 0)));
        List<ClaimResult> second = join(core.claim(List.of(new WorkerSession("w1", "s1"),
                new WorkerSession("ghost", "s9")), 2, requestId(), null));
        assertThat(second).extracting(ClaimResult::getStatus).containsExactly(ClaimStatus.OK, ClaimStatus.OK);
        assertThat(second.get(0).getAssignments()).extracting(Assignment::getTaskId).containsExactly("t4");
        assertThat(second.get(1).getAssignments()).isEmpty();
    }

    @Test
    void submitAndClaimAssignsTheNewTaskInOneRunAndAReplayAssignsNothingTwice() {
        join(core.register(worker("w1", "s1")));
        LeaderStatus leader = join(core.acquireLeadership("m-1", "127.0.0.1:1", Duration.ofSeconds(30)));
        List<WorkerSession> targets = List.of(new WorkerSession("w1", "s1"));
        String request = requestId();
        TaskDefinition task = TaskDefinition.builder("fast").specJson("{\"n\":1}").traceId("tr-1").build();

        SubmitAndClaimResult first = join(core.submitAndClaim(task, targets, 4, request, leader));
        assertThat(first.getSubmit().isCreated()).isTrue();
        assertThat(first.getSubmit().getTask().getState()).as("as submitted, before the claim").isEqualTo(TaskState.QUEUED);
        assertThat(first.getClaims()).singleElement().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo(ClaimStatus.OK);
            assertThat(c.getQueued()).isZero();
            assertThat(c.getAssignments()).extracting(Assignment::getTaskId, Assignment::getSpecJson)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("fast", "{\"n\":1}"));
        });
        long epoch = first.getClaims().get(0).getAssignments().get(0).getEpoch();
        TaskRecord stored = record("fast");
        assertThat(stored.getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(stored.getWorkerId()).isEqualTo("w1");
        assertThat(stored.getEpoch()).isEqualTo(epoch);
        assertThat(stored.getHistory()).extracting(TaskTransition::getTo).containsExactly(TaskState.QUEUED, TaskState.ASSIGNED);
        assertThat(join(core.listTasks(TaskState.QUEUED, 0, 10)).getTasks()).isEmpty();

        // Repeated after a failure in transit: the submission exists, the claim answers as before.
        SubmitAndClaimResult replay = join(core.submitAndClaim(task, targets, 4, request, leader));
        assertThat(replay.getSubmit().isCreated()).isFalse();
        assertThat(replay.getSubmit().getTask().getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(replay.getClaims().get(0).getAssignments()).extracting(Assignment::getTaskId, Assignment::getEpoch)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("fast", epoch));
        assertThat(record("fast").getEpoch()).as("not assigned twice").isEqualTo(epoch);
        assertThat(record("fast").getHistory()).hasSize(2);
    }

    @Test
    void submitAndClaimQueuesTheTaskWhenNoWorkerHasRoomOrTheMasterIsNotTheLeader() {
        // One GPU: a claim reads tasks that need GPUs only for a worker with a free one.
        join(core.register(worker("w1", "s1", 0)));
        List<WorkerSession> targets = List.of(new WorkerSession("w1", "s1"));
        LeaderStatus leader = join(core.acquireLeadership("m-1", "127.0.0.1:1", Duration.ofSeconds(30)));
        // A task too big for every worker: submitted, claimed by nobody, left queued (parked: no
        // claim can see it, so none is left for the claims to do).
        SubmitAndClaimResult big = join(core.submitAndClaim(TaskDefinition.builder("big").gpus(4).build(), targets, 4,
                requestId(), leader));
        assertThat(big.getSubmit().isCreated()).isTrue();
        assertThat(big.getClaims().get(0).getStatus()).isEqualTo(ClaimStatus.OK);
        assertThat(big.getClaims().get(0).getAssignments()).isEmpty();
        assertThat(big.getClaims().get(0).getQueued()).isZero();
        assertThat(record("big").getState()).isEqualTo(TaskState.QUEUED);
        assertThat(join(core.isParked("big"))).isTrue();

        // A master that is not the leader (a stale leadership epoch): the submission stands, the
        // claim is refused and changes nothing.
        LeaderStatus stale = new LeaderStatus("m-1", leader.getEpoch() + 1, "127.0.0.1:1", true, System.currentTimeMillis() + 30_000);
        SubmitAndClaimResult refused = join(core.submitAndClaim(task("small", 0), targets, 4, requestId(), stale));
        assertThat(refused.getSubmit().isCreated()).isTrue();
        assertThat(refused.getClaims()).extracting(ClaimResult::getStatus).containsExactly(ClaimStatus.NOT_LEADER);
        assertThat(record("small").getState()).isEqualTo(TaskState.QUEUED);

        // An older task queued first is assigned first: the claim serves the queue in order.
        join(core.submit(task("old", 0)));
        SubmitAndClaimResult ordered = join(core.submitAndClaim(task("new", 0), targets, 2, requestId(), leader));
        assertThat(ordered.getClaims().get(0).getAssignments()).extracting(Assignment::getTaskId)
                .containsExactly("small", "old");
        assertThat(record("new").getState()).isEqualTo(TaskState.QUEUED);
    }

    @Test
    void laterWorkersOfOneClaimSeePastTasksNobodyCouldTake() {
        join(core.register(worker("w1", "s1")));
        join(core.register(worker("w2", "s2")));
        // The head of the queue (claimScanLimit 100): 90 tasks no worker can take (2 GPUs; the
        // workers have none), then CPU tasks, more than fit in the rest of the first page.
        for (int i = 0; i < 90; i++) {
            join(core.submit(TaskDefinition.builder(String.format("g%03d", i)).gpus(2).build()));
        }
        for (int i = 0; i < 30; i++) {
            join(core.submit(task(String.format("c%02d", i), 0)));
        }
        List<ClaimResult> results = join(core.claim(List.of(new WorkerSession("w1", "s1"),
                new WorkerSession("w2", "s2")), 16, requestId(), null));
        // Each worker has 8 CPU slots: the second must read the head again to see c10 and after.
        assertThat(results.get(0).getAssignments()).extracting(Assignment::getTaskId)
                .containsExactly("c00", "c01", "c02", "c03", "c04", "c05", "c06", "c07");
        assertThat(results.get(1).getAssignments()).extracting(Assignment::getTaskId)
                .containsExactly("c08", "c09", "c10", "c11", "c12", "c13", "c14", "c15");
    }

    @Test
    void storedValueIsTheRecordThenItsHistoryAndNewlinesInTextCannotSplitIt() throws Exception {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        join(core.acknowledge(lease, "w1", "s1"));
        String error = "line one\nline two \"quoted\"\n";
        assertThat(join(core.finish(lease, "w1", "s1", TaskState.FAILED, 2, error, null)).getStatus())
                .isEqualTo(WriteStatus.APPLIED);
        try (var connection = client.connect()) {
            String stored = connection.sync().hget(ns.key("tasks"), "t1");
            String[] lines = stored.split("\n", -1);
            assertThat(lines).hasSize(2);
            var json = new com.fasterxml.jackson.databind.ObjectMapper();
            var recordPart = json.readTree(lines[0]);
            assertThat(recordPart.has("history")).isFalse();
            assertThat(recordPart.get("error").asText()).isEqualTo(error);
            // Every number is stored as decimal text (cjson formats JSON numbers with printf).
            recordPart.fields().forEachRemaining(f -> assertThat(f.getValue().isNumber()).as(f.getKey()).isFalse());
            assertThat(recordPart.get("exit_code").asText()).isEqualTo("2");
            assertThat(recordPart.get("attempt").asText()).isEqualTo("1");
            var historyPart = json.readTree(lines[1]);
            assertThat(historyPart.isArray()).isTrue();
            assertThat(historyPart).hasSize(4);
        }
        TaskRecord t = record("t1");
        assertThat(t.getError()).isEqualTo(error);
        assertThat(t.getExitCode()).isEqualTo(2);
        assertThat(t.getHistory()).extracting(TaskTransition::getTo)
                .containsExactly(TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING, TaskState.FAILED);
        assertThat(t.getHistory().get(3).getReason()).isEqualTo(error);
        assertThat(t.getHistory().get(0).getAtMillis()).isEqualTo(t.getCreatedAtMillis());
        assertThat(t.getHistory().get(3).getAtMillis()).isEqualTo(t.getUpdatedAtMillis());
        assertThat(t.getHistory()).extracting(TaskTransition::getEpoch).containsExactly(0L, lease.getEpoch(),
                lease.getEpoch(), lease.getEpoch());
    }

    @Test
    void oneSubmitRunWithAnIdTwiceCreatesItOnceAndAnswersExistsTheSecondTime() {
        join(core.submit(task("old", 0)));
        var keys = new io.rlscheduler.core.internal.Keys(ns.name());
        List<String> args = new ArrayList<>(List.of("1000"));
        List<String> owners = new ArrayList<>();
        for (String[] s : List.of(new String[] {"d1", "7"}, new String[] {"old", "8"}, new String[] {"d1", "9"},
                new String[] {"d2", "10"})) {
            owners.add(keys.owner("alice"));
            args.addAll(List.of(s[0], s[1], "0", "1", "0", "{}", "alice", "trace", "3", "2", "{\"p\":" + s[1] + "}"));
        }
        try (var connection = client.connect()) {
            String reply = join(io.rlscheduler.core.internal.LuaScript.load("submit").run(connection.async(),
                    keys.coreAnd(owners.toArray(new String[0])), args.toArray(new String[0])));
            var answers = Replies.parse(reply);
            assertThat(answers).extracting(a -> a.get("r").asText()).containsExactly("OK", "EXISTS", "EXISTS", "OK");
        }
        assertThat(record("d1").getPriority()).isEqualTo(7);
        assertThat(record("d1").getSpecJson()).isEqualTo("{\"p\":7}");
        assertThat(record("d2").getPriority()).isEqualTo(10);
        assertThat(join(core.queueDepth())).isEqualTo(3);
        // Queued tasks are listed in queue order: higher priority first.
        assertThat(join(core.listTasks(TaskState.QUEUED, 0, 10)).getTasks()).extracting(TaskRecord::getTaskId)
                .containsExactly("d2", "d1", "old");
        assertThat(record("d1").getHistory()).hasSize(1);
    }

    @Test
    void claimThatAssignedNothingKeepsNoAnswerAndItsReplayMayAssign() {
        join(core.register(worker("w1", "s1", 0, 1)));
        String request = requestId();
        ClaimResult empty = join(core.claim("w1", "s1", 1, request));
        assertThat(empty.getAssignments()).isEmpty();
        try (var connection = client.connect()) {
            assertThat(connection.sync().exists(ns.key("request", "claim", request))).isZero();
        }
        join(core.submit(task("t1", 1)));
        ClaimResult replay = join(core.claim("w1", "s1", 1, request));
        assertThat(replay.getAssignments()).extracting(Assignment::getTaskId).containsExactly("t1");
        assertThat(record("t1").getState()).isEqualTo(TaskState.ASSIGNED);
        ClaimResult again = join(core.claim("w1", "s1", 1, request));
        assertThat(again.toString()).isEqualTo(replay.toString());
    }

    @Test
    void concurrentWritesBatchedTogetherAreEachDecidedAsIfAlone() {
        join(core.register(worker("w1", "s1")));
        List<CompletableFuture<SubmitResult>> submits = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            submits.add(core.submit(task("b" + (i % 150), 0)));
        }
        long created = submits.stream().map(CoreFixture::join).filter(SubmitResult::isCreated).count();
        assertThat(created).isEqualTo(150);
        assertThat(join(core.queueDepth())).isEqualTo(150);
        List<Assignment> assigned = new ArrayList<>();
        while (assigned.size() < 8) {
            assigned.addAll(join(core.claim("w1", "s1", 8, requestId())).getAssignments());
        }
        List<CompletableFuture<WriteResult>> acks = new ArrayList<>();
        for (Assignment a : assigned) {
            TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
            acks.add(core.acknowledge(lease, "w1", "s1"));
            acks.add(core.acknowledge(lease, "w1", "s1"));
            acks.add(core.acknowledge(new TaskLease(a.getTaskId(), a.getEpoch() - 1), "w1", "s1"));
            acks.add(core.acknowledge(lease, "w1", "other-session"));
        }
        for (int i = 0; i < assigned.size(); i++) {
            assertThat(join(acks.get(4 * i)).getStatus()).isEqualTo(WriteStatus.APPLIED);
            assertThat(join(acks.get(4 * i + 1)).getStatus()).isEqualTo(WriteStatus.DUPLICATE);
            assertThat(join(acks.get(4 * i + 2)).getStatus()).isEqualTo(WriteStatus.STALE);
            assertThat(join(acks.get(4 * i + 3)).getStatus()).isEqualTo(WriteStatus.WRONG_SESSION);
        }
        List<CompletableFuture<WriteResult>> finishes = new ArrayList<>();
        for (Assignment a : assigned) {
            TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
            finishes.add(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null));
            finishes.add(core.finish(lease, "w1", "s1", TaskState.FAILED, 1, "late", null));
        }
        for (int i = 0; i < assigned.size(); i++) {
            assertThat(join(finishes.get(2 * i)).getStatus()).isEqualTo(WriteStatus.APPLIED);
            assertThat(join(finishes.get(2 * i + 1)).getStatus()).isEqualTo(WriteStatus.WRONG_STATE);
            assertThat(record(assigned.get(i).getTaskId()).getState()).isEqualTo(TaskState.SUCCEEDED);
        }
        WorkerInfo w = join(core.listWorkers()).get(0);
        assertThat(w.getFreeCpuSlots()).isEqualTo(8);
    }

    @Test
    void staleEpochIsRejectedEverywhereAndChangesNothing() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        Assignment a = claimOne("w1", "s1");
        TaskLease stale = new TaskLease("t1", a.getEpoch() - 1);
        TaskRecord before = record("t1");

        assertThat(join(core.acknowledge(stale, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.STALE);
        assertThat(join(core.finish(stale, "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        HeartbeatResult hb = join(core.heartbeat("w1", "s1", List.of(stale)));
        assertThat(hb.getRevokedTasks()).containsExactly(stale);
        assertThat(hb.getRenewedTasks()).isZero();
        assertThat(record("t1").toString()).isEqualTo(before.toString());
    }

    @Test
    void wrongSessionIsRejectedAndChangesNothing() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        TaskRecord before = record("t1");
        assertThat(join(core.acknowledge(lease, "w1", "s-other")).getStatus()).isEqualTo(WriteStatus.WRONG_SESSION);
        assertThat(join(core.finish(lease, "w1", "s-other", TaskState.FAILED, 1, null, null)).getStatus())
                .isEqualTo(WriteStatus.WRONG_SESSION);
        assertThat(join(core.heartbeat("w1", "s-other", List.of(lease))).getStatus()).isEqualTo(HeartbeatStatus.WRONG_SESSION);
        assertThat(join(core.claim("w1", "s-other", 1, requestId())).getStatus()).isEqualTo(ClaimStatus.WRONG_SESSION);
        assertThat(record("t1").toString()).isEqualTo(before.toString());
    }

    @Test
    void wrongWorkerIsStaleAndChangesNothing() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.register(worker("w2", "s2", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        TaskRecord before = record("t1");
        assertThat(join(core.acknowledge(lease, "w2", "s2")).getStatus()).isEqualTo(WriteStatus.STALE);
        assertThat(join(core.finish(lease, "w2", "s2", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.STALE);
        assertThat(record("t1").toString()).isEqualTo(before.toString());
    }

    @Test
    void wrongStateIsRejectedAndChangesNothing() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        join(core.acknowledge(lease, "w1", "s1"));
        join(core.finish(lease, "w1", "s1", TaskState.TIMED_OUT, null, "ran past 2h", null));
        TaskRecord before = record("t1");
        assertThat(join(core.acknowledge(lease, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.WRONG_STATE);
        assertThat(join(core.cancel("t1", "too late")).getStatus()).isEqualTo(CancelStatus.WRONG_STATE);
        assertThat(record("t1").toString()).isEqualTo(before.toString());
    }

    @Test
    void unknownTaskAndUnknownWorkerAreTypedAnswers() {
        TaskLease ghost = new TaskLease("ghost", 5);
        assertThat(join(core.acknowledge(ghost, "w1", "s1")).getStatus()).isEqualTo(WriteStatus.UNKNOWN_TASK);
        assertThat(join(core.finish(ghost, "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).getStatus())
                .isEqualTo(WriteStatus.UNKNOWN_TASK);
        assertThat(join(core.cancel("ghost", "x")).getStatus()).isEqualTo(CancelStatus.UNKNOWN_TASK);
        assertThat(join(core.heartbeat("nobody", "s1", List.of())).getStatus()).isEqualTo(HeartbeatStatus.UNKNOWN_WORKER);
        assertThat(join(core.claim("nobody", "s1", 1, requestId())).getStatus()).isEqualTo(ClaimStatus.UNKNOWN_WORKER);
        assertThat(join(core.getTask("ghost"))).isEmpty();
        assertThat(join(core.listWorkers())).isEmpty();
    }

    @Test
    void cancelQueuedTaskEndsItAtOnce() {
        join(core.submit(task("t1", 1)));
        CancelResult result = join(core.cancel("t1", "changed my mind"));
        assertThat(result.getStatus()).isEqualTo(CancelStatus.CANCELLED);
        assertThat(record("t1").getState()).isEqualTo(TaskState.CANCELLED);
        assertThat(join(core.queueDepth())).isZero();
        assertThat(join(core.cancel("t1", "again")).getStatus()).isEqualTo(CancelStatus.CANCELLED);
    }

    @Test
    void cancelRunningTaskIsRequestedUntilTheWorkerStopsIt() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        join(core.acknowledge(lease, "w1", "s1"));
        CancelResult result = join(core.cancel("t1", "stop"));
        assertThat(result.getStatus()).isEqualTo(CancelStatus.CANCEL_REQUESTED);
        assertThat(result.getWorkerId()).isEqualTo("w1");
        assertThat(result.getEpoch()).isEqualTo(lease.getEpoch());
        assertThat(record("t1").isCancelRequested()).isTrue();
        assertThat(record("t1").getState()).isEqualTo(TaskState.RUNNING);
        join(core.finish(lease, "w1", "s1", TaskState.CANCELLED, -15, "killed", null));
        assertThat(record("t1").getState()).isEqualTo(TaskState.CANCELLED);
        assertThat(workerInfo("w1").getFreeGpuIds()).containsExactly(0);
    }

    @Test
    void priorityFirstThenFifo() {
        join(core.register(worker("w1", "s1")));
        join(core.submit(TaskDefinition.builder("low-1").build()));
        join(core.submit(TaskDefinition.builder("high-1").priority(10).build()));
        join(core.submit(TaskDefinition.builder("low-2").build()));
        join(core.submit(TaskDefinition.builder("high-2").priority(10).build()));
        join(core.submit(TaskDefinition.builder("top").priority(999).build()));
        ClaimResult claim = join(core.claim("w1", "s1", 5, requestId()));
        assertThat(claim.getAssignments()).extracting(Assignment::getTaskId)
                .containsExactly("top", "high-1", "high-2", "low-1", "low-2");
    }

    @Test
    void taskNeedingTwoGpusWaitsUntilOneWorkerHasTwoFree() {
        join(core.register(worker("w1", "s1", 0, 1)));
        join(core.register(worker("w2", "s2", 0)));
        join(core.submit(task("one", 1)));
        Assignment one = claimOne("w1", "s1");
        join(core.submit(task("two", 2)));
        assertThat(join(core.claim("w1", "s1", 1, requestId())).getAssignments()).isEmpty();
        assertThat(join(core.claim("w2", "s2", 1, requestId())).getAssignments()).isEmpty();
        assertThat(record("two").getState()).isEqualTo(TaskState.QUEUED);
        join(core.finish(lease(one), "w1", "s1", TaskState.SUCCEEDED, 0, null, null));
        Assignment two = claimOne("w1", "s1");
        assertThat(two.getTaskId()).isEqualTo("two");
        assertThat(two.getGpuIds()).containsExactly(0, 1);
    }

    @Test
    void selectorPlacesTaskOnlyOnMatchingWorker() {
        join(core.register(new WorkerRegistration("plain", "s1", java.util.Map.of(), 4, 0, List.of(0))));
        join(core.register(new WorkerRegistration("a100", "s2", java.util.Map.of("gpu", "a100"), 4, 0, List.of(0))));
        join(core.submit(TaskDefinition.builder("t1").gpus(1).selector("gpu", "a100").build()));
        assertThat(join(core.claim("plain", "s1", 1, requestId())).getAssignments()).isEmpty();
        assertThat(claimOne("a100", "s2").getTaskId()).isEqualTo("t1");
    }

    @Test
    void badSpecIsRejectedBeforeAnythingIsWritten() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> core.submit(TaskDefinition.builder("t1").specJson("[1,2]").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JSON object");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> core.submit(TaskDefinition.builder("t1").specJson("{nope").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not valid JSON");
        assertThat(join(core.getTask("t1"))).isEmpty();
    }

    @Test
    void lateHeartbeatNeverRevivesAnExpiredLease() {
        join(core.register(worker("w1", "s1", 0)));
        join(core.submit(task("t1", 1)));
        TaskLease lease = lease(claimOne("w1", "s1"));
        join(core.acknowledge(lease, "w1", "s1"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> workerInfo("w1").getState() == WorkerState.DOWN);
        TaskRecord before = record("t1");
        HeartbeatResult late = join(core.heartbeat("w1", "s1", List.of(lease)));
        assertThat(late.getRevokedTasks()).containsExactly(lease);
        assertThat(late.getRenewedTasks()).isZero();
        assertThat(record("t1").getDeadlineMillis()).isEqualTo(before.getDeadlineMillis());
        assertThat(join(core.reap()).getRequeued()).containsExactly("t1");
    }

    private WorkerInfo workerInfo(String id) {
        return join(core.listWorkers()).stream().filter(w -> w.getWorkerId().equals(id)).findFirst().orElseThrow();
    }

    private static TaskLease lease(Assignment a) {
        return new TaskLease(a.getTaskId(), a.getEpoch());
    }
}
