package io.rlscheduler.master.internal.log;

import static io.rlscheduler.master.internal.log.LogFixtures.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random runs of {@code appendChunks} batches (resends that overlap what was acknowledged, gaps,
 * chunks of any size, a completion that may come before the last lines) against a model of the
 * rules: each line is written once, in order, escaped as documented; each batch is acknowledged
 * with the highest contiguous sequence number written; a follower attached at the start gets
 * lines 1..N and then one END_OF_STREAM, complete.
 */
class TaskLogChunkPropertyTest {

    private static final String[] PREFIXES = {
        "", "", "", "", "", "##RLS_", "##RLS_TEXT ", "##RLS_END state=X complete=true last=1",
        "##RLS_ATTEMPT attempt=1 epoch=1", "#", "##RLS", "#\r#RLS_", "TRACE_ID:x", "\r", "##RLS_\r",
    };
    private static final String[] PIECES = {"a", "b", "z", "0", " ", "\r", "\u00e9", "\u4e2d", "\uD83D\uDE00", "#", "\t"};

    @TempDir
    Path root;

    /** One task's run: its lines, what the master has acknowledged, and the completion. */
    private static final class Run {
        final String taskId;
        final long epoch;
        final boolean opened;
        final int attempt;
        /** The attempt's lines, and three more beyond its end that only a wrong resend carries. */
        final List<String> texts = new ArrayList<>();
        final List<LogStream> streams = new ArrayList<>();
        /** The highest contiguous sequence number the model says is written. */
        long written;
        /** The last sequence number once completed (early or at the end); -1 before. */
        long completedAt = -1;
        final List<CompletableFuture<Long>> acks = new ArrayList<>();
        final List<Long> expectedAcks = new ArrayList<>();
        final List<String> batches = new ArrayList<>();
        LogFixtures.Recorder recorder = new LogFixtures.Recorder();
        LogFollow follow;

        int lines;

        Run(String taskId, long epoch, boolean opened, int attempt) {
            this.taskId = taskId;
            this.epoch = epoch;
            this.opened = opened;
            this.attempt = attempt;
        }

        int size() {
            return lines;
        }

        long limit() {
            return completedAt >= 0 ? completedAt : Long.MAX_VALUE;
        }
    }

    private static String randomText(Random random) {
        StringBuilder text = new StringBuilder(PREFIXES[random.nextInt(PREFIXES.length)]);
        int n = random.nextInt(4) == 0 ? random.nextInt(80) : random.nextInt(12);
        for (int i = 0; i < n; i++) {
            text.append(PIECES[random.nextInt(PIECES.length)]);
        }
        return text.toString();
    }

    /** The chunk of lines {@code from..to} (1-based, inclusive): texts as a worker sends them, CRs kept. */
    private static LogChunk chunk(Run run, long from, long to) {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        for (long s = from; s <= to; s++) {
            text.writeBytes(run.texts.get((int) s - 1).getBytes(StandardCharsets.UTF_8));
            text.write('\n');
        }
        return LogChunk.newBuilder().setFirstSequence(from).setStream(run.streams.get((int) from - 1))
                .setTimestampUnixMs(1000 + from).setText(ByteString.copyFrom(text.toByteArray())).build();
    }

    /** The chunks of lines {@code from..to}, split where the stream changes (a chunk has one stream). */
    private static List<LogChunk> chunks(Run run, long from, long to) {
        List<LogChunk> chunks = new ArrayList<>();
        long start = from;
        for (long s = from + 1; s <= to + 1; s++) {
            if (s > to || run.streams.get((int) s - 1) != run.streams.get((int) start - 1)) {
                chunks.add(chunk(run, start, s - 1));
                start = s;
            }
        }
        return chunks;
    }

