package io.rlscheduler.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link LogChunks}: line counts, and the deprecated conversions from and to one {@link LogLine}
 * per line, which lose no line while code still uses them.
 */
@SuppressWarnings({"deprecation", "removal"})
class LogChunksTest {

    private static LogLine line(long sequence, LogStream stream, String text) {
        return LogLine.newBuilder().setSequence(sequence).setStream(stream).setTimestampUnixMs(1000 + sequence)
                .setText(text).build();
    }

    @Test
    void consecutiveLinesOfOneStreamBecomeOneChunkAndComeBackTheSame() {
        List<LogLine> lines = List.of(line(1, LogStream.LOG_STREAM_STDOUT, "a"),
                line(2, LogStream.LOG_STREAM_STDOUT, "\u00e9\u4e2d"), line(3, LogStream.LOG_STREAM_STDOUT, ""));
        List<LogChunk> chunks = LogChunks.fromLines(lines);
        assertThat(chunks).hasSize(1);
        assertThat(chunks.get(0).getFirstSequence()).isEqualTo(1);
        assertThat(chunks.get(0).getTimestampUnixMs()).isEqualTo(1001);
        assertThat(chunks.get(0).getText().toStringUtf8()).isEqualTo("a\n\u00e9\u4e2d\n\n");
        assertThat(LogChunks.lineCount(chunks.get(0).getText())).isEqualTo(3);
        assertThat(LogChunks.toLines(chunks.get(0))).extracting(LogLine::getSequence, LogLine::getText)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1L, "a"),
                        org.assertj.core.groups.Tuple.tuple(2L, "\u00e9\u4e2d"),
                        org.assertj.core.groups.Tuple.tuple(3L, ""));
    }

    @Test
    void aNewStreamAGapOrARepeatStartsANewChunkAndUnsortedLinesAreSorted() {
        List<LogLine> lines = List.of(line(2, LogStream.LOG_STREAM_STDOUT, "two"),
                line(1, LogStream.LOG_STREAM_STDOUT, "one"), line(3, LogStream.LOG_STREAM_STDERR, "three"),
                line(5, LogStream.LOG_STREAM_STDERR, "five"), line(5, LogStream.LOG_STREAM_STDERR, "five again"));
        List<LogChunk> chunks = LogChunks.fromLines(lines);
        assertThat(chunks).extracting(LogChunk::getFirstSequence).containsExactly(1L, 3L, 5L, 5L);
        assertThat(chunks).extracting(c -> c.getText().toStringUtf8())
                .containsExactly("one\ntwo\n", "three\n", "five\n", "five again\n");
        assertThat(chunks).extracting(LogChunk::getStream).containsExactly(LogStream.LOG_STREAM_STDOUT,
                LogStream.LOG_STREAM_STDERR, LogStream.LOG_STREAM_STDERR, LogStream.LOG_STREAM_STDERR);
    }

    @Test
    void lineBreaksInsideALineBecomeSpacesAndUnknownStreamsSurvive() {
        LogLine odd = LogLine.newBuilder().setSequence(1).setStreamValue(7).setText("a\r\nb\nc").build();
        LogChunk chunk = LogChunks.fromLines(List.of(odd)).get(0);
        assertThat(chunk.getText().toStringUtf8()).isEqualTo("a  b c\n");
        assertThat(chunk.getStreamValue()).isEqualTo(7);
        assertThat(LogChunks.toLines(chunk).get(0).getStreamValue()).isEqualTo(7);
        assertThat(LogChunks.fromLines(List.of())).isEmpty();
    }

    @Test
    void aLastLineWithoutItsLineFeedIsStillALine() {
        LogChunk chunk = LogChunk.newBuilder().setFirstSequence(4).setText(ByteString.copyFromUtf8("x\ny")).build();
        assertThat(LogChunks.toLines(chunk)).extracting(LogLine::getText).containsExactly("x", "y");
        assertThat(LogChunks.lineCount(chunk.getText())).isEqualTo(1);
    }
}
