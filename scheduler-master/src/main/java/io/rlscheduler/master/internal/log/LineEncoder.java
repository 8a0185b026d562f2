package io.rlscheduler.master.internal.log;

import com.google.protobuf.ByteString;
import io.rlscheduler.protocol.LineBytes;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Encodes what goes into a log file with one write: marker lines, and output lines taken from a
 * chunk's bytes (a CR inside a line becomes a space, a line that begins with {@code ##RLS_} goes
 * behind the escape prefix; see {@link LogFileFormat}). Each byte of a chunk is read once, to find
 * the ends of lines and turn CRs into spaces, and copied once. The buffers are reused from batch
 * to batch. Confined to one I/O thread.
 */
final class LineEncoder {

    private static final int KEEP = 64 * 1024;
    private static final byte[] ESCAPE_PREFIX = LogFileFormat.ESCAPE_PREFIX.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RESERVED_PREFIX = LogFileFormat.RESERVED_PREFIX.getBytes(StandardCharsets.US_ASCII);

    private byte[] bytes = new byte[KEEP];
    private int size;
    private byte[] scratch = new byte[KEEP];
    private long linesSkipped;
    private boolean full;

    /** Empties the output (and lets a buffer grown for a large batch go). */
    void reset() {
        if (bytes.length > 16 * KEEP) {
            bytes = new byte[KEEP];
        }
        size = 0;
    }

    /** Appends a line of text, such as a marker, and its LF. */
    void line(String line) {
        byte[] encoded = line.getBytes(StandardCharsets.UTF_8);
        reserve(encoded.length + 1);
        System.arraycopy(encoded, 0, bytes, size, encoded.length);
        size += encoded.length;
        bytes[size++] = '\n';
    }

    /** Returns a chunk's text in a reused array (valid until the next call), which the other methods then work on. */
    byte[] read(ByteString text) {
        int n = text.size();
        if (scratch.length < n) {
            scratch = new byte[Math.max(n, scratch.length * 2)];
        }
        text.copyTo(scratch, 0);
        return scratch;
    }

    /**
     * Returns the offset after the first {@code count} lines of {@code text[0, n)} (or {@code n}
     * if it has fewer), and how many it skipped in {@link #linesSkipped()}.
     */
    int skipLines(byte[] text, int n, long count) {
        int pos = 0;
        long skipped = 0;
        while (pos < n && skipped < count) {
            pos = lineEnd(text, pos, n) + 1;
            skipped++;
        }
        linesSkipped = skipped;
        return pos;
    }

    /** Returns how many lines the last {@link #skipLines} skipped. */
    long linesSkipped() {
        return linesSkipped;
    }

    /**
     * Appends up to {@code maxLines} lines of {@code text[pos, n)} to the output, CRs made spaces
     * and a line that begins with {@code ##RLS_} escaped; returns how many. Bytes go in one copy
     * per run of lines between escapes (usually the whole chunk).
     */
    int copyLines(byte[] text, int pos, int n, long maxLines) {
        return copyLines(text, pos, n, maxLines, Long.MAX_VALUE);
    }

    /**
     * As {@link #copyLines(byte[], int, int, long)}, stopping before the first line that would
     * make the output longer than {@code maxSize} bytes; {@link #isFull()} then says so.
     */
    int copyLines(byte[] text, int pos, int n, long maxLines, long maxSize) {
        int lines = 0;
        int runStart = pos;
        full = false;
        while (pos < n && lines < maxLines) {
            int end = lineEnd(text, pos, n);
            boolean escape = text[pos] == '#' && end - pos >= RESERVED_PREFIX.length && startsWithReserved(text, pos);
            if ((long) size + (end + 1 - runStart) + (escape ? ESCAPE_PREFIX.length : 0) > maxSize) {
                full = true;
                break;
            }
            if (escape) {
                put(text, runStart, pos - runStart);
                put(ESCAPE_PREFIX, 0, ESCAPE_PREFIX.length);
                runStart = pos;
            }
            pos = end + 1;
            lines++;
        }
        put(text, runStart, pos - runStart);
        return lines;
    }

    /** Returns whether the last {@link #copyLines} stopped at its size bound, a line left over. */
    boolean isFull() {
        return full;
    }

    /** Returns the number of bytes in the output. */
    int size() {
        return size;
    }

    /** Returns a copy of the output's bytes {@code [from, to)}. */
    byte[] copy(int from, int to) {
        return Arrays.copyOfRange(bytes, from, to);
    }

    /** Returns the output, to write. */
    ByteBuffer buffer() {
        return ByteBuffer.wrap(bytes, 0, size);
    }

    private void put(byte[] source, int offset, int length) {
        reserve(length);
        System.arraycopy(source, offset, bytes, size, length);
        size += length;
    }

    private void reserve(int more) {
        if (size + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
        }
    }

    /**
     * Returns the index of the LF that ends the line starting at {@code pos} (there is one: a
     * chunk ends with LF), turning each CR on the way into a space.
     */
    private static int lineEnd(byte[] text, int pos, int size) {
        int i = LineBytes.indexOfLineBreak(text, pos, size);
        while (text[i] == '\r') {
            text[i] = ' ';
            i = LineBytes.indexOfLineBreak(text, i + 1, size);
        }
        return i;
    }

    private static boolean startsWithReserved(byte[] text, int pos) {
        for (int k = 0; k < RESERVED_PREFIX.length; k++) {
            if (text[pos + k] != RESERVED_PREFIX[k]) {
                return false;
            }
        }
        return true;
    }
}
