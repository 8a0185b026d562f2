package io.rlscheduler.core.internal;

import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A script run's task transitions share one stream entry (lib.lua's flush_events): what the
 * entries hold, how a subscription turns them back into one event per transition, resuming after
 * an event inside such an entry, and that a run which fails after writing still writes its events.
 */
class EventBatchIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private String stream;
    private RedisCommands<String, String> commands;
    private final List<EventSubscription> subscriptions = new ArrayList<>();

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns, RedisCommands<String, String> commands) {
        core = LeaseCore.create(client, CoreFixture.leases(ns, Duration.ofSeconds(30), Duration.ofSeconds(60),
                Duration.ofSeconds(60)));
        stream = ns.hashTag() + ":events";
        this.commands = commands;
    }

    @AfterEach
    void close() {
        subscriptions.forEach(EventSubscription::close);
        core.close();
    }

    private List<TaskEvent> subscribe(String afterId) {
        List<TaskEvent> into = new CopyOnWriteArrayList<>();
        subscriptions.add(core.subscribe(afterId, into::add));
        return into;
    }

    private List<StreamMessage<String, String>> entries() {
        return commands.xrange(stream, Range.create("-", "+"));
    }

    private static List<String> ids(List<TaskEvent> events) {
        return events.stream().map(TaskEvent::getStreamId).toList();
    }

    private static void awaitSize(List<TaskEvent> events, int size) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> events.size() >= size);
    }

    /** Three tasks submitted, then one claim run that assigns all three. Returns the claim's assignments. */
    private List<Assignment> threeClaimedInOneRun() {
        for (String id : List.of("a", "b", "c")) {
            join(core.submit(task(id, 0)));
        }
        join(core.register(worker("w1", "s1")));
        List<Assignment> assigned = join(core.claim("w1", "s1", 3, requestId())).getAssignments();
        assertThat(assigned).hasSize(3);
        return assigned;
    }

    @Test
    void aRunOfSeveralTransitionsWritesOneEntryAndSubscribersGetOneEventEach() {
        List<Assignment> assigned = threeClaimedInOneRun();

        List<StreamMessage<String, String>> entries = entries();
        // 3 submissions (one run each), the registration, the claim run.
        assertThat(entries).hasSize(5);
        StreamMessage<String, String> claimEntry = entries.get(4);
        assertThat(claimEntry.getBody()).containsEntry("type", "tasks").containsEntry("n", "3").containsKeys("1", "2", "3");
        assertThat(entries.get(0).getBody()).containsEntry("type", "task").containsEntry("task", "a");

        List<TaskEvent> events = subscribe("0");
        awaitSize(events, 7);
        assertThat(events).hasSize(7);
        String e = claimEntry.getId();
        assertThat(ids(events).subList(4, 7)).containsExactly(e + "#1", e + "#2", e);
        List<TaskEvent> claimed = events.subList(4, 7);
        for (int i = 0; i < 3; i++) {
            TaskEvent ev = claimed.get(i);
            Assignment a = assigned.get(i);
            assertThat(ev.getKind()).isEqualTo(TaskEvent.Kind.TASK);
            assertThat(ev.getTo()).isEqualTo(TaskState.ASSIGNED);
            Map<String, String> expected = new LinkedHashMap<>();
            expected.put("type", "task");
            expected.put("task", a.getTaskId());
            expected.put("from", "QUEUED");
            expected.put("to", "ASSIGNED");
            expected.put("epoch", Long.toString(a.getEpoch()));
            expected.put("worker", "w1");
            expected.put("attempt", "1");
            expected.put("reason", "claimed by w1");
            expected.put("via", "claim");
            expected.put("at", ev.getFields().get("at"));
            // Same fields, same order as a single-transition entry has them.
            assertThat(new ArrayList<>(ev.getFields().entrySet())).containsExactlyElementsOf(expected.entrySet());
            assertThat(ev.getFields().get("at")).matches("\\d{13}");
        }
        assertThat(new ArrayList<>(events.get(0).getFields().keySet()))
                .as("a single-transition entry's fields, for comparison")
                .containsExactlyElementsOf(claimed.get(0).getFields().keySet());
    }

    @Test
    void resumingAfterAnEventInsideAnEntryDeliversTheRestOfItThenLaterEntries() {
        List<Assignment> assigned = threeClaimedInOneRun();
        String e = entries().get(4).getId();

        List<TaskEvent> afterFirst = subscribe(e + "#1");
        awaitSize(afterFirst, 2);
        assertThat(ids(afterFirst)).containsExactly(e + "#2", e);
        assertThat(afterFirst).extracting(TaskEvent::getTaskId)
                .containsExactly(assigned.get(1).getTaskId(), assigned.get(2).getTaskId());

        // Past the entry's count: nothing more of it; later entries still come.
        List<TaskEvent> pastEnd = subscribe(e + "#7");
        List<TaskEvent> afterEntry = subscribe(e);
        join(core.acknowledge(lease(assigned.get(0)), "w1", "s1"));
        awaitSize(pastEnd, 1);
        awaitSize(afterEntry, 1);
        awaitSize(afterFirst, 3);
        for (List<TaskEvent> events : List.of(pastEnd, afterEntry, afterFirst.subList(2, 3))) {
            assertThat(events).singleElement().satisfies(ev -> {
                assertThat(ev.getTaskId()).isEqualTo(assigned.get(0).getTaskId());
                assertThat(ev.getTo()).isEqualTo(TaskState.RUNNING);
            });
        }
    }

    @Test
    void aSubscriptionThatStopsInsideAnEntryResumesFromItsLastIdWithNothingMissedOrRepeated() {
        threeClaimedInOneRun();
        List<TaskEvent> all = subscribe("0");
        awaitSize(all, 7);
        for (int upTo = 0; upTo < all.size(); upTo++) {
            List<TaskEvent> rest = subscribe(all.get(upTo).getStreamId());
            int expected = all.size() - upTo - 1;
            if (expected > 0) {
                awaitSize(rest, expected);
            }
            assertThat(ids(rest)).as("after %s", all.get(upTo).getStreamId())
                    .isEqualTo(ids(all.subList(upTo + 1, all.size())));
        }
    }

    @Test
    void resumingInsideAnEntryThatWasTrimmedGivesOneGapFromTheLastEventDelivered() {
        threeClaimedInOneRun();
        String e = entries().get(4).getId();
        for (String id : List.of("d", "e", "f")) {
            join(core.submit(task(id, 0)));
        }
        commands.xtrim(stream, 2); // exactly: the last two entries, e's and f's submissions, stay
        String oldest = entries().get(0).getId();

        List<TaskEvent> events = subscribe(e + "#1");
        awaitSize(events, 3);
        assertThat(events.get(0).getKind()).isEqualTo(TaskEvent.Kind.GAP);
        assertThat(events.get(0).getFields()).containsEntry("after", e + "#1").containsEntry("next", oldest);
        assertThat(events.subList(1, 3)).extracting(TaskEvent::getTaskId).containsExactly("e", "f");
        join(core.submit(task("g", 0)));
        awaitSize(events, 4);
        assertThat(events).as("one gap, not a second from the entry's own id").filteredOn(ev -> ev.getKind() == TaskEvent.Kind.GAP)
                .hasSize(1);
    }

    @Test
    void moreTransitionsThanAnEntryHoldsGoToSeveralEntries() {
        int tasks = EventIds.MAX_PER_ENTRY + 6;
        for (int i = 0; i < tasks; i++) {
            join(core.submit(task("t" + i, 0)));
        }
        join(core.register(new WorkerRegistration("w1", "s1", Map.of(), tasks, 64L << 30, List.of())));
        String before = entries().get(entries().size() - 1).getId();
        assertThat(join(core.claim("w1", "s1", tasks, requestId())).getAssignments()).hasSize(tasks);

        List<StreamMessage<String, String>> claimEntries = commands.xrange(stream, Range.create(before, "+")).subList(1, 3);
        assertThat(claimEntries).extracting(m -> m.getBody().get("n"))
                .containsExactly(Integer.toString(EventIds.MAX_PER_ENTRY), "6");
        List<TaskEvent> events = subscribe(before);
        awaitSize(events, tasks);
        assertThat(events).extracting(TaskEvent::getTaskId)
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, tasks).mapToObj(i -> "t" + i).toList());
        assertThat(events).extracting(TaskEvent::getTo).containsOnly(TaskState.ASSIGNED);
    }

    @Test
    void transitionsBeforeAnotherEventOfTheSameRunAreWrittenBeforeIt() {
        List<Assignment> assigned = threeClaimedInOneRun();
        String before = entries().get(entries().size() - 1).getId();
        // A new session of w1: register.lua takes its three tasks back, then writes 'registered'.
        join(core.register(worker("w1", "s2")));

        List<StreamMessage<String, String>> after = commands.xrange(stream, Range.create(before, "+"));
        assertThat(after).extracting(m -> m.getBody().get("type")).containsExactly("tasks", "tasks", "worker");
        List<TaskEvent> events = subscribe(before);
        awaitSize(events, 4);
        assertThat(events.subList(0, 3)).extracting(TaskEvent::getTaskId)
                .containsExactlyInAnyOrderElementsOf(assigned.stream().map(Assignment::getTaskId).toList());
        assertThat(events.subList(0, 3)).extracting(TaskEvent::getTo).containsOnly(TaskState.QUEUED);
        assertThat(events.get(3).getKind()).isEqualTo(TaskEvent.Kind.WORKER);
        assertThat(events.get(3).getFields()).containsEntry("what", "registered").containsEntry("session", "s2");
    }

    @Test
    void aRunThatFailsAfterATransitionStillWritesItsEvent(RedisNamespace ns) {
        join(core.submit(task("good", 0)));
        join(core.submit(task("broken", 0)));
        // A record that cannot be decoded: the claim run assigns "good", then fails on "broken".
        commands.hset(ns.hashTag() + ":tasks", "broken", "{not json");
        join(core.register(worker("w1", "s1")));
        String before = entries().get(entries().size() - 1).getId();

        assertThat(core.claim("w1", "s1", 2, requestId())).failsWithin(Duration.ofSeconds(10));
        assertThat(CoreFixture.record(core, "good").getState()).isEqualTo(TaskState.ASSIGNED);

        List<TaskEvent> events = subscribe(before);
        awaitSize(events, 1);
        assertThat(events).singleElement().satisfies(ev -> {
            assertThat(ev.getTaskId()).isEqualTo("good");
            assertThat(ev.getTo()).isEqualTo(TaskState.ASSIGNED);
        });
    }

    @Test
    void aFailedWriteOfTheEventsReportsItsOwnError() {
        threeClaimedInOneRun();
        // The stream key holding a string: register.lua's three take-backs are buffered, and
        // writing them before the 'registered' event fails inside the script's body.
        commands.del(stream);
        commands.set(stream, "not a stream");
        assertThat(core.register(worker("w1", "s2"))).failsWithin(Duration.ofSeconds(10))
                .withThrowableThat().havingRootCause().withMessageContaining("WRONGTYPE");
    }

    @Test
    void aReasonWithTabsAndNewlinesComesThroughWhole() {
        int tasks = 6;
        for (int i = 0; i < tasks; i++) {
            join(core.submit(task("x" + i, 0)));
        }
        join(core.register(worker("w1", "s1")));
        List<Assignment> assigned = join(core.claim("w1", "s1", tasks, requestId())).getAssignments();
        String before = entries().get(entries().size() - 1).getId();
        String error = "Traceback:\n\tline 1\tin <module>\nValueError: bad\t";
        // Finishes sent together may share a run (LeaseCore coalesces calls while two runs are
        // out); whether they do or not, the reason must come through whole.
        List<java.util.concurrent.CompletableFuture<WriteResult>> finishes = assigned.stream()
                .map(a -> core.finish(lease(a), "w1", "s1", TaskState.FAILED, 1, error, null)).toList();
        finishes.forEach(CoreFixture::join);
        // And an entry of several written as lib.lua writes one, read back by the subscription.
        String raw = commands.xadd(stream, Map.of("type", "tasks", "n", "2",
                "1", "r1\tRUNNING\tFAILED\t17\tw1\t1\tworker\t1764546000123\t250\t1\t" + error,
                "2", "r2\tRUNNING\tFAILED\t18\tw1\t2\tworker\t1764546000124\t\t\t"));

        List<TaskEvent> events = subscribe(before);
        awaitSize(events, tasks + 2);
        assertThat(events.subList(0, tasks)).allSatisfy(ev -> {
            assertThat(ev.getTo()).isEqualTo(TaskState.FAILED);
            assertThat(ev.getFields()).containsEntry("reason", error).containsEntry("via", "worker");
        });
        assertThat(events.subList(tasks, tasks + 2)).extracting(TaskEvent::getStreamId).containsExactly(raw + "#1", raw);
        assertThat(events.get(tasks).getFields()).containsEntry("task", "r1").containsEntry("epoch", "17")
                .containsEntry("attempt", "1").containsEntry("at", "1764546000123").containsEntry("reason", error);
        assertThat(events.get(tasks).getLogLines()).isEqualTo(250);
        assertThat(events.get(tasks).getExitCode()).isEqualTo(1);
        assertThat(events.get(tasks + 1).getFields()).containsEntry("task", "r2").containsEntry("reason", "")
                .doesNotContainKeys("lines", "exit");
        assertThat(events.get(tasks + 1).getLogLines()).isEqualTo(-1);
    }

    @Test
    void aMalformedTransitionInAnEntryIsSkippedAndTheRestDelivered() {
        String raw = commands.xadd(stream, Map.of("type", "tasks", "n", "3",
                "1", "r1\tQUEUED\tASSIGNED\t17\tw1\t1\tclaim\t1764546000123\t\t\tclaimed by w1",
                "2", "too\tfew\tparts",
                "3", "r3\tQUEUED\tASSIGNED\t18\tw1\t1\tclaim\t1764546000123\t\t\tclaimed by w1"));
        commands.xadd(stream, Map.of("type", "tasks", "n", "many", "1", "ignored"));
        join(core.submit(task("after", 0)));

        List<TaskEvent> events = subscribe("0");
        awaitSize(events, 3);
        assertThat(events).extracting(TaskEvent::getTaskId).containsExactly("r1", "r3", "after");
        assertThat(events.get(1).getStreamId()).isEqualTo(raw);
    }

    @Test
    void aMalformedPositionIsRefused() {
        for (String bad : List.of("", "abc", "1-2#0", "1-2#", "1#2", "1-2#x", "-", "1-2-3")) {
            assertThatThrownBy(() -> core.subscribe(bad, e -> { }))
                    .as("'%s'", bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("afterId");
        }
    }
}
