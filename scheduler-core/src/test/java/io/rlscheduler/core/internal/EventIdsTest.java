package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Ordering positions in the event stream as Redis orders its ids, for the gap check. */
class EventIdsTest {

    @Test
    void comparesEntriesAsTwoUnsignedNumbers() {
        assertThat(EventIds.compareEntries("5-1", "5-2")).isNegative();
        assertThat(EventIds.compareEntries("10-0", "9-99")).as("numbers, not text").isPositive();
        assertThat(EventIds.compareEntries("7-3", "7-3")).isZero();
        assertThat(EventIds.compareEntries("18446744073709551615-0", "9223372036854775807-0"))
                .as("ids are unsigned 64-bit").isPositive();
    }

    @Test
    void theSuccessorIsTheFirstEntryIdAnXreadAfterThePositionWouldReturn() {
        assertThat(EventIds.successor("0")).isEqualTo("0-1");
        assertThat(EventIds.successor("5")).as("5 is 5-0").isEqualTo("5-1");
        assertThat(EventIds.successor("5-3")).isEqualTo("5-4");
        assertThat(EventIds.successor("5-3#2")).as("after the entry an event is in").isEqualTo("5-4");
        assertThat(EventIds.successor("5-18446744073709551615")).as("the last sequence of a millisecond").isEqualTo("6-0");
        assertThat(EventIds.successor("18446744073709551614-7")).isEqualTo("18446744073709551614-8");
    }

    @Test
    void anEventInsideAnEntryIsItsEntryAMillisecondAloneIsSequenceZeroAndZeroIsTheLeast() {
        assertThat(EventIds.compareEntries("7-3#2", "7-3")).isZero();
        assertThat(EventIds.compareEntries("7-3#2", "7-4")).isNegative();
        assertThat(EventIds.compareEntries("7", "7-0")).isZero();
        assertThat(EventIds.compareEntries("7", "6-5")).isPositive();
        assertThat(EventIds.compareEntries("0", "0-1")).isNegative();
    }
}
