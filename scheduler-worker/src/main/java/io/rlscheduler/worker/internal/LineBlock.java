package io.rlscheduler.worker.internal;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Consecutive output lines of one stream as one block of bytes: UTF-8, each line ended by LF, no CR
 * and no LF inside a line. The form lines are read, kept until acknowledged and sent in
 * ({@code LogChunk}), so that no step handles a string or a message per line. Immutable: the
 * arrays are never written after construction, and must not be by whoever gets them.
 */
public final class LineBlock {

    private final byte[] bytes;
    private final int length;
    private final int[] ends;
    private final int count;

    /**
     * Wraps lines already in the block form.
     *
     * @param bytes  holds the lines from index 0; not copied
     * @param length the bytes in use, the last one an LF
     * @param ends   the index of each line's LF, ascending; not copied
     * @param count  the number of lines, at least 1
     */
    LineBlock(byte[] bytes, int length, int[] ends, int count) {
        this.bytes = bytes;
        this.length = length;
        this.ends = ends;
        this.count = count;
    }

    /** Returns one line as a block: CR and LF inside it become spaces. */
    public static LineBlock of(String line) {
        Objects.requireNonNull(line, "line");
        String one = line.indexOf('\n') < 0 && line.indexOf('\r') < 0 ? line : line.replace('\n', ' ').replace('\r', ' ');
        byte[] encoded = one.getBytes(StandardCharsets.UTF_8);
        byte[] bytes = new byte[encoded.length + 1];
        System.arraycopy(encoded, 0, bytes, 0, encoded.length);
        bytes[encoded.length] = '\n';
        return new LineBlock(bytes, bytes.length, new int[] {encoded.length}, 1);
    }

    /** Returns the number of lines. */
    public int lineCount() {
        return count;
    }

    /** Returns the bytes in use: the lines, each with its LF. */
    public int length() {
        return length;
    }

    /** Returns the array holding the lines from index 0; it must not be written. */
    byte[] array() {
        return bytes;
    }

    /** Returns where line {@code i} (from 0) starts. */
    public int start(int i) {
        return i == 0 ? 0 : ends[i - 1] + 1;
    }

    /** Returns where line {@code i} ends: the index of its LF. */
    public int end(int i) {
        return ends[i];
    }

    /** Returns line {@code i} (from 0) as text, without its LF. */
    public String text(int i) {
        int start = start(i);
        return new String(bytes, start, ends[i] - start, StandardCharsets.UTF_8);
    }

    /** Returns whether line {@code i} begins with the ASCII {@code prefix}. */
    public boolean startsWith(int i, String prefix) {
        int start = start(i);
        int n = prefix.length();
        if (ends[i] - start < n) {
            return false;
        }
        for (int k = 0; k < n; k++) {
            if (bytes[start + k] != (byte) prefix.charAt(k)) {
                return false;
            }
        }
        return true;
    }
}
