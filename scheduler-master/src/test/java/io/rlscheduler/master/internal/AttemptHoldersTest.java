package io.rlscheduler.master.internal;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.HolderReads;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

import static io.rlscheduler.master.internal.AttemptHolders.Verdict.HOLDER;
import static io.rlscheduler.master.internal.AttemptHolders.Verdict.NOT_HOLDER;
import static io.rlscheduler.master.internal.AttemptHolders.Verdict.STALE;
import static io.rlscheduler.master.internal.AttemptHolders.Verdict.UNKNOWN_TASK;
import static org.assertj.core.api.Assertions.assertThat;

/** The holder verdicts, from what was assigned here and from task records (a map stands for Redis). */
class AttemptHoldersTest {

    private final Map<String, HolderReads.Holder> records = new HashMap<>();
    private final AtomicInteger reads = new AtomicInteger();
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AttemptHolders holders = new AttemptHolders(id -> {
        reads.incrementAndGet();
        return CompletableFuture.completedFuture(Optional.ofNullable(records.get(id)));
    }, now::get);

    @Test
    void anAttemptAssignedHereIsCheckedWithoutReadingItsRecord() {
        holders.assigned("t", 5, "w1", "s1");
        assertThat(holders.known("t", 5, "w1", "s1")).isEqualTo(HOLDER);
        assertThat(holders.known("t", 5, "w2", "s2")).isEqualTo(NOT_HOLDER);
        assertThat(holders.known("t", 5, "w1", "s-old")).as("another session of the same worker").isEqualTo(NOT_HOLDER);
        assertThat(holders.known("t", 4, "w1", "s1")).isEqualTo(STALE);
        assertThat(holders.known("t", 6, "w1", "s1")).as("newer than known: read the record").isNull();
        assertThat(reads).hasValue(0);
    }

    @Test
    void anAttemptNotKnownHereIsReadOnceAndThenKnown() {
        records.put("t", new HolderReads.Holder(7, 2, "w1", "s1", TaskState.RUNNING));
        assertThat(holders.lookUp("t", 7, "w1", "s1").join()).isEqualTo(HOLDER);
        for (int i = 0; i < 100; i++) {
            assertThat(holders.known("t", 7, "w1", "s1")).isEqualTo(HOLDER);
        }
        assertThat(reads).hasValue(1);
        assertThat(holders.lookUp("t", 7, "w2", "s2").join()).isEqualTo(NOT_HOLDER);
        assertThat(holders.lookUp("t", 8, "w1", "s1").join()).as("an epoch the task never had").isEqualTo(NOT_HOLDER);
        assertThat(holders.lookUp("t", 6, "w1", "s1").join()).isEqualTo(STALE);
    }

    @Test
    void recordsSayUnknownNeverClaimedAndTakenBack() {
        assertThat(holders.lookUp("missing", 1, "w1", "s1").join()).isEqualTo(UNKNOWN_TASK);
        assertThat(holders.lookUp("../bad id", 1, "w1", "s1").join()).isEqualTo(UNKNOWN_TASK);
        records.put("queued", new HolderReads.Holder(0, 0, "", "", TaskState.QUEUED));
        assertThat(holders.lookUp("queued", 0, "w1", "s1").join()).isEqualTo(NOT_HOLDER);
        records.put("requeued", new HolderReads.Holder(3, 1, "", "", TaskState.QUEUED));
        assertThat(holders.lookUp("requeued", 3, "w1", "s1").join()).isEqualTo(STALE);
        assertThat(holders.size()).as("nothing kept of tasks that do not exist or never ran").isEqualTo(1);
    }

    @Test
    void anEntryGoesOnceItsAcknowledgementWasAdmittedAndItsLogEndedInEitherOrder() {
        holders.assigned("a", 1, "w1", "s1");
        holders.assigned("b", 1, "w1", "s1");
        holders.acknowledged("a", 1);
        holders.logEnded("b", 1);
        assertThat(holders.size()).as("one of the two is not enough").isEqualTo(2);
        holders.logEnded("a", 1);
        holders.acknowledged("b", 1);
        assertThat(holders.size()).isZero();
        // A frame after that (lines after an incomplete end, say) reads the record once, as for any attempt not known here.
        records.put("a", new HolderReads.Holder(1, 1, "w1", "s1", TaskState.SUCCEEDED));
        assertThat(holders.known("a", 1, "w1", "s1")).isNull();
        assertThat(holders.lookUp("a", 1, "w1", "s1").join()).isEqualTo(HOLDER);
        assertThat(reads).hasValue(1);
    }

    @Test
    void whatHappensToAnotherEpochLeavesTheEntryAlone() {
        holders.assigned("t", 3, "w1", "s1");
        holders.acknowledged("t", 2);
        holders.logEnded("t", 2);
        holders.acknowledged("t", 3);
        holders.logEnded("t", 4);
        assertThat(holders.known("t", 3, "w1", "s1")).isEqualTo(HOLDER);
        holders.acknowledged("t", 3);
        assertThat(holders.size()).as("an acknowledgement seen twice is still not the log's end").isEqualTo(1);
        holders.assigned("t", 4, "w2", "s2");
        holders.acknowledged("t", 4);
        holders.logEnded("t", 3);
        assertThat(holders.known("t", 4, "w2", "s2")).as("the new epoch's entry is not the old one's").isEqualTo(HOLDER);
        assertThat(holders.size()).isEqualTo(1);
    }

    @Test
    void anEndedAttemptStaysItsHoldersForItsLastLinesThenIsDroppedAndReadAgain() {
        holders.assigned("t", 2, "w1", "s1");
        holders.ended("t");
        now.addAndGet(AttemptHolders.ENDED_MILLIS - 1);
        holders.sweep();
        assertThat(holders.known("t", 2, "w1", "s1")).isEqualTo(HOLDER);
        now.addAndGet(2);
        holders.sweep();
        assertThat(holders.known("t", 2, "w1", "s1")).isNull();
        records.put("t", new HolderReads.Holder(2, 1, "w1", "s1", TaskState.SUCCEEDED));
        assertThat(holders.lookUp("t", 2, "w1", "s1").join()).isEqualTo(HOLDER);
    }

    @Test
    void anEntryNotUsedForLongIsDroppedAndAReassignmentReplacesAnOlderOne() {
        holders.assigned("idle", 1, "w1", "s1");
        holders.assigned("busy", 1, "w1", "s1");
        now.addAndGet(AttemptHolders.IDLE_MILLIS - 1);
        assertThat(holders.known("busy", 1, "w1", "s1")).isEqualTo(HOLDER);
        now.addAndGet(2);
        holders.sweep();
        assertThat(holders.known("idle", 1, "w1", "s1")).isNull();
        assertThat(holders.known("busy", 1, "w1", "s1")).isEqualTo(HOLDER);
        holders.assigned("busy", 3, "w2", "s2");
        holders.assigned("busy", 2, "w3", "s3");
        assertThat(holders.known("busy", 3, "w2", "s2")).as("an older assignment arriving late changes nothing").isEqualTo(HOLDER);
        assertThat(holders.known("busy", 1, "w1", "s1")).isEqualTo(STALE);
    }
}
