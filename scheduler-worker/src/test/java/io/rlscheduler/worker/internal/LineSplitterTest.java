package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LineSplitterTest {

    private final List<String> lines = new ArrayList<>();

    private List<String> split(int max, byte[] input, int pieceSize) {
        LineSplitter splitter = new LineSplitter(max, lines::add);
        for (int i = 0; i < input.length; i += pieceSize) {
            splitter.feed(input, i, Math.min(pieceSize, input.length - i));
        }
        splitter.finish();
        return lines;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void splitsOnNewlinesAndStripsOneCarriageReturn() {
        assertThat(split(1024, utf8("a\nb\r\n\nc\r\r\n"), 1000)).containsExactly("a", "b", "", "c\r");
    }

    @Test
    void passesOnALastLineWithoutNewline() {
        assertThat(split(1024, utf8("a\nlast"), 1000)).containsExactly("a", "last");
    }

    @Test
    void emitsNothingMoreWhenTheInputEndsWithANewline() {
        assertThat(split(1024, utf8("a\n"), 1000)).containsExactly("a");
        lines.clear();
        assertThat(split(1024, new byte[0], 1000)).isEmpty();
    }

    @Test
    void replacesMalformedUtf8() {
        byte[] input = {'b', 'a', 'd', ' ', (byte) 0xFF, (byte) 0xC3, '\n'};
        assertThat(split(1024, input, 1000)).containsExactly("bad \uFFFD\uFFFD");
    }

    @Test
    void theSameLinesComeOutHoweverTheBytesAreCut() {
        byte[] input = utf8("h\u00e9llo \u4e2d\u6587 \uD83D\uDE00\r\nsecond\nthird");
        for (int piece = 1; piece <= input.length; piece++) {
            lines.clear();
            assertThat(split(1024, input, piece)).as("pieces of %d", piece)
                    .containsExactly("h\u00e9llo \u4e2d\u6587 \uD83D\uDE00", "second", "third");
        }
    }

    @Test
    void cutsALongLineIntoChunksOfAtMostTheLimit() {
        assertThat(split(4, utf8("abcdefghij\nk"), 3)).containsExactly("abcd", "efgh", "ij", "k");
    }

    @Test
    void aLineOfExactlyTheLimitIsWholeAndFollowedByNoEmptyLine() {
        assertThat(split(4, utf8("abcd\nefgh\n"), 1)).containsExactly("abcd", "efgh");
    }

    @Test
    void neverCutsInsideAUtf8Character() {
        // 3 ASCII bytes then a 3-byte character: a cut at 4 bytes would split it.
        assertThat(split(4, utf8("abc\u4e2dd\n"), 1)).containsExactly("abc", "\u4e2dd");
        lines.clear();
        // 4-byte character after 1 byte.
        assertThat(split(4, utf8("a\uD83D\uDE00b"), 2)).containsExactly("a", "\uD83D\uDE00", "b");
    }

    @Test
    void keepsACarriageReturnWithTheNewlineAfterAChunkCut() {
        assertThat(split(4, utf8("abc\r\nd"), 1)).containsExactly("abc", "d");
    }

    @Test
    void boundsMemoryForAnEndlessLine() {
        ByteArrayOutputStream big = new ByteArrayOutputStream();
        for (int i = 0; i < 300_000; i++) {
            big.write('x');
        }
        List<String> out = split(LineSplitter.DEFAULT_MAX_LINE_BYTES, big.toByteArray(), 8192);
        assertThat(out).hasSize(5);
        assertThat(out.subList(0, 4)).allMatch(s -> s.length() == 65536);
        assertThat(out.get(4)).hasSize(300_000 - 4 * 65536);
    }

    @Test
    void findsUtf8Boundaries() {
        assertThat(LineSplitter.utf8Boundary(utf8("abcd"), 4)).isEqualTo(4);
        assertThat(LineSplitter.utf8Boundary(utf8("ab\u00e9"), 4)).isEqualTo(4); // complete 2-byte char
        byte[] partial = utf8("a\u4e2d");
        assertThat(LineSplitter.utf8Boundary(partial, 3)).isEqualTo(1); // lead + 1 of 2 continuations
        assertThat(LineSplitter.utf8Boundary(partial, 2)).isEqualTo(1); // lead only
        assertThat(LineSplitter.utf8Boundary(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80}, 4))
                .isEqualTo(4); // malformed: cut anywhere
    }

    @Test
    void rejectsALimitBelowOneCharacter() {
        assertThatThrownBy(() -> new LineSplitter(3, s -> { })).isInstanceOf(IllegalArgumentException.class);
    }
}
