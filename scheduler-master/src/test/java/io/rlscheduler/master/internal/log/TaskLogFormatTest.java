package io.rlscheduler.master.internal.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.internal.log.LogFileFormat.Kind;
import io.rlscheduler.master.internal.log.LogFileFormat.Line;
import org.junit.jupiter.api.Test;

class TaskLogFormatTest {

    @Test
    void headerAndMarkersHaveTheDocumentedForm() {
        assertThat(LogFileFormat.header("tr-1")).isEqualTo("TRACE_ID:tr-1");
        assertThat(LogFileFormat.attemptMarker(2, 17)).isEqualTo("##RLS_ATTEMPT attempt=2 epoch=17");
        assertThat(LogFileFormat.endMarker(TaskState.SUCCEEDED, true, 40, null))
                .isEqualTo("##RLS_END state=SUCCEEDED complete=true last=40");
    }

    @Test
    void markersParseBack() {
        Line attempt = LogFileFormat.parse("##RLS_ATTEMPT attempt=2 epoch=17", false);
        assertThat(attempt.kind()).isEqualTo(Kind.ATTEMPT);
        assertThat(attempt.attempt()).isEqualTo(2);
        assertThat(attempt.epoch()).isEqualTo(17);

        Line end = LogFileFormat.parse(LogFileFormat.endMarker(TaskState.FAILED, false, 3, "worker gone\nfor good"), false);
        assertThat(end.kind()).isEqualTo(Kind.END);
        assertThat(end.finalState()).isEqualTo(TaskState.FAILED);
        assertThat(end.complete()).isFalse();
        assertThat(end.last()).isEqualTo(3);
        assertThat(end.reason()).isEqualTo("worker gone for good");
    }

    @Test
    void anAttemptMarkerAfterLinesAcknowledgedElsewhereParsesBack() {
        assertThat(LogFileFormat.attemptMarker(2, 17, 0)).isEqualTo("##RLS_ATTEMPT attempt=2 epoch=17");
        String marker = LogFileFormat.attemptMarker(2, 17, 40);
        assertThat(marker).isEqualTo("##RLS_ATTEMPT attempt=2 epoch=17 after=40");
        Line parsed = LogFileFormat.parse(marker, false);
        assertThat(parsed.kind()).isEqualTo(Kind.ATTEMPT);
        assertThat(parsed.attempt()).isEqualTo(2);
        assertThat(parsed.epoch()).isEqualTo(17);
        assertThat(parsed.last()).as("the sequence number before its next line").isEqualTo(40);
        assertThat(LogFileFormat.parse("##RLS_ATTEMPT attempt=2 epoch=17", false).last()).isZero();
        assertThat(LogFileFormat.parse("##RLS_ATTEMPT attempt=2 epoch=17 after=-1", false).kind())
                .as("not ours: kept as text").isEqualTo(Kind.TEXT);
    }

    @Test
    void headerIsRecognisedOnlyAsTheFirstLine() {
        assertThat(LogFileFormat.parse("TRACE_ID:abc", true).kind()).isEqualTo(Kind.HEADER);
        Line later = LogFileFormat.parse("TRACE_ID:abc", false);
        assertThat(later.kind()).isEqualTo(Kind.TEXT);
        assertThat(later.text()).isEqualTo("TRACE_ID:abc");
    }

    @Test
    void outputThatLooksLikeAMarkerIsEscapedAndReadBackAsText() {
        for (String text : new String[] {"##RLS_ATTEMPT attempt=9 epoch=99", "##RLS_END state=SUCCEEDED complete=true last=1",
                "##RLS_TEXT x", "##RLS_"}) {
            String stored = LogFileFormat.textLine(text);
            assertThat(stored).startsWith("##RLS_TEXT ");
            Line parsed = LogFileFormat.parse(stored, false);
            assertThat(parsed.kind()).isEqualTo(Kind.TEXT);
            assertThat(parsed.text()).isEqualTo(text);
        }
        assertThat(LogFileFormat.textLine("plain RLS_ATTEMPT")).isEqualTo("plain RLS_ATTEMPT");
        assertThat(LogFileFormat.textLine("RLS_METRIC {\"reward\":1}")).as("metric lines are stored as printed")
                .isEqualTo("RLS_METRIC {\"reward\":1}");
    }

    @Test
    void malformedMarkerIsKeptAsText() {
        Line parsed = LogFileFormat.parse("##RLS_ATTEMPT attempt=x", false);
        assertThat(parsed.kind()).isEqualTo(Kind.TEXT);
        assertThat(parsed.text()).isEqualTo("##RLS_ATTEMPT attempt=x");
    }

    @Test
    void lineBreaksBecomeSpaces() {
        assertThat(LogFileFormat.oneLine("a\nb\r\nc\r")).isEqualTo("a b  c ");
        assertThat(LogFileFormat.header("t\n1")).isEqualTo("TRACE_ID:t 1");
    }

    @Test
    void everyFinalStateIsWrittenByNameAndReadBack() {
        for (TaskState state : TaskState.values()) {
            String marker = LogFileFormat.endMarker(state, true, 1, null);
            assertThat(marker).isEqualTo("##RLS_END state=" + state.name() + " complete=true last=1");
            assertThat(LogFileFormat.parse(marker, false).finalState()).isEqualTo(state);
        }
    }

    @Test
    void anEndWithoutAKnownStateIsWrittenUnknownAndReadBackWithout() {
        String marker = LogFileFormat.endMarker(null, false, 2, null);
        assertThat(marker).isEqualTo("##RLS_END state=UNKNOWN complete=false last=2");
        Line unknown = LogFileFormat.parse(marker, false);
        assertThat(unknown.kind()).isEqualTo(Kind.END);
        assertThat(unknown.finalState()).isNull();
        Line foreign = LogFileFormat.parse("##RLS_END state=ELSEWHERE complete=true last=3", false);
        assertThat(foreign.kind()).as("an end still").isEqualTo(Kind.END);
        assertThat(foreign.finalState()).isNull();
        assertThat(foreign.last()).isEqualTo(3);
    }
}
