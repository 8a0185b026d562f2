package io.rlscheduler.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The eight-at-a-time scans agree with a byte-at-a-time loop at every position and offset. */
class LineBytesTest {

    @Test
    void findsTheFirstLineBreakWhereverItIs() {
        for (int length = 0; length <= 24; length++) {
            for (int at = 0; at <= length; at++) {
                for (byte mark : new byte[] {'\n', '\r'}) {
                    byte[] bytes = new byte[length + 3];
                    Arrays.fill(bytes, (byte) 'x');
                    if (at < length) {
                        bytes[1 + at] = mark;
                        bytes[length] = '\n'; // a later break (or this one again) must not win
                    }
                    bytes[1 + length] = '\n'; // just past the range: never seen
                    int expected = at < length ? 1 + at : 1 + length;
                    assertThat(LineBytes.indexOfLineBreak(bytes, 1, 1 + length)).as("length %d at %d", length, at)
                            .isEqualTo(expected);
                }
            }
        }
        // Bytes that differ from LF or CR by one bit, and high bytes, are not line breaks.
        byte[] near = {0x0B, 0x0C, 0x0E, 0x08, (byte) 0x8A, (byte) 0x8D, 0x1A, 0x4A, 0, (byte) 0xFF, '\r'};
        assertThat(LineBytes.indexOfLineBreak(near, 0, near.length)).isEqualTo(near.length - 1);
    }

    @Test
    void seesANonAsciiByteOnlyInsideTheRange() {
        for (int length = 0; length <= 24; length++) {
            for (int at = -1; at < length; at++) {
                byte[] bytes = new byte[length + 2];
                Arrays.fill(bytes, (byte) 'a');
                bytes[0] = (byte) 0xC3; // outside the range, on both sides
                bytes[length + 1] = (byte) 0xA9;
                if (at >= 0) {
                    bytes[1 + at] = (byte) 0x80;
                }
                assertThat(LineBytes.hasNonAscii(bytes, 1, 1 + length)).as("length %d at %d", length, at)
                        .isEqualTo(at >= 0);
            }
        }
    }
}
