package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogPhase.ENDED;
import static io.rlscheduler.master.internal.log.LogPhase.ENDING;
import static io.rlscheduler.master.internal.log.LogPhase.NONE;
import static io.rlscheduler.master.internal.log.LogPhase.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The attempt log's table of phase moves, and that a state changes its phase only by it. No I/O. */
class LogPhaseTest {

    /** The table, written out once more: a change to either side must be made to both. */
    private static final Map<LogPhase, Set<LogPhase>> TABLE = Map.of(
            NONE, EnumSet.of(NONE, RUNNING, ENDED),
            RUNNING, EnumSet.of(NONE, RUNNING, ENDING, ENDED),
            ENDING, EnumSet.of(NONE, RUNNING, ENDING, ENDED),
            ENDED, EnumSet.of(NONE, RUNNING));

    @Test
    void theTableAllowsExactlyTheseMoves() {
        assertThat(TABLE.keySet()).containsExactlyInAnyOrder(LogPhase.values());
        for (LogPhase from : LogPhase.values()) {
            assertThat(from.nextPhases()).as("moves from %s", from).isEqualTo(TABLE.get(from));
            for (LogPhase to : LogPhase.values()) {
                assertThat(from.canMoveTo(to)).as("%s -> %s", from, to).isEqualTo(TABLE.get(from).contains(to));
            }
        }
    }

    @Test
    void aLegalMoveReturnsItsTarget() {
        for (LogPhase from : LogPhase.values()) {
            for (LogPhase to : TABLE.get(from)) {
                assertThat(from.moveTo(to)).isSameAs(to);
            }
        }
    }

    @Test
    void anIllegalMoveThrowsIllegalStateException() {
        for (LogPhase from : LogPhase.values()) {
            for (LogPhase to : EnumSet.complementOf(EnumSet.copyOf(TABLE.get(from)))) {
                assertThatThrownBy(() -> from.moveTo(to)).as("%s -> %s", from, to)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining(from + " to " + to);
            }
        }
    }

    @Test
    void anAttemptEndsOnceAndOnlyAfterItStarted() {
        assertThatThrownBy(() -> NONE.moveTo(ENDING)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> ENDED.moveTo(ENDED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> ENDED.moveTo(ENDING)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aStateMovesThroughTheTableAndSetsThePhasesData() {
        TaskLogState st = new TaskLogState("t1", Path.of("t1.log"));
        assertThat(st.phase()).isEqualTo(NONE);
        assertThat(st.knowsNothing()).isTrue();

        st.startAttempt(7, 2);
        assertThat(st.phase()).isEqualTo(RUNNING);
        assertThat(st.epoch()).isEqualTo(7);
        assertThat(st.attempt()).isEqualTo(2);

        st.expectEnd(5, TaskState.SUCCEEDED);
        assertThat(st.phase()).isEqualTo(ENDING);
        assertThat(st.pendingEndSequence()).isEqualTo(5);
        assertThat(st.isEvictable()).as("a pending completion lives only in memory").isFalse();

        LogRecord end = LogRecord.endOfStream("t1", 2, 7, TaskState.SUCCEEDED, true, null);
        st.end(end, 5);
        assertThat(st.phase()).isEqualTo(ENDED);
        assertThat(st.endRecord()).isSameAs(end);
        assertThat(st.pendingEndSequence()).isEqualTo(-1);
        assertThat(st.sequenceLimit()).isEqualTo(5);
        assertThatThrownBy(() -> st.end(end, 5)).isInstanceOf(IllegalStateException.class);
        assertThat(st.endRecord()).as("an illegal move changes nothing").isSameAs(end);

        st.forget();
        assertThat(st.phase()).isEqualTo(NONE);
        assertThat(st.epoch()).isEqualTo(-1);
        assertThat(st.endRecord()).isNull();
        assertThat(st.sequenceLimit()).isEqualTo(Long.MAX_VALUE);
    }
}
