package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.LineBytes;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Cuts a byte stream into lines, passed on as {@link LineBlock}s: after each {@link #feed} the lines
 * it completed, as one block. Splits on {@code \n}, strips one trailing {@code \r} and turns any
 * other {@code \r} into a space, replaces malformed UTF-8 with U+FFFD. A line longer than the limit
 * is passed on in pieces of at most the limit (cut on a UTF-8 character boundary) instead of being
 * buffered without bound; a last line without a newline is passed on by {@link #finish()}. The
 * bytes are copied once, into the block; text is never decoded (except a line that holds non-ASCII
 * bytes, to check it). Not thread-safe: one per stream.
 */
public final class LineSplitter {

    /** The longest line, in bytes, passed on whole: 64 KiB. */
    public static final int DEFAULT_MAX_LINE_BYTES = 64 * 1024;

    private final Consumer<LineBlock> sink;
    private final int maxLineBytes;
    /** Complete lines (each with its LF) from 0, then the current line from {@link #lineStart}. */
    private byte[] buffer;
    private int length;
    private int lineStart;
    private int[] ends = new int[64];
    private int count;
    /** Whether the current line holds a byte above 0x7F (so it must be checked as UTF-8). */
    private boolean nonAscii;
    /** Whether the current line holds a CR. */
    private boolean carriageReturn;

    /**
     * Creates a splitter.
     *
     * @param maxLineBytes the longest piece passed on, in bytes; at least 4 (one UTF-8 character)
     * @param sink         receives the blocks, on the thread that calls {@link #feed}
     */
    public LineSplitter(int maxLineBytes, Consumer<LineBlock> sink) {
        if (maxLineBytes < 4) {
            throw new IllegalArgumentException("maxLineBytes must be at least 4, was " + maxLineBytes);
        }
        this.maxLineBytes = maxLineBytes;
        this.sink = Objects.requireNonNull(sink, "sink");
        this.buffer = new byte[8192];
    }

    /** Consumes {@code count} bytes of {@code data} from {@code offset}; passes on the lines completed. */
    public void feed(byte[] data, int offset, int count) {
        Objects.checkFromIndexSize(offset, count, data.length);
        int end = offset + count;
        int i = offset;
        while (i < end) {
            // Every byte is copied at most once, and a cut adds one LF per maxLineBytes.
            ensure(length + (end - i) + (end - i) / maxLineBytes + 2);
            int room = maxLineBytes - (length - lineStart);
            if (room <= 0) {
                if (data[i] == '\n') {
                    endLine(); // a line of exactly the limit (its CR of a CRLF aside) is passed on whole
                    i++;
                } else if (room == 0 && data[i] == '\r') {
                    // Held beyond the limit: it may be the first half of the line's CRLF (or the
                    // stream's last byte), which endLine strips; the next byte tells.
                    buffer[length++] = '\r';
                    carriageReturn = true;
                    i++;
                } else {
                    cut(); // only when more bytes of the same line arrive
                }
                continue;
            }
            // Copy the plain bytes up to the next LF or CR (or the limit) in one go.
            int limit = Math.min(end, i + room);
            int special = scan(data, i, limit);
            System.arraycopy(data, i, buffer, length, special - i);
            length += special - i;
            i = special;
            if (i == limit) {
                continue;
            }
            if (data[i] == '\n') {
                endLine();
            } else {
                buffer[length++] = '\r';
                carriageReturn = true;
            }
            i++;
        }
        emit();
    }

    /**
     * Returns the index of the first LF or CR in {@code data[from, to)}, or {@code to}; notes a
     * byte above 0x7F before it in {@link #nonAscii}.
     */
    private int scan(byte[] data, int from, int to) {
        int end = LineBytes.indexOfLineBreak(data, from, to);
        if (!nonAscii && LineBytes.hasNonAscii(data, from, end)) {
            nonAscii = true;
        }
        return end;
    }

    /** Passes on what is left after the last newline, if anything: the stream ended without one. */
    public void finish() {
        if (length > lineStart) {
            ensure(length + 1);
            endLine();
        }
        emit();
    }

    private void ensure(int capacity) {
        if (capacity > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(capacity, buffer.length * 2));
        }
    }

    /** Ends the current line (which fills the buffer up to {@link #length}) with an LF. */
    private void endLine() {
        int end = length;
        if (end > lineStart && buffer[end - 1] == '\r') {
            end--;
        }
        closeLine(end);
    }

    /** Ends the current line at {@code end}, dropping the bytes after it, checks and records it. */
    private void closeLine(int end) {
        if (carriageReturn) {
            for (int i = lineStart; i < end; i++) {
                if (buffer[i] == '\r') {
                    buffer[i] = ' ';
                }
            }
        }
        if (nonAscii) {
            end = wellFormed(lineStart, end);
        }
        ensure(end + 1);
        buffer[end] = '\n';
        if (count == ends.length) {
            ends = Arrays.copyOf(ends, count * 2);
        }
        ends[count++] = end;
        length = end + 1;
        lineStart = length;
        nonAscii = false;
        carriageReturn = false;
    }

    /**
     * Makes the line {@code [start, end)} well-formed UTF-8, replacing malformed input with U+FFFD
     * (which may make it longer); returns its new end.
     */
    private int wellFormed(int start, int end) {
        String text = new String(buffer, start, end - start, StandardCharsets.UTF_8);
        byte[] encoded = text.getBytes(StandardCharsets.UTF_8);
        if (encoded.length == end - start && Arrays.equals(encoded, 0, encoded.length, buffer, start, end)) {
            return end;
        }
        ensure(start + encoded.length + 1);
        System.arraycopy(encoded, 0, buffer, start, encoded.length);
        return start + encoded.length;
    }

    /**
     * The current line reached the limit and more of it arrives: passes on its first part, cut on
     * a character boundary, and keeps the rest as the start of the next piece.
     */
    private void cut() {
        // At most the limit: the line may hold one CR beyond it (see feed).
        int cutAt = lineStart + utf8Boundary(buffer, lineStart, Math.min(length, lineStart + maxLineBytes));
        if (cutAt - lineStart > 1 && buffer[cutAt - 1] == '\r') {
            cutAt--; // it may be the first half of a \r\n: keep it with the line's end
        }
        byte[] rest = Arrays.copyOfRange(buffer, cutAt, length);
        closeLine(cutAt);
        ensure(length + rest.length + 1);
        System.arraycopy(rest, 0, buffer, length, rest.length);
        length += rest.length;
        for (byte b : rest) {
            if (b < 0) {
                nonAscii = true;
            } else if (b == '\r') {
                carriageReturn = true;
            }
        }
    }

    /** Passes on the complete lines as one block and keeps the current line's bytes. */
    private void emit() {
        if (count == 0) {
            return;
        }
        int used = lineStart;
        byte[] lines = Arrays.copyOf(buffer, used);
        int[] lineEnds = Arrays.copyOf(ends, count);
        int lines0 = count;
        System.arraycopy(buffer, used, buffer, 0, length - used);
        length -= used;
        lineStart = 0;
        count = 0;
        sink.accept(new LineBlock(lines, used, lineEnds, lines0));
    }

    /**
     * Returns the length of the longest prefix of {@code bytes[from, to)} that does not split a
     * UTF-8 sequence (malformed input is cut anywhere: it is replaced in any case).
     */
    static int utf8Boundary(byte[] bytes, int from, int to) {
        int length = to - from;
        for (int back = 1; back <= Math.min(3, length); back++) {
            int b = bytes[to - back] & 0xFF;
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