    /** The model: what the master acknowledges after {@code batch}, and what it has written then. */
    private static long model(Run run, List<LogChunk> batch) {
        long last = run.written;
        long limit = run.limit();
        for (LogChunk chunk : batch) {
            if (last >= limit) {
                break;
            }
            long first = chunk.getFirstSequence();
            long end = first + lineCount(chunk) - 1;
            if (end <= last) {
                continue; // only lines already written
            }
            if (first > last + 1) {
                break; // a gap
            }
            last = Math.min(end, limit);
        }
        return last;
    }

    /** Counts the lines of a chunk without the code under test. */
    private static long lineCount(LogChunk chunk) {
        long n = 0;
        for (byte b : chunk.getText().toByteArray()) {
            if (b == '\n') {
                n++;
            }
        }
        return n;
    }

    /** A random batch: mostly from somewhere at or below the ack, sometimes with a gap, sometimes beyond the end. */
    private static List<LogChunk> randomBatch(Random random, Run run) {
        List<LogChunk> batch = new ArrayList<>();
        int n = run.size();
        // Lines beyond N exist only as a test of the limit; a worker never has them.
        int reach = run.completedAt >= 0 ? n + 3 : n;
        long next = Math.max(1, run.written + 1 - random.nextInt(6));
        if (random.nextInt(8) == 0) {
            next = run.written + 2 + random.nextInt(3); // a gap first
        }
        int pieces = 1 + random.nextInt(4);
        for (int p = 0; p < pieces && next <= reach; p++) {
            long to = Math.min(reach, next + random.nextInt(random.nextInt(5) == 0 ? 40 : 6));
            batch.addAll(chunks(run, next, to));
            int what = random.nextInt(10);
            if (what == 0) {
                next = to + 2; // a gap between chunks
            } else if (what == 1) {
                next = Math.max(1, next - random.nextInt(4)); // a chunk that repeats lines
            } else {
                next = to + 1;
            }
        }
        return batch;
    }

    private static String escaped(String text) {
        String oneLine = text.replace('\r', ' ');
        return oneLine.startsWith("##RLS_") ? "##RLS_TEXT " + oneLine : oneLine;
    }

