package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.util.Objects;

/**
 * Helpers for the {@link LogChunk}s a {@link LogBatch} carries lines in: runs of consecutive lines
 * of one stream as one block of UTF-8 bytes, each line ended by LF.
 *
 * <p>This class is not instantiable.
 */
public final class LogChunks {

    private LogChunks() {
    }

    /** Returns the number of lines in a chunk's text: its LF bytes. */
    public static int lineCount(ByteString text) {
        Objects.requireNonNull(text, "text");
        int count = 0;
        for (int i = 0, n = text.size(); i < n; i++) {
            if (text.byteAt(i) == '\n') {
                count++;
            }
        }
        return count;
    }
}
