package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import java.util.EnumMap;
import java.util.Map;

/** One fully populated message of every type, for round-trip, fuzz and socket tests. */
final class SampleMessages {

    private SampleMessages() {
    }

    static Map<MessageType, MessageLite> all() {
        Map<MessageType, MessageLite> samples = new EnumMap<>(MessageType.class);
        ByteString nonce = ByteString.copyFrom(new byte[32]);
        samples.put(MessageType.CHALLENGE, Challenge.newBuilder()
                .setProtocolMajor(1).setProtocolMinor(FrameFormat.MINOR_VERSION).setServerNonce(nonce).setMasterId("master-a").build());
        samples.put(MessageType.HELLO, Hello.newBuilder()
                .setProtocolMajor(1).setProtocolMinor(FrameFormat.MINOR_VERSION).setWorkerId("gpu-box-1").setSessionId("s-123")
                .putLabels("zone", "lab-2").putLabels("gpu", "a100").addCapabilities("python3")
                .setClientNonce(nonce).setProof(ByteString.copyFromUtf8("proof")).setSoftwareVersion("0.1.0").build());
        samples.put(MessageType.HELLO_ACCEPTED, HelloAccepted.newBuilder()
                .setProtocolMinor(FrameFormat.MINOR_VERSION).setMasterId("master-a").setProof(ByteString.copyFromUtf8("p"))
                .setHeartbeatIntervalMs(10_000).setLivenessLeaseMs(30_000).setTaskLeaseMs(120_000).build());
        samples.put(MessageType.HELLO_REJECTED, HelloRejected.newBuilder()
                .setReason(RejectReason.REJECT_REASON_NOT_LEADER).setMessage("not the leader")
                .setLeaderAddress("10.0.0.2:9000").build());
        samples.put(MessageType.HEARTBEAT, heartbeat(7));
        samples.put(MessageType.HEARTBEAT_ACK, HeartbeatAck.newBuilder()
                .setSequence(7).addRevokedTasks(TaskRef.newBuilder().setTaskId("t-9").setEpoch(3)).build());
        samples.put(MessageType.EXECUTE_TASK, ExecuteTask.newBuilder()
                .setTaskId("t-1").setEpoch(1_700_000_000_123L).setAttempt(2).setTraceId("trace-1")
                .setScript("train.py").addArguments("--verbose").setParametersJson("{\"lr\":0.1}")
                .setResources(ResourceRequest.newBuilder().setGpus(2).addGpuIds(0).addGpuIds(3)
                        .setCpuSlots(4).setMemoryBytes(8L << 30))
                .setTimeoutMs(7_200_000).putEnvironment("SEED", "1").setOwner("alice").build());
        samples.put(MessageType.EXECUTE_TASK_ACK, ExecuteTaskAck.newBuilder()
                .setTaskId("t-1").setEpoch(5).setAccepted(false)
                .setErrorCode(ErrorCode.ERROR_CODE_RESOURCE_UNAVAILABLE).setMessage("GPU 3 busy").build());
        samples.put(MessageType.LOG_BATCH, logBatch(3));
        samples.put(MessageType.LOG_ACK, LogAck.newBuilder().setTaskId("t-1").setEpoch(5).setAckedSequence(3)
                .setResend(true).build());
        samples.put(MessageType.CANCEL_TASK, CancelTask.newBuilder()
                .setTaskId("t-1").setEpoch(5).setReason(CancelReason.CANCEL_REASON_USER)
                .setMessage("cancelled by alice").setGracePeriodMs(5_000).build());
        samples.put(MessageType.ERROR, ErrorReply.newBuilder()
                .setCode(ErrorCode.ERROR_CODE_STALE_EPOCH).setMessage("stale").setOffendingType(9)
                .setTaskId("t-1").setEpoch(4).setRetryable(false).build());
        return samples;
    }

    static Heartbeat heartbeat(long sequence) {
        ResourceUsage.Builder usage = ResourceUsage.newBuilder()
                .setCpuCount(32).setCpuSlots(30).setCpuLoad(3.25)
                .setMemoryTotalBytes(256L << 30).setMemoryUsedBytes(100L << 30);
        for (int i = 0; i < 2; i++) {
            usage.addGpus(GpuStatus.newBuilder().setIndex(i).setUuid("GPU-" + i).setName("NVIDIA A100")
                    .setMemoryTotalBytes(80L << 30).setMemoryUsedBytes(1L << 30).setUtilizationPercent(50));
        }
        return Heartbeat.newBuilder()
                .setWorkerId("gpu-box-1").setSessionId("s-123").setSequence(sequence).setSentAtUnixMs(1_700_000_000_000L)
                .setResources(usage)
                .addRunningTasks(RunningTask.newBuilder().setTaskId("t-1").setEpoch(5).setAttempt(1).setLastLogSequence(10))
                .build();
    }

    /** A batch of {@code lines} lines, in chunks of up to three lines of one stream, the streams taking turns. */
    static LogBatch logBatch(int lines) {
        LogBatch.Builder batch = LogBatch.newBuilder().setTaskId("t-1").setEpoch(5).setAcknowledged(2);
        for (int first = 1; first <= lines; first += 3) {
            StringBuilder text = new StringBuilder();
            for (int i = first; i < first + 3 && i <= lines; i++) {
                text.append("episode ").append(i).append(" reward 1.5 \u00e9\u4e2d\n");
            }
            batch.addChunks(LogChunk.newBuilder().setFirstSequence(first)
                    .setStream(first % 2 == 0 ? LogStream.LOG_STREAM_STDERR : LogStream.LOG_STREAM_STDOUT)
                    .setTimestampUnixMs(1_700_000_000_000L + first).setText(ByteString.copyFromUtf8(text.toString())));
        }
        return batch.build();
    }
}
