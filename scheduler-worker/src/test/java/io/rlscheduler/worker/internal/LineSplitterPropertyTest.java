package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random byte streams, fed in random pieces, against a byte-at-a-time reference of the documented
 * semantics: split on LF; strip one trailing CR; cut pieces of at most the limit only when more bytes
 * of the same line follow, each on a UTF-8 character boundary, a CR just before a cut point going
 * with the next piece (unless the piece would be empty); decode as UTF-8 with replacement; the other
 * CRs become spaces.
 */
class LineSplitterPropertyTest {

    private static final int[] SMALL_LIMITS = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 23, 31, 32, 33, 40};

    // ---- the reference -------------------------------------------------------------------------

    static List<String> reference(byte[] input, int max) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < input.length; i++) {
            if (input[i] == '\n') {
                referenceLine(Arrays.copyOfRange(input, start, i), max, out);
                start = i + 1;
            }
        }
        if (start < input.length) {
            referenceLine(Arrays.copyOfRange(input, start, input.length), max, out);
        }
        return out;
    }

    private static void referenceLine(byte[] line, int max, List<String> out) {
        int end = line.length;
        if (end > 0 && line[end - 1] == '\r') {
            end--;
        }
        int from = 0;
        while (end - from > max) {
            int cut = referenceBoundary(line, from, from + max);
            if (cut > 1 && line[from + cut - 1] == '\r') {
                cut--;
            }
            out.add(decode(line, from, from + cut));
            from += cut;
        }
        out.add(decode(line, from, end));
    }

    private static String decode(byte[] bytes, int from, int to) {
        return new String(bytes, from, to - from, StandardCharsets.UTF_8).replace('\r', ' ');
    }

    /** The longest prefix of {@code bytes[from, to)} that does not split a (well-formed) character. */
    static int referenceBoundary(byte[] bytes, int from, int to) {
        int k = to - 1;
        int continuations = 0;
        while (k >= from && continuations < 3 && (bytes[k] & 0xC0) == 0x80) {
            k--;
            continuations++;
        }
        if (k < from || (bytes[k] & 0xC0) == 0x80) {
            return to - from; // only continuation bytes: malformed, cut anywhere
        }
        int lead = bytes[k] & 0xFF;
        int needed = lead < 0x80 ? 1
                : (lead & 0xE0) == 0xC0 ? 2
                : (lead & 0xF0) == 0xE0 ? 3
                : (lead & 0xF8) == 0xF0 ? 4
                : 1;
        return needed > to - k ? k - from : to - from;
    }

    // ---- the implementation, fed in random pieces ------------------------------------------------

    private static List<String> split(byte[] input, int max, Random random, int maxPiece) {
        List<String> lines = new ArrayList<>();
        LineSplitter splitter = new LineSplitter(max, block -> {
            assertThat(block.lineCount()).isPositive();
            assertThat(block.array()[block.length() - 1]).isEqualTo((byte) '\n');
            for (int i = 0; i < block.lineCount(); i++) {
                String text = block.text(i);
                assertThat(text).doesNotContain("\n", "\r");
                assertThat(Arrays.copyOfRange(block.array(), block.start(i), block.end(i)))
                        .isEqualTo(text.getBytes(StandardCharsets.UTF_8));
                lines.add(text);
            }
        });
        // Pieces are taken from a larger array at an offset, as OutputPump's buffer is not.
        byte[] padded = new byte[input.length + 16];
        int shift = random.nextInt(8);
        System.arraycopy(input, 0, padded, shift, input.length);
        Arrays.fill(padded, 0, shift, (byte) '\n');
        Arrays.fill(padded, shift + input.length, padded.length, (byte) '\n');
        int i = 0;
        while (i < input.length) {
            int n = Math.min(input.length - i, 1 + random.nextInt(maxPiece));
            splitter.feed(padded, shift + i, n);
            i += n;
            if (random.nextInt(10) == 0) {
                splitter.feed(padded, shift + i, 0); // an empty read
            }
        }
        splitter.finish();
        return lines;
    }

    // ---- random streams ------------------------------------------------------------------------

    private static final byte[][] MULTI_BYTE = {
        utf8("\u00e9"), utf8("\u00ff"), utf8("\u4e2d"), utf8("\u20ac"), utf8("\uffff"),
        utf8("\uD83D\uDE00"), utf8("\uD800\uDC00"), utf8("\uDBFF\uDFFF"),
    };
    private static final byte[][] INVALID = {
        {(byte) 0x80}, {(byte) 0xBF}, {(byte) 0xFF}, {(byte) 0xFE}, {(byte) 0xC0}, {(byte) 0xC3},
        {(byte) 0xE2, (byte) 0x82}, {(byte) 0xF0, (byte) 0x9F}, {(byte) 0xF0, (byte) 0x9F, (byte) 0x98},
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {(byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80},
        {(byte) 0xC1, (byte) 0xBF}, {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80},
    };

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] randomStream(Random random, int tokens, int longRun) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int t = 0; t < tokens; t++) {
            int kind = random.nextInt(100);
            if (kind < 35) {
                out.write('a' + random.nextInt(26));
            } else if (kind < 45) {
                out.write('\n');
            } else if (kind < 52) {
                out.write('\r');
            } else if (kind < 58) {
                out.writeBytes(new byte[] {'\r', '\n'});
            } else if (kind < 75) {
                out.writeBytes(MULTI_BYTE[random.nextInt(MULTI_BYTE.length)]);
            } else if (kind < 82) {
                out.writeBytes(INVALID[random.nextInt(INVALID.length)]);
            } else if (kind < 85) {
                out.writeBytes(utf8("##RLS_"));
            } else if (kind < 88) {
                out.write(' ' + random.nextInt(95)); // any printable ASCII
            } else if (kind < 90) {
                out.write(random.nextInt(256)); // any byte at all
            } else if (kind < 97) {
                int n = random.nextInt(longRun);
                for (int k = 0; k < n; k++) {
                    out.write('0' + k % 10);
                }
            } else {
                // A line of exactly some length, then a line end in one of its forms.
                int n = random.nextInt(longRun);
                for (int k = 0; k < n; k++) {
                    out.write('x');
                }
                out.writeBytes(random.nextBoolean() ? new byte[] {'\n'} : new byte[] {'\r', '\n'});
            }
        }
        return out.toByteArray();
    }

    private static String describe(byte[] input) {
        return input.length <= 400 ? HexFormat.ofDelimiter(" ").formatHex(input) : input.length + " bytes";
    }

    // ---- the properties ------------------------------------------------------------------------

    @Test
    void theReferenceAgreesWithTheHandWrittenExamples() {
        // The examples of LineSplitterTest, so the reference is known to state the same semantics.
        assertThat(reference(utf8("a\nb\r\n\nc\r\r\nd\re\n"), 1024)).containsExactly("a", "b", "", "c ", "d e");
        assertThat(reference(utf8("abcdefghij\nk"), 4)).containsExactly("abcd", "efgh", "ij", "k");
        assertThat(reference(utf8("abcd\nefgh\n"), 4)).containsExactly("abcd", "efgh");
        assertThat(reference(utf8("abc\u4e2dd\n"), 4)).containsExactly("abc", "\u4e2dd");
        assertThat(reference(utf8("a\uD83D\uDE00b"), 4)).containsExactly("a", "\uD83D\uDE00", "b");
        assertThat(reference(utf8("abc\r\nd"), 4)).containsExactly("abc", "d");
        assertThat(reference(new byte[] {'b', 'a', 'd', ' ', (byte) 0xFF, (byte) 0xC3, '\n'}, 1024))
                .containsExactly("bad \uFFFD\uFFFD");
        assertThat(reference(utf8("a\nlast"), 1024)).containsExactly("a", "last");
        assertThat(reference(new byte[0], 1024)).isEmpty();
        for (byte[][] cases : List.of(MULTI_BYTE, INVALID)) {
            for (byte[] bytes : cases) {
                for (int to = 0; to <= bytes.length; to++) {
                    assertThat(referenceBoundary(bytes, 0, to)).as("boundary of %s up to %d", describe(bytes), to)
                            .isEqualTo(LineSplitter.utf8Boundary(bytes, 0, to));
                }
            }
        }
    }

    @Test
    void aLineOfExactlyTheLimitEndedByCrLfIsWhole() {
        // The CR after the limit is the first half of the line's CRLF end, not more of the line.
        for (int piece = 1; piece <= 7; piece++) {
            Random random = new Random(piece);
            assertThat(split(utf8("abcd\r\nefgh\r\n"), 4, random, piece)).as("pieces of %d", piece)
                    .containsExactly("abcd", "efgh");
            assertThat(split(utf8("abcd\r"), 4, random, piece)).as("pieces of %d, at the end", piece)
                    .containsExactly("abcd");
            assertThat(split(utf8("abc\r\r\n"), 4, random, piece)).as("pieces of %d", piece)
                    .containsExactly("abc ");
            assertThat(split(utf8("abcd\r\re\n"), 4, random, piece)).as("pieces of %d", piece)
                    .containsExactly("abcd", "  e");
        }
        byte[] exact = new byte[LineSplitter.DEFAULT_MAX_LINE_BYTES + 2];
        Arrays.fill(exact, (byte) 'x');
        exact[exact.length - 2] = '\r';
        exact[exact.length - 1] = '\n';
        assertThat(split(exact, LineSplitter.DEFAULT_MAX_LINE_BYTES, new Random(1), 8192))
                .containsExactly("x".repeat(LineSplitter.DEFAULT_MAX_LINE_BYTES));
    }

    @Test
    void matchesTheReferenceForSmallLimits() {
        Random random = new Random(0x5EED_0001L);
        for (int round = 0; round < 6000; round++) {
            int max = SMALL_LIMITS[random.nextInt(SMALL_LIMITS.length)];
            byte[] input = randomStream(random, 1 + random.nextInt(60), 3 * max);
            int maxPiece = random.nextBoolean() ? 1 + random.nextInt(4) : 1 + random.nextInt(input.length + 1);
            List<String> expected = reference(input, max);
            assertThat(split(input, max, random, maxPiece))
                    .as("round %d, limit %d, pieces up to %d, input %s", round, max, maxPiece, describe(input))
                    .containsExactlyElementsOf(expected);
        }
    }

    @Test
    void matchesTheReferenceAroundTheLimitForEveryPieceSize() {
        // Lines of limit-2 .. limit+2 bytes, ending with each kind of byte, in every form of end.
        Random random = new Random(0x5EED_0002L);
        byte[][] tails = {utf8("z"), utf8("\r"), utf8("\u00e9"), utf8("\u4e2d"), utf8("\uD83D\uDE00"),
            {(byte) 0xE2, (byte) 0x82}, {(byte) 0xFF}, utf8("\r\u4e2d"), utf8("\u4e2d\r")};
        byte[][] ends = {{}, {'\n'}, {'\r', '\n'}, {'\r'}, {'\r', '\r', '\n'}, {'\r', 'q', '\n'}};
        for (int max : new int[] {4, 5, 6, 7, 8, 9}) {
            for (int length = Math.max(0, max - 4); length <= max + 4; length++) {
                for (byte[] tail : tails) {
                    for (byte[] end : ends) {
                        ByteArrayOutputStream out = new ByteArrayOutputStream();
                        for (int k = 0; k < length; k++) {
                            out.write('a' + k % 26);
                        }
                        out.writeBytes(tail);
                        out.writeBytes(end);
                        out.writeBytes(utf8("next\n"));
                        byte[] input = out.toByteArray();
                        for (int piece = 1; piece <= input.length; piece++) {
                            assertThat(split(input, max, random, piece))
                                    .as("limit %d, pieces up to %d, input %s", max, piece, describe(input))
                                    .containsExactlyElementsOf(reference(input, max));
                        }
                    }
                }
            }
        }
    }

    @Test
    void matchesTheReferenceForTheDefaultLimit() {
        Random random = new Random(0x5EED_0003L);
        int max = LineSplitter.DEFAULT_MAX_LINE_BYTES;
        for (int round = 0; round < 40; round++) {
            byte[] input = randomStream(random, 200 + random.nextInt(400), random.nextBoolean() ? 200 : 2 * max);
            int maxPiece = 1 + random.nextInt(random.nextBoolean() ? 64 * 1024 : 100);
            assertThat(split(input, max, random, maxPiece))
                    .as("round %d, pieces up to %d, input %s", round, maxPiece, describe(input))
                    .containsExactlyElementsOf(reference(input, max));
        }
    }
}
