package io.rlscheduler.core.internal;

import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.FaultProxy;
import io.rlscheduler.testkit.Gate;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.lease;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static io.rlscheduler.core.internal.CoreFixture.task;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The event stream: every transition in order, and resuming after the last event delivered. */
class EventStreamIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private final List<EventSubscription> subscriptions = new ArrayList<>();

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        // Long leases: nothing here waits for time to pass.
        core = LeaseCore.create(client, CoreFixture.leases(ns, Duration.ofSeconds(30), Duration.ofSeconds(60),
                Duration.ofSeconds(60)));
    }

    @AfterEach
    void close() {
        subscriptions.forEach(EventSubscription::close);
        core.close();
    }

    private EventSubscription subscribe(String afterId, List<TaskEvent> into) {
        EventSubscription s = core.subscribe(afterId, into::add);
        subscriptions.add(s);
        return s;
    }

    private static List<TaskEvent> ofTask(List<TaskEvent> events, String taskId) {
        return events.stream().filter(e -> e.getKind() == TaskEvent.Kind.TASK && taskId.equals(e.getTaskId())).toList();
    }

    private static void awaitEvents(List<TaskEvent> events, String taskId, int count) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> ofTask(events, taskId).size() >= count);
    }

    /**
     * Stream ids are "ms-seq"; compares them as numbers (EventIdsTest checks the comparison). An
     * event inside an entry of several ("ms-seq#i") is compared as its entry: this class's runs
     * make one transition each.
     */
    private static int compareIds(String a, String b) {
        return EventIds.compareEntries(a, b);
    }

    private static void assertStrictlyIncreasing(List<TaskEvent> events) {
        for (int i = 1; i < events.size(); i++) {
            assertThat(compareIds(events.get(i - 1).getStreamId(), events.get(i).getStreamId()))
                    .as("stream ids %s then %s", events.get(i - 1).getStreamId(), events.get(i).getStreamId())
                    .isNegative();
        }
    }

    @Test
    void aClientWithoutACommandTimeoutReadsAndAnInterruptDoesNotStopTheSubscription(TestRedis redis, RedisNamespace ns) {
        // A RedisURI timeout of 0: Lettuce's sync API waits without a limit, and so must the read.
        RedisClient untimed = RedisClient.create(io.lettuce.core.RedisURI.builder().withHost(redis.getHost())
                .withPort(redis.getPort()).withTimeout(Duration.ZERO).build());
        LeaseCore reader = LeaseCore.create(untimed, core.getOptions());
        try {
            List<TaskEvent> events = new CopyOnWriteArrayList<>();
            EventSubscription s = reader.subscribe("$", events::add);
            subscriptions.add(s);
            join(core.submit(task("before-interrupt", 0)));
            awaitEvents(events, "before-interrupt", 1);
            Thread thread = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("rls-events-" + ns.hashTag() + ":events")).findFirst().orElseThrow();
            thread.interrupt();
            join(core.submit(task("after-interrupt", 0)));
            awaitEvents(events, "after-interrupt", 1);
            assertThat(thread.isAlive()).isTrue();
        } finally {
            subscriptions.forEach(EventSubscription::close);
            subscriptions.clear();
            reader.close();
            untimed.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void subscriberSeesEveryTransitionOfALifecycleInOrderWithItsEpoch() {
        List<TaskEvent> events = new CopyOnWriteArrayList<>();
        subscribe("0", events);

        join(core.submit(task("t1", 1)));
        join(core.register(worker("w1", "s1", 0)));
        Assignment a = join(core.claim("w1", "s1", 1, requestId())).getAssignments().get(0);
        join(core.acknowledge(lease(a), "w1", "s1"));
        join(core.finish(lease(a), "w1", "s1", TaskState.SUCCEEDED, 0, null, null));

        awaitEvents(events, "t1", 4);
        List<TaskEvent> t1 = ofTask(events, "t1");
        assertThat(t1).extracting(TaskEvent::getTo)
                .containsExactly(TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING, TaskState.SUCCEEDED);
        assertThat(t1).extracting(e -> e.getFields().get("from")).containsExactly("", "QUEUED", "ASSIGNED", "RUNNING");
        assertThat(t1).extracting(TaskEvent::getVia).containsExactly(TaskEvent.Via.SUBMIT, TaskEvent.Via.CLAIM,
                TaskEvent.Via.WORKER, TaskEvent.Via.WORKER);
        String epoch = Long.toString(a.getEpoch());
        assertThat(t1).extracting(e -> e.getFields().get("epoch")).containsExactly("0", epoch, epoch, epoch);
        assertThat(t1).extracting(e -> e.getFields().get("worker")).containsExactly("", "w1", "w1", "w1");
        assertThat(t1).extracting(e -> e.getFields().get("attempt")).containsExactly("0", "1", "1", "1");
        assertStrictlyIncreasing(events);
        assertThat(events).filteredOn(e -> e.getKind() == TaskEvent.Kind.WORKER)
                .extracting(e -> e.getFields().get("what")).containsExactly("registered");
    }

    @Test
    void anEndItsWorkerRecordedCarriesTheLineCountAndExitCodeAndNoOtherEventDoes() {
        List<TaskEvent> events = new CopyOnWriteArrayList<>();
        subscribe("0", events);
        join(core.register(worker("w1", "s1", 0, 1)));
        for (String id : List.of("alone", "paired")) {
            join(core.submit(task(id, 1)));
        }
        join(core.submit(task("cancelled", 0)));
        List<Assignment> assigned = join(core.claim("w1", "s1", 2, requestId())).getAssignments();
        assigned.forEach(a -> join(core.acknowledge(lease(a), "w1", "s1")));
        Assignment alone = assigned.stream().filter(a -> a.getTaskId().equals("alone")).findFirst().orElseThrow();
        Assignment paired = assigned.stream().filter(a -> a.getTaskId().equals("paired")).findFirst().orElseThrow();
        // One end alone in its script run (the single-entry form), and one beside others in a
        // batched entry cannot be forced here, so the batched form is pinned in EventBatchIT.
        join(core.finish(lease(alone), "w1", "s1", TaskState.SUCCEEDED, 0, null, null, null, 42));
        join(core.finish(lease(paired), "w1", "s1", TaskState.FAILED, 3, "boom", null, null, -1));
        join(core.cancel("cancelled", "not needed"));

        awaitEvents(events, "cancelled", 2);
        awaitEvents(events, "paired", 4);
        TaskEvent end = ofTask(events, "alone").get(3);
        assertThat(end.getTo()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(end.getVia()).isEqualTo(io.rlscheduler.core.TaskEvent.Via.WORKER);
        assertThat(end.getLogLines()).isEqualTo(42);
        assertThat(end.getExitCode()).isZero();
        assertThat(end.getEpoch()).isEqualTo(alone.getEpoch());
        assertThat(end.getFrom()).isEqualTo(TaskState.RUNNING);
        TaskEvent unknownLines = ofTask(events, "paired").get(3);
        assertThat(unknownLines.getTo()).isEqualTo(TaskState.FAILED);
        assertThat(unknownLines.getLogLines()).as("the worker did not know its line count").isEqualTo(-1);
        assertThat(unknownLines.getReason()).isEqualTo("boom");
        assertThat(ofTask(events, "cancelled")).allSatisfy(e -> {
            assertThat(e.getLogLines()).isEqualTo(-1);
            assertThat(e.getExitCode()).isNull();
        });
        assertThat(ofTask(events, "alone").subList(0, 3)).allSatisfy(e -> assertThat(e.getFields()).doesNotContainKeys("lines", "exit"));
    }

    @Test
    void resubscribingFromTheLastIdDeliversOnlyLaterEventsNoneMissedNoneRepeated(
            RedisNamespace ns, RedisCommands<String, String> commands) {
        List<TaskEvent> first = new CopyOnWriteArrayList<>();
        EventSubscription s1 = subscribe("0", first);
        join(core.submit(task("t1", 1)));
        join(core.register(worker("w1", "s1", 0)));
        awaitEvents(first, "t1", 1);
        s1.close();
        subscriptions.remove(s1);
        String lastId = s1.getLastId();
        assertThat(first).isNotEmpty();
        assertThat(lastId).isEqualTo(first.get(first.size() - 1).getStreamId());
        int deliveredBeforeClose = first.size();

        // Transitions while nobody listens.
        Assignment a = join(core.claim("w1", "s1", 1, requestId())).getAssignments().get(0);
        join(core.acknowledge(lease(a), "w1", "s1"));
        join(core.finish(lease(a), "w1", "s1", TaskState.SUCCEEDED, 0, null, null));
        join(core.submit(task("t2", 1)));
        join(core.cancel("t2", "not needed"));

        List<TaskEvent> second = new CopyOnWriteArrayList<>();
        subscribe(lastId, second);
        awaitEvents(second, "t2", 2);
        // And one more while the new subscription listens.
        join(core.submit(task("t3", 0)));
        awaitEvents(second, "t3", 1);
        assertThat(first).as("the closed subscription got nothing more").hasSize(deliveredBeforeClose);

        String stream = ns.hashTag() + ":events";
        List<String> all = commands.xrange(stream, Range.create("-", "+")).stream().map(StreamMessage::getId).toList();
        List<String> delivered = new ArrayList<>();
        first.forEach(e -> delivered.add(e.getStreamId()));
        second.forEach(e -> delivered.add(e.getStreamId()));
        assertThat(delivered).as("both subscriptions together").doesNotHaveDuplicates().isEqualTo(all);
        assertThat(compareIds(second.get(0).getStreamId(), lastId)).isPositive();
        assertStrictlyIncreasing(second);

        assertThat(ofTask(second, "t1")).extracting(TaskEvent::getTo)
                .containsExactly(TaskState.ASSIGNED, TaskState.RUNNING, TaskState.SUCCEEDED);
        assertThat(ofTask(second, "t2")).extracting(TaskEvent::getTo)
                .containsExactly(TaskState.QUEUED, TaskState.CANCELLED);
        assertThat(ofTask(second, "t3")).extracting(TaskEvent::getTo).containsExactly(TaskState.QUEUED);
        assertThat(ofTask(first, "t1")).extracting(TaskEvent::getTo).containsExactly(TaskState.QUEUED);
    }

    /**
     * A subscription that falls further behind than the stream keeps (here its listener is held
     * while 400 more entries are written to a stream trimmed to about 100) is told so with a gap
     * event, before the first event it still gets; a subscription that keeps up, and one from "0"
     * (everything kept), get none.
     */
    @Test
    void aSubscriptionThatFellBehindPastTheTrimGetsAGapEventBeforeTheEventsAfterIt(
            RedisClient client, RedisNamespace ns, RedisCommands<String, String> commands) throws Exception {
        LeaseCore trimmed = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name())
                .eventStreamMaxLength(100).build());
        try {
            Gate gate = new Gate();
            List<TaskEvent> slow = new CopyOnWriteArrayList<>();
            EventSubscription slowSubscription = trimmed.subscribe("$", event -> {
                slow.add(event);
                if (slow.size() == 1) {
                    gate.hold();
                }
            });
            subscriptions.add(slowSubscription);
            List<TaskEvent> keepingUp = new CopyOnWriteArrayList<>();
            subscribe("$", keepingUp);

            join(trimmed.submit(task("first", 0)));
            assertThat(gate.awaitHeld(Duration.ofSeconds(10))).isTrue();
            join(trimmed.submit(task("lost", 0)));
            join(trimmed.cancel("lost", "trimmed before the slow subscription reads it"));
            for (int i = 0; i < 400; i++) {
                join(trimmed.submit(task("filler-" + i, 0))); // one at a time: one stream entry each
            }
            String stream = ns.hashTag() + ":events";
            String oldestKept = commands.xrange(stream, Range.create("-", "+"), io.lettuce.core.Limit.create(0, 1)).get(0).getId();
            String firstId = slow.get(0).getStreamId();
            assertThat(compareIds(oldestKept, firstId)).as("the stream was trimmed past the held event").isPositive();

            gate.release();
            awaitEvents(slow, "filler-399", 1);
            List<TaskEvent> gaps = slow.stream().filter(e -> e.getKind() == TaskEvent.Kind.GAP).toList();
            assertThat(gaps).hasSize(1);
            TaskEvent gap = gaps.get(0);
            assertThat(slow.indexOf(gap)).as("right after the last event delivered before it").isEqualTo(1);
            assertThat(gap.getFields()).containsEntry("after", firstId).containsEntry("next", oldestKept);
            assertThat(gap.getStreamId()).isEqualTo(firstId);
            assertThat(gap.getTaskId()).isNull();
            assertThat(gap.getTo()).isNull();
            assertThat(slow.get(2).getStreamId()).as("then the oldest event kept").isEqualTo(oldestKept);
            assertThat(ofTask(slow, "lost")).isEmpty();
            assertStrictlyIncreasing(slow.subList(2, slow.size()));

            awaitEvents(keepingUp, "filler-399", 1);
            assertThat(keepingUp).noneMatch(e -> e.getKind() == TaskEvent.Kind.GAP);
            assertThat(ofTask(keepingUp, "lost")).extracting(TaskEvent::getTo)
                    .containsExactly(TaskState.QUEUED, TaskState.CANCELLED);

            List<TaskEvent> fromStart = new CopyOnWriteArrayList<>();
            subscribe("0", fromStart);
            awaitEvents(fromStart, "filler-399", 1);
            assertThat(fromStart).noneMatch(e -> e.getKind() == TaskEvent.Kind.GAP);
            assertThat(fromStart.get(0).getStreamId()).isEqualTo(oldestKept);
        } finally {
            trimmed.close();
        }
    }

    /**
     * A subscription for new events that began on an empty stream and could not read until the
     * stream had been trimmed (its connection held by a proxy meanwhile) has nothing to compare
     * with but the stream's length: one past the trimming length may have lost events, and it says
     * so.
     */
    @Test
    void aSubscriptionThatBeganOnAnEmptyStreamAndFirstReadAfterTheTrimGetsAGap(
            TestRedis redis, RedisClient client, RedisNamespace ns, RedisCommands<String, String> commands) {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).eventStreamMaxLength(100).build();
        String stream = ns.hashTag() + ":events";
        assertThat(commands.xlen(stream)).isZero();
        LeaseCore writer = LeaseCore.create(client, options);
        try (FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort())) {
            RedisClient proxied = RedisClient.create("redis://127.0.0.1:" + proxy.getPort());
            LeaseCore reader = LeaseCore.create(proxied, options);
            List<TaskEvent> events = new CopyOnWriteArrayList<>();
            EventSubscription subscription = reader.subscribe("$", events::add);
            try {
                // Its blocking read waits in Redis already: the first entry written answers it, and
                // the answer is held with the connection while the stream is trimmed past that entry.
                await().atMost(Duration.ofSeconds(10)).until(() -> commands.clientList().contains("cmd=xread"));
                proxy.blackhole();
                for (int i = 0; i < 400; i++) {
                    join(writer.submit(task("filler-" + i, 0))); // one entry each
                }
                String oldest = commands.xrange(stream, Range.create("-", "+"), io.lettuce.core.Limit.create(0, 1)).get(0).getId();
                proxy.pass();

                awaitEvents(events, "filler-399", 1);
                // One gap, from the start to the oldest entry kept: the entry that answered the held
                // read was trimmed before the events were read, and nothing before it was lost.
                assertThat(events.get(0).getKind()).isEqualTo(TaskEvent.Kind.GAP);
                assertThat(events.get(0).getFields()).containsEntry("after", "0").containsEntry("next", oldest);
                assertThat(events.get(1).getStreamId()).isEqualTo(oldest);
                assertThat(events).filteredOn(e -> e.getKind() == TaskEvent.Kind.GAP).hasSize(1);
                assertThat(ofTask(events, "filler-0")).as("trimmed").isEmpty();
            } finally {
                subscription.close();
                reader.close();
                proxied.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            writer.close();
        }
    }
}
