package io.rlscheduler.master.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.OwnerLimit;
import io.rlscheduler.core.OwnerLimitExceededException;
import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.SubmitAndClaimResult;
import io.rlscheduler.core.internal.SubmitResult;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.core.internal.WorkerSession;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The dispatcher against a real Redis: an idle cluster's rounds claim nothing once the queue was
 * seen empty, work signals bring claims back, and the backstop finds work whose signal was missed.
 */
class DispatcherIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private Dispatcher dispatcher;
    private EmbeddedChannel channel;
    private WorkerRegistry registry;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).build());
        core.register(new WorkerRegistration("w1", "s1", Map.of(), 4, 1L << 30, List.of())).join();
        LeaderStatus leader = core.acquireLeadership("m1", "127.0.0.1:1", Duration.ofMinutes(1)).join();
        assertThat(leader.isSelf()).isTrue();
        registry = new WorkerRegistry();
        channel = new EmbeddedChannel();
        registry.add(new ConnectedWorker("w1", "s1", Map.of(), channel));
        dispatcher = new Dispatcher(core, () -> leader, registry, starts -> { }, 16);
    }

    @AfterEach
    void close() {
        dispatcher.stop();
        core.close();
    }

    private static TaskDefinition noop(String id) {
        return TaskDefinition.builder(id).cpuSlots(1).specJson("{\"script\":\"noop.py\"}").build();
    }

    private void submitQuietly(String id) {
        core.submit(noop(id)).orTimeout(10, TimeUnit.SECONDS).join();
    }

    private void awaitIdle() {
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() + dispatcher.getSkippedRounds() > 0
                && !dispatcher.isRunning());
    }

    @Test
    void onceTheQueueWasSeenEmptyRoundsClaimNothingUntilWorkArrives() {
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());

        for (int i = 0; i < 20; i++) {
            dispatcher.trigger();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> !dispatcher.isRunning() && dispatcher.getSkippedRounds() >= 1);
        assertThat(dispatcher.getRounds()).isEqualTo(1);

        submitQuietly("t1");
        dispatcher.taskQueued();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 1);
        assertThat(core.getTask("t1").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(dispatcher.getRounds()).isGreaterThan(1);
    }

    @Test
    void backstopFindsWorkWhoseSignalWasMissed() {
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());

        submitQuietly("t2");
        dispatcher.trigger();
        awaitIdle();
        assertThat(dispatcher.getSent()).isZero();

        dispatcher.backstop();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 1);
        assertThat(core.getTask("t2").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
    }

    @Test
    void aSubmissionWhileTheQueueIsKnownEmptyClaimsInItsOwnRunAndLeavesWhatNobodyTookToTheRounds() {
        assertThat(dispatcher.claimOnSubmit()).as("the queue is not known to be empty yet").isNull();
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());

        Dispatcher.SubmitClaim claim = dispatcher.claimOnSubmit();
        assertThat(claim).isNotNull();
        assertThat(claim.sessions()).containsExactly(new WorkerSession("w1", "s1"));
        SubmitAndClaimResult fast = core.submitAndClaim(noop("t3"), claim.sessions(), claim.batchSize(), claim.requestId(),
                claim.leader()).orTimeout(10, TimeUnit.SECONDS).join();
        dispatcher.claimedOnSubmit(claim, fast.getClaims());
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 1);
        channel.runPendingTasks();
        assertThat((Object) channel.readOutbound()).isInstanceOfSatisfying(ExecuteTask.class,
                m -> assertThat(m.getTaskId()).isEqualTo("t3"));
        assertThat(core.getTask("t3").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(dispatcher.getRounds()).as("no round was needed").isEqualTo(1);
        assertThat(dispatcher.getClaimedOnSubmit()).isEqualTo(1);

        // A task no worker has room for now (4 CPU slots, the worker has 3 free of 4): it stays
        // queued, the dispatcher is told, and from then on submissions queue and signal as before.
        Dispatcher.SubmitClaim second = dispatcher.claimOnSubmit();
        assertThat(second).isNotNull();
        SubmitAndClaimResult big = core.submitAndClaim(TaskDefinition.builder("big").cpuSlots(4).build(),
                second.sessions(), second.batchSize(), second.requestId(), second.leader())
                .orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(big.getClaims().get(0).getAssignments()).isEmpty();
        dispatcher.claimedOnSubmit(second, big.getClaims());
        assertThat(dispatcher.getClaimedOnSubmit()).isEqualTo(2);
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() >= 2 && !dispatcher.isRunning());
        assertThat(dispatcher.claimOnSubmit()).as("the queue holds a task").isNull();
        assertThat(dispatcher.getSent()).isEqualTo(1);
        assertThat(core.getTask("big").join().orElseThrow().getState()).isEqualTo(TaskState.QUEUED);
    }

    @Test
    void atMostFourSubmissionsClaimInTheirOwnRunsAtOnceAndAFailedOneLeavesTheQueueToTheRounds(RedisClient client) {
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());
        List<Dispatcher.SubmitClaim> claims = new java.util.ArrayList<>();
        for (int i = 0; i < Dispatcher.MAX_SUBMIT_CLAIMS_IN_FLIGHT; i++) {
            claims.add(dispatcher.claimOnSubmit());
        }
        assertThat(claims).doesNotContainNull();
        assertThat(dispatcher.claimOnSubmit()).as("the next goes batched").isNull();

        // One failed in transit: what it may have queued is the rounds' now, until one sees the queue empty.
        // Redis paused, so that the round this starts cannot answer before the check below.
        try (StatefulRedisConnection<String, String> admin = client.connect()) {
            admin.sync().clientPause(2000);
            dispatcher.claimOnSubmitFailed(claims.remove(0));
            assertThat(dispatcher.claimOnSubmit()).as("the queue is not known to be drained").isNull();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 2 && !dispatcher.isRunning());
        Dispatcher.SubmitClaim again = dispatcher.claimOnSubmit();
        assertThat(again).isNotNull();
        assertThat(dispatcher.claimOnSubmit()).as("the in-flight ones still count").isNull();
    }

    @Test
    void aTaskNoWorkerCouldRunIsParkedAndLeavesTheQueueKnownEmpty() {
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());
        // 8 CPU slots: more than the only registered worker has in all.
        Dispatcher.SubmitClaim claim = dispatcher.claimOnSubmit();
        SubmitAndClaimResult huge = core.submitAndClaim(TaskDefinition.builder("huge").cpuSlots(8).build(),
                claim.sessions(), claim.batchSize(), claim.requestId(), claim.leader()).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(huge.getClaims().get(0).getAssignments()).isEmpty();
        assertThat(huge.getClaims().get(0).getQueued()).isZero();
        dispatcher.claimedOnSubmit(claim, huge.getClaims());
        assertThat(core.isParked("huge").join()).isTrue();
        // Nothing for the rounds: the backstop (which counts only claimable tasks) starts no round,
        // and the next submission may claim in its own run.
        dispatcher.backstop();
        // On the same connection, so answered after the backstop's count, whose callback has run by then.
        assertThat(core.claimableCount().orTimeout(10, TimeUnit.SECONDS).join()).isZero();
        assertThat(dispatcher.getRounds()).isEqualTo(1);
        assertThat(dispatcher.isRunning()).isFalse();
        assertThat(dispatcher.claimOnSubmit()).isNotNull();
    }

    @Test
    void aFailedSubmissionRunLeavesItsWorkToTheRoundsAndFreesTheWayForTheNext() {
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());
        Dispatcher.SubmitClaim claim = dispatcher.claimOnSubmit();
        assertThat(claim).isNotNull();
        // As if the call failed in transit after it ran: the task is queued, nobody was told.
        submitQuietly("lost");
        dispatcher.claimOnSubmitFailed(claim);
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 1);
        assertThat(core.getTask("lost").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
        awaitIdle();
        await().atMost(Duration.ofSeconds(10)).until(() -> !dispatcher.isRunning() && dispatcher.claimOnSubmit() != null);
    }

    @Test
    void submitQueuesAndSignalsUntilTheQueueIsKnownEmptyThenClaimsInItsOwnRun() {
        SubmitResult first = dispatcher.submit(noop("s1")).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(first.isCreated()).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 1);
        assertThat(dispatcher.getClaimedOnSubmit()).as("the queue was not known empty: a round claimed it").isZero();
        awaitIdle();
        await().atMost(Duration.ofSeconds(10)).until(() -> !dispatcher.isRunning());

        long rounds = dispatcher.getRounds();
        SubmitResult second = dispatcher.submit(noop("s2")).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(second.getTask().getTaskId()).isEqualTo("s2");
        assertThat(dispatcher.getClaimedOnSubmit()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 2);
        assertThat(dispatcher.getRounds()).as("no round was needed").isEqualTo(rounds);
        assertThat(core.getTask("s2").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
    }

    /**
     * A submission its owner's limits refuse is the script's answer, not a failure in transit: it
     * runs once (not again with the same request id), and leaves the queue known empty, so the
     * next submission still claims in its own run.
     */
    @Test
    void aSubmissionRefusedByItsOwnersLimitsRunsOnceAndLeavesTheNextToClaimInItsOwnRun(RedisClient client,
                                                                                       RedisNamespace ns) {
        List<String> runs = new CopyOnWriteArrayList<>();
        CommandListener listener = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommand().getType() == CommandType.EVALSHA) {
                    runs.add(event.getCommand().getArgs().toCommandString());
                }
            }
        };
        client.addListener(listener);
        // A core of its own, made after the listener: Lettuce wires listeners into new connections.
        LeaseCore counted = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).build());
        LeaderStatus leader = counted.acquireLeadership("m1", "127.0.0.1:1", Duration.ofMinutes(1)).join();
        Dispatcher d = new Dispatcher(counted, () -> leader, registry, starts -> { }, 16);
        try {
            counted.owners().setLimits("alice", OwnerLimits.builder().maxGpusPerTask(1).build()).join();
            d.trigger();
            await().atMost(Duration.ofSeconds(10)).until(() -> d.getRounds() == 1 && !d.isRunning());

            TaskDefinition big = TaskDefinition.builder("too-big").gpus(2).owner("alice")
                    .specJson("{\"script\":\"noop.py\"}").build();
            Throwable refused = catchThrowable(() -> d.submit(big).orTimeout(10, TimeUnit.SECONDS).join());
            assertThat(refused).isInstanceOf(CompletionException.class);
            assertThat(refused.getCause()).isInstanceOfSatisfying(OwnerLimitExceededException.class,
                    e -> assertThat(e.getLimit()).isEqualTo(OwnerLimit.MAX_GPUS_PER_TASK));
            assertThat(runs.stream().filter(r -> r.contains("too-big"))).as("script runs carrying the refused task")
                    .hasSize(1);
            assertThat(counted.getTask("too-big").join()).isEmpty();

            d.submit(noop("next")).orTimeout(10, TimeUnit.SECONDS).join();
            assertThat(d.getClaimedOnSubmit()).as("the refusal left the queue known empty").isEqualTo(1);
            assertThat(d.getRounds()).as("no round followed the refusal").isEqualTo(1);
            for (int i = 0; i < Dispatcher.MAX_SUBMIT_CLAIMS_IN_FLIGHT; i++) {
                assertThat(d.claimOnSubmit()).as("claiming slot %d is free again", i + 1).isNotNull();
            }
            // The refused id is not taken for this master's own: the QUEUED event of another
            // master's later submission of it signals a round.
            d.queuedEvent("too-big", TaskEvent.Via.SUBMIT);
            await().atMost(Duration.ofSeconds(10)).until(() -> d.getRounds() == 2);
        } finally {
            client.removeListener(listener);
            d.stop();
            counted.close();
        }
    }

    /** A plain submission its owner's limits refuse is not taken for this master's own either. */
    @Test
    void aPlainSubmissionRefusedByItsOwnersLimitsLeavesTheIdToOtherMastersSignals() {
        core.owners().setLimits("alice", OwnerLimits.builder().maxGpusPerTask(1).build()).join();
        assertThat(dispatcher.claimOnSubmit()).as("no claim has run: the submission goes plain").isNull();
        TaskDefinition big = TaskDefinition.builder("too-big").gpus(2).owner("alice")
                .specJson("{\"script\":\"noop.py\"}").build();
        Throwable refused = catchThrowable(() -> dispatcher.submit(big).orTimeout(10, TimeUnit.SECONDS).join());
        assertThat(refused.getCause()).isInstanceOf(OwnerLimitExceededException.class);
        assertThat(dispatcher.getRounds()).isZero();

        dispatcher.queuedEvent("too-big", TaskEvent.Via.SUBMIT);
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1);
    }

    /**
     * A submission made while a round runs claims in its own run when the last claim left nothing
     * queued: sent plain, it would signal another round, and at a steady rate every submission
     * would then find a round running and do the same.
     */
    @Test
    void aSubmissionWhileARoundRunsClaimsInItsOwnRunWhenTheLastClaimLeftTheQueueEmpty(RedisClient client) {
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());
        try (StatefulRedisConnection<String, String> admin = client.connect()) {
            admin.sync().clientPause(2000); // until the submission below is sent, on a slow machine too
            dispatcher.taskQueued(); // a round; its claim waits in Redis
            assertThat(dispatcher.isRunning()).isTrue();
            dispatcher.submit(noop("during")).orTimeout(10, TimeUnit.SECONDS).join();
        }
        assertThat(dispatcher.getClaimedOnSubmit()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == 1 && !dispatcher.isRunning());
        assertThat(core.getTask("during").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(dispatcher.getRounds()).as("no round after the one that was running").isEqualTo(2);
    }

    /** A submission that ran after a round's claim (answered after it) is work the rounds still take. */
    @Test
    void aSubmissionThatRanAfterARoundsClaimIsClaimedByTheNextRound(RedisClient client) {
        // Room for the submissions below: a second worker of 16 CPU slots.
        core.register(new WorkerRegistration("w2", "s2", Map.of(), 16, 1L << 30, List.of())).join();
        registry.add(new ConnectedWorker("w2", "s2", Map.of(), new EmbeddedChannel()));
        dispatcher.trigger();
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getRounds() == 1 && !dispatcher.isRunning());
        int claiming = Dispatcher.MAX_SUBMIT_CLAIMS_IN_FLIGHT;
        List<java.util.concurrent.CompletableFuture<SubmitResult>> calls = new java.util.ArrayList<>();
        try (StatefulRedisConnection<String, String> admin = client.connect()) {
            admin.sync().clientPause(2000); // until the submissions below are sent, on a slow machine too
            dispatcher.taskQueued(); // a round; its claim waits in Redis
            assertThat(dispatcher.isRunning()).isTrue();
            // These claim in their own runs; the last finds as many on their way, so it is queued,
            // then signals: its script runs after the round's claim (one connection: Redis runs
            // the round's claim, the four claiming runs and the plain one in the order sent).
            for (int i = 0; i < claiming; i++) {
                calls.add(dispatcher.submit(noop("first-" + i)));
            }
            calls.add(dispatcher.submit(noop("late")));
            calls.forEach(c -> assertThat(c.orTimeout(10, TimeUnit.SECONDS).join().isCreated()).isTrue());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.getSent() == claiming + 1 && !dispatcher.isRunning());
        assertThat(dispatcher.getClaimedOnSubmit()).isEqualTo(claiming);
        assertThat(core.getTask("late").join().orElseThrow().getState()).isEqualTo(TaskState.ASSIGNED);
        assertThat(dispatcher.getRounds()).as("one found the queue empty, the next claimed the late one").isEqualTo(3);
    }
}
