package io.rlscheduler.worker.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Cuts a byte stream into lines: splits on {@code \n}, strips one trailing {@code \r}, decodes UTF-8
 * with malformed input replaced by U+FFFD. A line longer than the limit is passed on in chunks of at
 * most the limit (cut on a UTF-8 character boundary) instead of being buffered without bound; a
 * last line without a newline is passed on by {@link #finish()}. Not thread-safe: one per stream.
 */
public final class LineSplitter {

    /** The longest line, in bytes, passed on whole: 64 KiB. */
    public static final int DEFAULT_MAX_LINE_BYTES = 64 * 1024;

    private final Consumer<String> sink;
    private final int maxLineBytes;
    private byte[] pending;
    private int length;

    /**
     * Creates a splitter.
     *
     * @param maxLineBytes the longest chunk passed on, in bytes; at least 4 (one UTF-8 character)
     * @param sink         receives each line or chunk, on the thread that calls {@link #feed}
     */
    public LineSplitter(int maxLineBytes, Consumer<String> sink) {
        if (maxLineBytes < 4) {
            throw new IllegalArgumentException("maxLineBytes must be at least 4, was " + maxLineBytes);
        }
        this.maxLineBytes = maxLineBytes;
        this.sink = Objects.requireNonNull(sink, "sink");
        this.pending = new byte[Math.min(maxLineBytes, 8192)];
    }

    /** Consumes {@code count} bytes of {@code data} from {@code offset}, passing on each line completed. */
    public void feed(byte[] data, int offset, int count) {
        Objects.checkFromIndexSize(offset, count, data.length);
        int end = offset + count;
        int start = offset;
        for (int i = offset; i < end; i++) {
            if (data[i] == '\n') {
                append(data, start, i - start);
                emitLine();
                start = i + 1;
            }
        }
        append(data, start, end - start);
    }

    /** Passes on what is left after the last newline, if anything: the stream ended without one. */
    public void finish() {
        if (length > 0) {
            emitLine();
        }
    }

    private void append(byte[] data, int offset, int count) {
        while (count > 0) {
            if (length == maxLineBytes) {
                // Only cut when more bytes of the same line arrive: a line of exactly the limit
                // followed by \n is passed on whole, with no empty line after it.
                emitChunk();
            }
            int take = Math.min(count, maxLineBytes - length);
            if (length + take > pending.length) {
                pending = Arrays.copyOf(pending, Math.min(maxLineBytes, Math.max(length + take, pending.length * 2)));
            }
            System.arraycopy(data, offset, pending, length, take);
            length += take;
            offset += take;
            count -= take;
        }
    }

    private void emitLine() {
        int end = length;
        if (end > 0 && pending[end - 1] == '\r') {
            end--;
        }
        sink.accept(new String(pending, 0, end, StandardCharsets.UTF_8));
        length = 0;
    }

    private void emitChunk() {
        int cut = utf8Boundary(pending, length);
        if (cut > 1 && pending[cut - 1] == '\r') {
            cut--; // it may be the first half of a \r\n: keep it with the line's end
        }
        sink.accept(new String(pending, 0, cut, StandardCharsets.UTF_8));
        System.arraycopy(pending, cut, pending, 0, length - cut);
        length -= cut;
    }

    /**
     * Returns the largest cut point at most {@code length} that does not split a UTF-8 sequence
     * (malformed input is cut anywhere: it is replaced when decoded in any case).
     */
    static int utf8Boundary(byte[] bytes, int length) {
        for (int back = 1; back <= Math.min(3, length); back++) {
            int b = bytes[length - back] & 0xFF;
            if ((b & 0xC0) == 0x80) {
                continue; // continuation byte: look further back for the lead byte
            }
            int needed;
            if (b < 0x80) {
                needed = 1;
            } else if ((b & 0xE0) == 0xC0) {
                needed = 2;
            } else if ((b & 0xF0) == 0xE0) {
                needed = 3;
            } else if ((b & 0xF8) == 0xF0) {
                needed = 4;
            } else {
                needed = 1;
            }
            return needed > back ? length - back : length;
        }
        return length;
    }
}
