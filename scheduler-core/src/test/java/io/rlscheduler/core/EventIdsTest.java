package io.rlscheduler.core;

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
    void anEventInsideAnEntryIsItsEntryAMillisecondAloneIsSequenceZeroAndZeroIsTheLeast() {
        assertThat(EventIds.compareEntries("7-3#2", "7-3")).isZero();
        assertThat(EventIds.compareEntries("7-3#2", "7-4")).isNegative();
        assertThat(EventIds.compareEntries("7", "7-0")).isZero();
        assertThat(EventIds.compareEntries("7", "6-5")).isPositive();
        assertThat(EventIds.compareEntries("0", "0-1")).isNegative();
    }
}
