package io.rlscheduler.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** {@link LogChunks}: a chunk's line count is its LF count. */
class LogChunksTest {

    @Test
    void everyLineFeedEndsOneLineEmptyOrNot() {
        assertThat(LogChunks.lineCount(ByteString.copyFromUtf8("a\n\u00e9\u4e2d\n\n"))).isEqualTo(3);
        assertThat(LogChunks.lineCount(ByteString.EMPTY)).isZero();
    }

    @Test
    void aLastLineWithoutItsLineFeedIsNotCounted() {
        LogChunk chunk = LogChunk.newBuilder().setFirstSequence(4).setText(ByteString.copyFromUtf8("x\ny")).build();
        assertThat(LogChunks.lineCount(chunk.getText())).isEqualTo(1);
    }
}