    private static String fileText(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String describe(Run run) {
        return run.taskId + " batches " + String.join(" ", run.batches);
    }

    @ParameterizedTest(name = "follower queue of {0} lines")
    @ValueSource(ints = {4096, 3})
    void writesEachLineOnceInOrderAcksTheContiguousPrefixAndFollowersGetEveryLine(int followerQueue) {
        Random random = new Random(0xC0FFEEL + followerQueue);
        // Few open files and cached states, so writers are closed and states re-read on the way.
        TaskLogManager logs = new TaskLogManager(root.resolve("logs-" + followerQueue),
                new TaskLogManager.Limits(2, 2, 2, followerQueue, 1), file -> { });
        try {
            for (int round = 0; round < 100; round++) {
                List<Run> runs = new ArrayList<>();
                for (int t = 0; t < 3; t++) {
                    Run run = new Run("r" + round + "-t" + t, 1 + random.nextInt(50), random.nextInt(4) != 0, 1 + t);
                    int n = 1 + random.nextInt(random.nextBoolean() ? 10 : 150);
                    LogStream stream = LogStream.LOG_STREAM_STDOUT;
                    run.lines = n;
                    for (int i = 0; i < n + 3; i++) {
                        if (random.nextInt(5) == 0) {
                            stream = stream == LogStream.LOG_STREAM_STDOUT ? LogStream.LOG_STREAM_STDERR
                                    : LogStream.LOG_STREAM_STDOUT;
                        }
                        run.texts.add(randomText(random));
                        run.streams.add(stream);
                    }
                    if (run.opened) {
                        await(logs.open(run.taskId, "trace-" + run.taskId, run.epoch, run.attempt));
                    }
                    run.follow = logs.follow(run.taskId, run.recorder);
                    runs.add(run);
                }
                // The batches of the three tasks interleaved; some awaited at once, most left in flight.
                List<Run> active = new ArrayList<>(runs);
                while (!active.isEmpty()) {
                    Run run = active.get(random.nextInt(active.size()));
                    if (run.completedAt < 0 && random.nextInt(12) == 0) {
                        // The end's event comes before the attempt's last lines.
                        logs.complete(run.taskId, run.epoch, run.size(), TaskState.SUCCEEDED);
                        run.completedAt = run.size();
                        run.batches.add("complete(" + run.size() + ")");
                    }
                    List<LogChunk> batch = randomBatch(random, run);
                    long expected = model(run, batch);
                    StringBuilder shape = new StringBuilder("[");
                    for (LogChunk chunk : batch) {
                        shape.append(chunk.getFirstSequence()).append('+')
                                .append(lineCount(chunk)).append(' ');
                    }
                    run.batches.add(shape.append("]->").append(expected).toString());
                    CompletableFuture<Long> ack = logs.appendChunks(run.taskId, run.epoch, batch);
                    run.acks.add(ack);
                    run.expectedAcks.add(expected);
                    run.written = expected;
                    if (random.nextInt(4) == 0) {
                        assertThat(await(ack)).as(describe(run)).isEqualTo(expected);
                    }
                    if (run.written == run.size()) {
                        if (run.completedAt < 0) {
                            logs.complete(run.taskId, run.epoch, run.size(), TaskState.SUCCEEDED);
                            run.completedAt = run.size();
                        }
                        // A resend after the end writes nothing and is acknowledged with the last line.
                        List<LogChunk> late = chunks(run, Math.max(1, run.size() - 2), run.size());
                        run.acks.add(logs.appendChunks(run.taskId, run.epoch, late));
                        run.expectedAcks.add((long) run.size());
                        active.remove(run);
                    }
                }
                for (Run run : runs) {
                    check(logs, run);
                }
            }
        } finally {
            logs.close();
        }
    }

    private void check(TaskLogManager logs, Run run) {
        List<Long> acks = run.acks.stream().map(LogFixtures::await).toList();
        assertThat(acks).as("acks of %s", describe(run)).containsExactlyElementsOf(run.expectedAcks);

        LogRecord end = await(run.follow.whenEnded());
        assertThat(end.isComplete()).as(describe(run)).isTrue();
        assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(run.recorder.onlyEnd()).isSameAs(end);
        List<LogRecord> lines = run.recorder.lines();
        assertThat(lines).as("follower texts of %s", describe(run)).extracting(LogRecord::getText)
                .containsExactlyElementsOf(run.texts.subList(0, run.size()).stream().map(t -> t.replace('\r', ' ')).toList());
        assertThat(lines).as("follower sequences of %s", describe(run)).extracting(LogRecord::getSequence)
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, run.size()).boxed().toList());
        assertThat(lines).extracting(LogRecord::getEpoch).containsOnly(run.epoch);
        assertThat(lines).extracting(LogRecord::getTaskId).containsOnly(run.taskId);
        if (logs.getLimits().followerQueueCapacity() >= run.size()) {
            // Never dropped back to the file: every line came live, with its chunk's stream.
            assertThat(lines).as("streams of %s", describe(run)).extracting(LogRecord::getStream)
                    .containsExactlyElementsOf(run.streams.subList(0, run.size()).stream().map(stream ->
                            stream == LogStream.LOG_STREAM_STDERR ? LogRecord.Stream.STDERR : LogRecord.Stream.STDOUT)
                            .toList());
        }

        StringBuilder expected = new StringBuilder();
        expected.append(run.opened ? "TRACE_ID:trace-" + run.taskId : "TRACE_ID:unknown").append('\n');
        expected.append("##RLS_ATTEMPT attempt=").append(run.opened ? run.attempt : 0)
                .append(" epoch=").append(run.epoch).append('\n');
        for (String text : run.texts.subList(0, run.size())) {
            expected.append(escaped(text)).append('\n');
        }
        expected.append("##RLS_END state=SUCCEEDED complete=true last=").append(run.size()).append('\n');
        assertThat(fileText(logs.pathOf(run.taskId))).as("file of %s", describe(run)).isEqualTo(expected.toString());
    }
}
