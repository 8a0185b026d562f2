package io.rlscheduler.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Sequencing, batching, acknowledgement and resending of {@link LogBuffer}. */
class LogBufferTest {

    /** The sequence numbers of a batch's lines: a chunk's lines each end with LF and count on from its first. */
    private static List<Long> sequences(List<LogChunk> batch) {
        List<Long> sequences = new ArrayList<>();
        for (LogChunk chunk : batch) {
            long lines = chunk.getText().toStringUtf8().chars().filter(c -> c == '\n').count();
            for (long i = 0; i < lines; i++) {
                sequences.add(chunk.getFirstSequence() + i);
            }
        }
        return sequences;
    }

    private static LineBlock block(String... lines) {
        List<LineBlock> out = new ArrayList<>();
        LineSplitter splitter = new LineSplitter(1024, out::add);
        byte[] bytes = (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
        splitter.feed(bytes, 0, bytes.length);
        assertThat(out).hasSize(1);
        return out.get(0);
    }

    private static void add(LogBuffer buffer, int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            buffer.add(LogStream.LOG_STREAM_STDOUT, "line " + i);
        }
    }

    /** Adds a block to stdout on another thread: for a buffer that may hold the writer back. */
    private static CompletableFuture<Long> addInBackground(LogBuffer buffer, LineBlock lines) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return buffer.add(LogStream.LOG_STREAM_STDOUT, lines);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Fills a buffer of capacity 3 with lines 1 to 3, and starts a reader adding two more that it holds back. */
    private static CompletableFuture<Long> fillAndBlock(LogBuffer buffer) throws InterruptedException {
        add(buffer, 3);
        CompletableFuture<Long> blocked = addInBackground(buffer, block("late 1", "late 2"));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !blocked.isDone());
        return blocked;
    }

    @Test
    void batchesTakeTheUnsentLinesInOrderUpToTheirLimits() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 100);
        add(buffer, 5);
        assertThat(sequences(buffer.nextBatch(2, 1 << 20))).containsExactly(1L, 2L);
        assertThat(sequences(buffer.nextBatch(10, 1 << 20))).containsExactly(3L, 4L, 5L);
        assertThat(buffer.nextBatch(10, 1 << 20)).isEmpty();
        // A batch stops at its byte budget (the lines' UTF-8 bytes with their LFs), but never empty.
        add(buffer, 3);
        assertThat(sequences(buffer.nextBatch(10, 1))).containsExactly(6L);
        assertThat(sequences(buffer.nextBatch(10, 2 * "line 1\n".length()))).containsExactly(7L, 8L);
        assertThat(buffer.pending()).isEqualTo(8);
        assertThat(buffer.getLastSequence()).isEqualTo(8);
    }

    @Test
    void acknowledgedLinesAreDroppedAndAResendSendsTheRestAgain() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 100);
        add(buffer, 6);
        assertThat(buffer.add(LogStream.LOG_STREAM_STDERR, "seventh")).as("unsent after add").isEqualTo(7);
        assertThat(sequences(buffer.nextBatch(4, 1 << 20))).containsExactly(1L, 2L, 3L, 4L);
        buffer.ack(2);
        assertThat(buffer.pending()).isEqualTo(5);
        buffer.resend();
        assertThat(sequences(buffer.nextBatch(100, 1 << 20))).containsExactly(3L, 4L, 5L, 6L, 7L);
        assertThat(buffer.isFullyAcked()).isFalse();
        buffer.ack(7);
        assertThat(buffer.isFullyAcked()).isTrue();
        assertThat(buffer.pending()).isZero();
        buffer.ack(3);
        assertThat(buffer.pending()).as("a stale ack changes nothing").isZero();
    }

    @Test
    void anAckBeyondWhatThisConnectionSentSkipsThoseLines() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 100);
        add(buffer, 5);
        buffer.resend();
        buffer.ack(3); // the master had lines 1-3 from before the reconnect
        assertThat(sequences(buffer.nextBatch(100, 1 << 20))).containsExactly(4L, 5L);
    }

    @Test
    void aFullBufferHoldsTheWriterBackUntilAnAck() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 3);
        add(buffer, 3);
        CompletableFuture<Long> fourth = addInBackground(buffer, block("fourth"));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !fourth.isDone());
        assertThat(sequences(buffer.nextBatch(10, 1 << 20))).containsExactly(1L, 2L, 3L);
        buffer.ack(1);
        await().atMost(Duration.ofSeconds(5)).until(fourth::isDone);
        assertThat(sequences(buffer.nextBatch(10, 1 << 20))).containsExactly(4L);
    }

    @Test
    void blocksAreKeptAndSentWholeWithConsecutiveSequenceNumbers() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 100);
        assertThat(buffer.add(LogStream.LOG_STREAM_STDOUT, block("a", "b", "c"))).isEqualTo(3);
        assertThat(buffer.add(LogStream.LOG_STREAM_STDERR, block("d", "e"))).isEqualTo(5);
        assertThat(buffer.unsentBytes()).isEqualTo("a\nb\nc\nd\ne\n".length());
        // maxLines never splits a block: the first batch holds one block, as it exceeds 2 lines.
        List<LogChunk> first = buffer.nextBatch(2, 1 << 20);
        assertThat(first).hasSize(1);
        assertThat(first.get(0).getFirstSequence()).isEqualTo(1);
        assertThat(first.get(0).getText().toStringUtf8()).isEqualTo("a\nb\nc\n");
        assertThat(first.get(0).getStream()).isEqualTo(LogStream.LOG_STREAM_STDOUT);
        List<LogChunk> second = buffer.nextBatch(2, 1 << 20);
        assertThat(second.get(0).getFirstSequence()).isEqualTo(4);
        assertThat(second.get(0).getStream()).isEqualTo(LogStream.LOG_STREAM_STDERR);
        assertThat(buffer.unsentBytes()).isZero();

        // An ack inside a block keeps the block: it is resent whole, and the master skips the
        // lines it has.
        buffer.ack(2);
        assertThat(buffer.pending()).isEqualTo(5);
        buffer.resend();
        assertThat(sequences(buffer.nextBatch(100, 1 << 20))).containsExactly(1L, 2L, 3L, 4L, 5L);
        buffer.ack(3);
        assertThat(buffer.pending()).isEqualTo(2);
        buffer.resend();
        assertThat(sequences(buffer.nextBatch(100, 1 << 20))).containsExactly(4L, 5L);
        assertThat(buffer.getLastSequence()).isEqualTo(5);
    }

    @Test
    void sealingReleasesABlockedReaderAndDropsItsLinesSoTheLastSequenceIsFinal() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 3);
        CompletableFuture<Long> blocked = fillAndBlock(buffer);

        buffer.seal();
        await().atMost(Duration.ofSeconds(5)).until(blocked::isDone);
        assertThat(buffer.getLastSequence()).isEqualTo(3);
        assertThat(sequences(buffer.nextBatch(100, 1 << 20))).containsExactly(1L, 2L, 3L);
        // Acknowledgements after the seal free room, but nothing more is taken.
        buffer.ack(3);
        buffer.add(LogStream.LOG_STREAM_STDERR, "later");
        assertThat(buffer.getLastSequence()).isEqualTo(3);
        assertThat(buffer.droppedAfterSeal()).isEqualTo(3);
        assertThat(buffer.nextBatch(100, 1 << 20)).isEmpty();
        assertThat(buffer.isFullyAcked()).isTrue();
    }

    @Test
    void aCutDropsWhatWaitsReleasesABlockedReaderAndCountsLaterLinesWithoutKeepingThem() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 3);
        CompletableFuture<Long> blocked = fillAndBlock(buffer);

        buffer.cut();
        await().atMost(Duration.ofSeconds(5)).until(blocked::isDone);
        assertThat(buffer.isCut()).isTrue();
        assertThat(buffer.nextBatch(100, 1 << 20)).as("nothing is sent any more").isEmpty();
        assertThat(buffer.pending()).isZero();
        buffer.add(LogStream.LOG_STREAM_STDOUT, "later");
        assertThat(buffer.getLastSequence()).as("the attempt's end still names its last line").isEqualTo(6);
        assertThat(buffer.droppedAfterCut()).isEqualTo(3);
        assertThat(buffer.isFullyAcked()).isTrue();
        buffer.resend();
        assertThat(buffer.nextBatch(100, 1 << 20)).as("a reconnect resends nothing").isEmpty();
    }
}
