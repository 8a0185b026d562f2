package io.rlscheduler.bench;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.rlscheduler.protocol.ProtocolOptions;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Throughput of one encode + decode round trip, in operations per second, of our frame codec
 * ({@code FrameEncoder} + {@code FrameDecoder}) against Netty's stock protobuf pipeline
 * ({@code ProtobufEncoder} + {@code LengthFieldPrepender(4)} out,
 * {@code LengthFieldBasedFrameDecoder} + {@code ProtobufDecoder} in).
 *
 * <p>One operation encodes one message to bytes, feeds those bytes to the decoder, reads the
 * decoded message back and releases every buffer; see {@link CodecPipeline} for how both codecs
 * are driven identically. Payloads ({@code payload}):
 * <ul>
 *   <li>{@code heartbeat}: a {@code Heartbeat} of a 4-GPU worker running two tasks (about 500 bytes);</li>
 *   <li>{@code log64k}: a {@code LogBatch} of 80-character log lines with a body of about 64 KiB.</li>
 * </ul>
 * Codecs ({@code codec}): {@code ours} and {@code stock}. Both allocate from
 * {@link PooledByteBufAllocator#DEFAULT} with Netty's leak detector off (it samples allocations,
 * which would penalise the codec that allocates more buffers with stack-trace captures). Each trial
 * first round-trips its message once and fails unless the result equals the original.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "-Dio.netty.leakDetection.level=disabled")
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@State(Scope.Thread)
public class CodecBenchmark {

    /** The message round-tripped: {@code heartbeat} or {@code log64k}. */
    @Param({"heartbeat", "log64k"})
    public String payload;

    /** The codec under test: {@code ours} or {@code stock}. */
    @Param({"ours", "stock"})
    public String codec;

    private MessageLite message;
    private CodecPipeline pipeline;

    /** Builds the payload and the pipeline, and checks that the pipeline round-trips the payload. */
    @Setup(Level.Trial)
    public void setUp() {
        message = switch (payload) {
            case "heartbeat" -> Payloads.heartbeat();
            case "log64k" -> Payloads.logBatch(Payloads.LOG_BATCH_BODY_BYTES);
            default -> throw new IllegalArgumentException("unknown payload " + payload);
        };
        ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
        int maxFrameLength = ProtocolOptions.DEFAULT_MAX_FRAME_LENGTH;
        pipeline = switch (codec) {
            case "ours" -> CodecPipeline.ours(allocator, maxFrameLength);
            case "stock" -> CodecPipeline.stock(allocator, maxFrameLength, message.getDefaultInstanceForType());
            default -> throw new IllegalArgumentException("unknown codec " + codec);
        };
        pipeline.verify(message);
    }

    /** Closes both channels of the pipeline. */
    @TearDown(Level.Trial)
    public void tearDown() {
        pipeline.close();
    }

    /** One encode + decode round trip of the payload. */
    @Benchmark
    public void roundTrip(Blackhole blackhole) {
        blackhole.consume(pipeline.roundTrip(message));
    }
}
