package io.rlscheduler.master;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.HolderReads;
import io.rlscheduler.master.internal.AttemptHolders;
import io.rlscheduler.master.internal.OpenAttemptIndex;
import io.rlscheduler.master.internal.WorkerLimits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** An attempt's log end forgets its holder only when the log is complete: lines may follow an incomplete one. */
class TaskLogEventsTest {

    private final AttemptHolders holders = new AttemptHolders(id -> CompletableFuture.completedFuture(
            Optional.of(new HolderReads.Holder(1, 1, "w1", "s1", TaskState.FAILED))));
    private final TaskLogEvents events = new TaskLogEvents(new OpenAttemptIndex(new WorkerLimits(1 << 20, 1 << 20, 2,
            Duration.ofSeconds(4), Duration.ofMinutes(1))), holders, null);

    @Test
    void aCompleteEndOfAnAcknowledgedAttemptForgetsItsHolderAnIncompleteOneDoesNot() {
        holders.assigned("complete", 1, "w1", "s1");
        holders.assigned("incomplete", 1, "w1", "s1");
        holders.acknowledged("complete", 1);
        holders.acknowledged("incomplete", 1);

        events.attemptEnded("complete", 1, true);
        events.attemptEnded("incomplete", 1, false);

        assertThat(holders.known("complete", 1, "w1", "s1")).isNull();
        assertThat(holders.known("incomplete", 1, "w1", "s1")).as("its late lines are still its holder's")
                .isEqualTo(AttemptHolders.Verdict.HOLDER);
        assertThat(holders.size()).isEqualTo(1);
    }
}
