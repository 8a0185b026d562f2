package io.rlscheduler.master.internal.log;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.LongStream;

/** Helpers shared by the task log tests (public: the watcher's tests in the parent package use them too). */
public final class LogFixtures {

    public static final long TIMEOUT_SECONDS = 30;

    private LogFixtures() {
    }

    /** A chunk of stdout lines from sequence {@code first}: {@code text}, each line ended by LF. */
    public static LogChunk chunk(long first, String text) {
        return chunk(first, LogStream.LOG_STREAM_STDOUT, text);
    }

    /** A chunk of lines of {@code stream} from sequence {@code first}: {@code text}, each line ended by LF. */
    public static LogChunk chunk(long first, LogStream stream, String text) {
        return LogChunk.newBuilder().setFirstSequence(first).setStream(stream).setText(ByteString.copyFromUtf8(text))
                .build();
    }

    /** A chunk of one stdout line. */
    static LogChunk line(long sequence, String text) {
        return chunk(sequence, text + "\n");
    }

    /** Lines {@code from..to} (inclusive) with text "line-N", as one chunk; none when {@code from > to}. */
    public static List<LogChunk> lines(long from, long to) {
        StringBuilder text = new StringBuilder();
        for (long sequence = from; sequence <= to; sequence++) {
            text.append("line-").append(sequence).append('\n');
        }
        return from > to ? List.of() : List.of(chunk(from, text.toString()));
    }

    static List<String> texts(long from, long to) {
        return LongStream.rangeClosed(from, to).mapToObj(n -> "line-" + n).toList();
    }

    public static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("future did not complete normally: " + e, e);
        }
    }

    public static List<String> fileLines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A consumer that keeps every record, and checks none comes after END_OF_STREAM. */
    static final class Recorder implements Consumer<LogRecord> {
        private final List<LogRecord> records = new ArrayList<>();
        private int ends;
        private int afterEnd;
        volatile String threadName;

        @Override
        public synchronized void accept(LogRecord record) {
            threadName = Thread.currentThread().getName();
            if (ends > 0) {
                afterEnd++;
            }
            if (record.isEndOfStream()) {
                ends++;
            }
            records.add(record);
        }

        synchronized List<LogRecord> records() {
            return new ArrayList<>(records);
        }

        synchronized List<LogRecord> lines() {
            return records.stream().filter(LogRecord::isLine).toList();
        }

        synchronized List<String> texts() {
            return records.stream().filter(LogRecord::isLine).map(LogRecord::getText).toList();
        }

        synchronized List<Long> sequences() {
            return records.stream().filter(LogRecord::isLine).map(LogRecord::getSequence).toList();
        }

        synchronized int lineCount() {
            return (int) records.stream().filter(LogRecord::isLine).count();
        }

        /** Asserts exactly one END_OF_STREAM, as the last record, and returns it. */
        synchronized LogRecord onlyEnd() {
            assertThat(ends).as("END_OF_STREAM records").isEqualTo(1);
            assertThat(afterEnd).as("records after END_OF_STREAM").isZero();
            LogRecord last = records.get(records.size() - 1);
            assertThat(last.isEndOfStream()).isTrue();
            return last;
        }
    }
}
