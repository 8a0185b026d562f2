package io.rlscheduler.bench;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.protocol.ResourceUsage;
import io.rlscheduler.protocol.RunningTask;
import java.util.Locale;
import java.util.Random;

/**
 * Realistic, deterministic protocol messages for benchmarks: the same seed gives the same bytes in
 * every run, so figures from different runs measure the same work.
 */
final class Payloads {

    /** Target body size of {@link #logBatch(int)} for the "log64k" payload. */
    static final int LOG_BATCH_BODY_BYTES = 64 * 1024;

    private static final long GIB = 1024L * 1024 * 1024;
    private static final long NOW_UNIX_MS = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
    private static final int LOG_LINE_CHARS = 80;

    private Payloads() {
    }

    /**
     * Returns a heartbeat of a 4-GPU worker running two tasks: about 500 bytes on the wire.
     */
    static Heartbeat heartbeat() {
        ResourceUsage.Builder resources = ResourceUsage.newBuilder()
                .setCpuCount(64)
                .setCpuSlots(60)
                .setCpuLoad(23.75)
                .setMemoryTotalBytes(512 * GIB)
                .setMemoryUsedBytes(187 * GIB + 123_456_789L);
        for (int i = 0; i < 4; i++) {
            resources.addGpus(GpuStatus.newBuilder()
                    .setIndex(i)
                    .setUuid(String.format(Locale.ROOT, "GPU-%08x-4b1e-9c3d-7a52-%012x", 0x5eed0000 + i, 0xabcdef12L * (i + 1)))
                    .setName("NVIDIA A100-SXM4-80GB")
                    .setMemoryTotalBytes(80 * GIB)
                    .setMemoryUsedBytes((41 + 9L * i) * GIB)
                    .setUtilizationPercent(87 - 5 * i));
        }
        return Heartbeat.newBuilder()
                .setWorkerId("worker-gpu-node-07")
                .setSessionId("3f1c9a52-7d4e-4b8a-9e21-6c0d5f7a8b93")
                .setSequence(184_467)
                .setSentAtUnixMs(NOW_UNIX_MS)
                .setResources(resources)
                .addRunningTasks(runningTask("ppo-atari-breakout-seed-1", 3, 1, 48_211))
                .addRunningTasks(runningTask("sac-mujoco-humanoid-seed-4", 1, 2, 7_935))
                .build();
    }

    /**
     * Returns a log batch of ~80-character training log lines whose body is at most, and within one
     * line of, {@code bodyBytes}: the lines as a worker sends them, each run of one stream one
     * chunk (every 50th line goes to stderr).
     *
     * @param bodyBytes target serialized size of the batch
     */
    static LogBatch logBatch(int bodyBytes) {
        LogBatch.Builder batch = LogBatch.newBuilder()
                .setTaskId("ppo-atari-breakout-seed-1")
                .setEpoch(3);
        Random random = new Random(42);
        int size = batch.build().getSerializedSize(); // without the open chunk
        LogChunk.Builder open = null;
        StringBuilder text = new StringBuilder();
        for (long sequence = 1; ; sequence++) {
            LogStream stream = sequence % 50 == 0 ? LogStream.LOG_STREAM_STDERR : LogStream.LOG_STREAM_STDOUT;
            if (open != null && open.getStream() != stream) {
                LogChunk full = open.setText(ByteString.copyFromUtf8(text.toString())).build();
                batch.addChunks(full);
                size += CodedOutputStream.computeMessageSize(LogBatch.CHUNKS_FIELD_NUMBER, full);
                open = null;
            }
            if (open == null) {
                open = LogChunk.newBuilder().setFirstSequence(100_000 + sequence).setStream(stream)
                        .setTimestampUnixMs(NOW_UNIX_MS + 7 * sequence);
                text.setLength(0);
            }
            int before = text.length();
            text.append(logText(random, sequence)).append('\n');
            int openSize = CodedOutputStream.computeMessageSize(LogBatch.CHUNKS_FIELD_NUMBER,
                    open.setText(ByteString.copyFromUtf8(text.toString())).build());
            if (size + openSize > bodyBytes) {
                if (before > 0) {
                    batch.addChunks(open.setText(ByteString.copyFromUtf8(text.substring(0, before))));
                }
                return batch.build();
            }
        }
    }

    private static RunningTask runningTask(String taskId, long epoch, int attempt, long lastLogSequence) {
        return RunningTask.newBuilder()
                .setTaskId(taskId)
                .setEpoch(epoch)
                .setAttempt(attempt)
                .setLastLogSequence(lastLogSequence)
                .build();
    }

    /** Returns a PPO-style metrics line, cut or space-padded to exactly 80 characters. */
    private static String logText(Random random, long step) {
        String text = String.format(Locale.ROOT,
                "step=%d loss=%.5f reward=%.3f entropy=%.4f lr=%.2e fps=%d kl=%.5f clipfrac=%.4f",
                step * 128, random.nextDouble() * 2, random.nextGaussian() * 50 + 200, random.nextDouble(),
                3e-4 * (1 - step / 1e6), 2000 + random.nextInt(500), random.nextDouble() / 50, random.nextDouble() / 5);
        StringBuilder line = new StringBuilder(text);
        while (line.length() < LOG_LINE_CHARS) {
            line.append(' ');
        }
        line.setLength(LOG_LINE_CHARS);
        return line.toString();
    }
}
