package io.rlscheduler.protocol;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Scans of log-line bytes, eight bytes at a time, shared by the worker that cuts a task's output
 * into lines and the master that writes them: a byte equal to {@code c} is a zero byte of
 * {@code w ^ c}, and {@code (x - 0x01..) & ~x & 0x80..} marks the lowest zero byte of {@code x}
 * exactly (a borrow only marks bytes above it). This class is not instantiable.
 */
public final class LineBytes {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final long LFS = 0x0A0A0A0A0A0A0A0AL;
    private static final long CRS = 0x0D0D0D0D0D0D0D0DL;

    private LineBytes() {
    }

    /** Returns the index of the first LF or CR in {@code bytes[from, to)}, or {@code to} if there is none. */
    public static int indexOfLineBreak(byte[] bytes, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long w = (long) LONGS.get(bytes, i);
            long lf = w ^ LFS;
            long cr = w ^ CRS;
            long hit = ((lf - ONES) & ~lf | (cr - ONES) & ~cr) & HIGHS;
            if (hit != 0) {
                return i + (Long.numberOfTrailingZeros(hit) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (bytes[i] == '\n' || bytes[i] == '\r') {
                return i;
            }
        }
        return to;
    }

    /** Returns whether {@code bytes[from, to)} holds a byte above 0x7F. */
    public static boolean hasNonAscii(byte[] bytes, int from, int to) {
        int i = from;
        long high = 0;
        for (; i + 8 <= to; i += 8) {
            high |= (long) LONGS.get(bytes, i);
        }
        if ((high & HIGHS) != 0) {
            return true;
        }
        for (; i < to; i++) {
            if (bytes[i] < 0) {
                return true;
            }
        }
        return false;
    }
}
