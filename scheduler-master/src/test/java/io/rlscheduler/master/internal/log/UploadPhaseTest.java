package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.UploadPhase.BACKING_OFF;
import static io.rlscheduler.master.internal.log.UploadPhase.QUEUED;
import static io.rlscheduler.master.internal.log.UploadPhase.SENDING;
import static io.rlscheduler.master.internal.log.UploadPhase.SENDING_STALE;
import static io.rlscheduler.master.internal.log.UploadPhase.STORED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The log upload's table of phase moves, and where a log that ends again leaves an upload. No I/O. */
class UploadPhaseTest {

    /** The table, written out once more: a change to either side must be made to both. */
    private static final Map<UploadPhase, Set<UploadPhase>> TABLE = Map.of(
            QUEUED, EnumSet.of(SENDING),
            SENDING, EnumSet.of(STORED, SENDING_STALE, BACKING_OFF),
            SENDING_STALE, EnumSet.of(QUEUED, BACKING_OFF),
            BACKING_OFF, EnumSet.of(QUEUED),
            STORED, EnumSet.noneOf(UploadPhase.class));

    @Test
    void theTableAllowsExactlyTheseMoves() {
        assertThat(TABLE.keySet()).containsExactlyInAnyOrder(UploadPhase.values());
        for (UploadPhase from : UploadPhase.values()) {
            assertThat(from.nextPhases()).as("moves from %s", from).isEqualTo(TABLE.get(from));
            for (UploadPhase to : UploadPhase.values()) {
                assertThat(from.canMoveTo(to)).as("%s -> %s", from, to).isEqualTo(TABLE.get(from).contains(to));
                if (TABLE.get(from).contains(to)) {
                    assertThat(from.moveTo(to)).isSameAs(to);
                } else {
                    assertThatThrownBy(() -> from.moveTo(to)).as("%s -> %s", from, to)
                            .isInstanceOf(IllegalStateException.class).hasMessageContaining(from + " to " + to);
                }
            }
        }
    }

    @Test
    void aLogThatEndsAgainWhileItsFileIsSentIsSentOnceMoreAndOtherwiseTheComingSendTakesTheNewerFile() {
        assertThat(SENDING.endedAgain()).isEqualTo(SENDING_STALE);
        assertThat(SENDING_STALE.endedAgain()).isEqualTo(SENDING_STALE);
        assertThat(QUEUED.endedAgain()).isEqualTo(QUEUED);
        assertThat(BACKING_OFF.endedAgain()).isEqualTo(BACKING_OFF);
        assertThatThrownBy(STORED::endedAgain).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aStoredUploadIsOverAndAStaleSendIsNeverTakenForTheStoredFile() {
        assertThat(STORED.nextPhases()).isEmpty();
        assertThat(SENDING_STALE.canMoveTo(STORED)).as("the newer file is still to be sent").isFalse();
    }
}
