package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LineSplitterTest {

    private final List<String> lines = new ArrayList<>();
    private final List<LineBlock> blocks = new ArrayList<>();

    private void collect(LineBlock block) {
        blocks.add(block);
        assertThat(block.lineCount()).isPositive();
        assertThat(block.array()[block.length() - 1]).isEqualTo((byte) '\n');
        for (int i = 0; i < block.lineCount(); i++) {
            String text = block.text(i);
            assertThat(text).doesNotContain("\n", "\r");
            // The block's bytes are the well-formed UTF-8 of its text: what the master writes.
            assertThat(Arrays.copyOfRange(block.array(), block.start(i), block.end(i)))
                    .isEqualTo(text.getBytes(StandardCharsets.UTF_8));
            lines.add(text);
        }
    }

    private List<String> split(int max, byte[] input, int pieceSize) {
        LineSplitter splitter = new LineSplitter(max, this::collect);
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
    void splitsOnNewlinesStripsOneCarriageReturnAndTurnsOthersIntoSpaces() {
        assertThat(split(1024, utf8("a\nb\r\n\nc\r\r\nd\re\n"), 1000)).containsExactly("a", "b", "", "c ", "d e");
    }

    @Test
    void theLinesCompletedByOneFeedComeAsOneBlock() {
        LineSplitter splitter = new LineSplitter(1024, this::collect);
        byte[] first = utf8("one\ntwo\nthr");
        splitter.feed(first, 0, first.length);
        assertThat(blocks).hasSize(1);
        assertThat(blocks.get(0).lineCount()).isEqualTo(2);
        assertThat(new String(blocks.get(0).array(), 0, blocks.get(0).length(), StandardCharsets.UTF_8))
                .isEqualTo("one\ntwo\n");
        byte[] second = utf8("ee\nfour");
        splitter.feed(second, 0, second.length);
        assertThat(blocks).hasSize(2);
        assertThat(blocks.get(1).lineCount()).isEqualTo(1);
        assertThat(blocks.get(1).startsWith(0, "thr")).isTrue();
        assertThat(blocks.get(1).startsWith(0, "three!")).isFalse();
        byte[] none = utf8("more of four");
        splitter.feed(none, 0, none.length);
        assertThat(blocks).hasSize(2); // no line completed: nothing passed on
        splitter.finish();
        assertThat(lines).containsExactly("one", "two", "three", "fourmore of four");
    }

    @Test
    void aReplacedLineThatGrowsKeepsTheLinesAfterIt() {
        // Each malformed byte becomes three (U+FFFD): the buffer must grow mid-feed.
        byte[] input = new byte[3000];
        Arrays.fill(input, (byte) 0xFF);
        input[1000] = '\n';
        input[2999] = '\n';
        List<String> out = split(LineSplitter.DEFAULT_MAX_LINE_BYTES, input, input.length);
        assertThat(out).containsExactly("\uFFFD".repeat(1000), "\uFFFD".repeat(1998));
    }

    @Test
    void singleLineBlocksTurnLineBreaksIntoSpaces() {
        LineBlock block = LineBlock.of("a\r\nb\u00e9");
        assertThat(block.lineCount()).isEqualTo(1);
        assertThat(block.text(0)).isEqualTo("a  b\u00e9");
        assertThat(block.length()).isEqualTo("a  b\u00e9".getBytes(StandardCharsets.UTF_8).length + 1);
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
        assertThat(LineSplitter.utf8Boundary(utf8("abcd"), 0, 4)).isEqualTo(4);
        assertThat(LineSplitter.utf8Boundary(utf8("ab\u00e9"), 0, 4)).isEqualTo(4); // complete 2-byte char
        byte[] partial = utf8("a\u4e2d");
        assertThat(LineSplitter.utf8Boundary(partial, 0, 3)).isEqualTo(1); // lead + 1 of 2 continuations
        assertThat(LineSplitter.utf8Boundary(partial, 0, 2)).isEqualTo(1); // lead only
        assertThat(LineSplitter.utf8Boundary(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80}, 0, 4))
                .isEqualTo(4); // malformed: cut anywhere
    }

    @Test
    void rejectsALimitBelowOneCharacter() {
        assertThatThrownBy(() -> new LineSplitter(3, s -> { })).isInstanceOf(IllegalArgumentException.class);
    }
}
