package io.rlscheduler.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.protocol.LogLine;
import io.rlscheduler.protocol.LogStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Sequencing, batching, acknowledgement and resending of {@link LogBuffer}. */
class LogBufferTest {

    private static List<Long> sequences(List<LogLine> batch) {
        return batch.stream().map(LogLine::getSequence).toList();
    }

    private static void add(LogBuffer buffer, int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            buffer.add(LogStream.LOG_STREAM_STDOUT, "line " + i);
        }
    }

    @Test
    void batchesTakeTheUnsentLinesInOrderUpToTheirLimits() throws Exception {
        LogBuffer buffer = new LogBuffer("t", 7, 100);
        add(buffer, 5);
        assertThat(sequences(buffer.nextBatch(2, 1 << 20))).containsExactly(1L, 2L);
        assertThat(sequences(buffer.nextBatch(10, 1 << 20))).containsExactly(3L, 4L, 5L);
        assertThat(buffer.nextBatch(10, 1 << 20)).isEmpty();
        // A batch stops at its byte budget (3 bytes per character + 32 per line), but never empty.
        add(buffer, 3);
        assertThat(sequences(buffer.nextBatch(10, 1))).containsExactly(6L);
        assertThat(sequences(buffer.nextBatch(10, 2 * (6 * 3 + 32)))).containsExactly(7L, 8L);
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
        CompletableFuture<Long> fourth = CompletableFuture.supplyAsync(() -> {
            try {
                return buffer.add(LogStream.LOG_STREAM_STDOUT, "fourth");
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !fourth.isDone());
        assertThat(sequences(buffer.nextBatch(10, 1 << 20))).containsExactly(1L, 2L, 3L);
        buffer.ack(1);
        await().atMost(Duration.ofSeconds(5)).until(fourth::isDone);
        assertThat(sequences(buffer.nextBatch(10, 1 << 20))).containsExactly(4L);
    }
}
