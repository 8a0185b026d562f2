package io.rlscheduler.protocol;

import ch.qos.logback.classic.Level;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each kind of malformed input closes the connection, logs one line naming the peer and the
 * reason, replies with a typed error where the peer can read one, delivers nothing of the bad
 * frame, and releases every buffer.
 */
@ExtendWith(LeakCheck.class)
class MalformedFrameTest {

    private LogCapture log;
    private RecordingHandler app;
    private EmbeddedChannel channel;
    private final List<ByteBuf> inputs = new ArrayList<>();

    @BeforeEach
    void setUp() {
        log = LogCapture.of(ProtocolErrorHandler.class, Level.DEBUG);
        app = new RecordingHandler();
        channel = new EmbeddedChannel(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> app));
    }

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
        log.close();
        assertThat(inputs).allSatisfy(b -> assertThat(b.refCnt()).as("input released").isZero());
    }

    @Test
    void badMagicClosesWithoutReply() {
        send("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertClosedWith(ProtocolViolation.BAD_MAGIC, null);
    }

    @Test
    void badMagicIsDetectedFromTheFirstWrongByte() {
        send(new byte[] {0x52, 0x00});
        assertClosedWith(ProtocolViolation.BAD_MAGIC, null);
    }

    @Test
    void aTlsClientHelloIsNamedInTheBadMagicLine() {
        send(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03, 0x03});
        assertClosedWith(ProtocolViolation.BAD_MAGIC, null);
        assertThat(log.messages(Level.WARN).get(0)).contains("0x16 0x03 look like a TLS ClientHello")
                .contains("this port does not use TLS");
    }

    @Test
    void aTlsAlertIsNamedInTheBadMagicLine() {
        send(new byte[] {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28});
        assertClosedWith(ProtocolViolation.BAD_MAGIC, null);
        assertThat(log.messages(Level.WARN).get(0)).contains("0x15 0x03 look like a TLS alert");
    }

    @Test
    void unsupportedVersionIsRepliedAndClosed() {
        send(Frames.raw(FrameFormat.MAGIC, 2, 10, MessageType.HEARTBEAT.getCode(), new byte[0]));
        assertClosedWith(ProtocolViolation.UNSUPPORTED_VERSION, ErrorCode.ERROR_CODE_UNSUPPORTED_VERSION);
    }

    @Test
    void unknownTypeIsRepliedAndClosed() {
        send(Frames.raw(FrameFormat.MAGIC, 1, 12, 99, new byte[] {8, 1}));
        assertClosedWith(ProtocolViolation.UNKNOWN_MESSAGE_TYPE, ErrorCode.ERROR_CODE_UNKNOWN_MESSAGE_TYPE);
        assertThat(log.messages(Level.WARN).get(0)).contains("99");
    }

    @Test
    void lengthBeyondMaximumIsRefusedWithoutAllocatingIt() {
        CountingAllocator alloc = new CountingAllocator();
        channel.config().setAllocator(alloc);
        byte[] header = Frames.raw(FrameFormat.MAGIC, 1, 0xFFFF_FFF0L, MessageType.LOG_BATCH.getCode(), new byte[0]);
        // the lying header followed by the start of the body it claims: dropped, not buffered
        send(Arrays.copyOf(header, 9 + 1024));
        assertClosedWith(ProtocolViolation.FRAME_TOO_LARGE, ErrorCode.ERROR_CODE_FRAME_TOO_LARGE);
        assertThat(alloc.largestRequest.get()).as("largest single allocation").isLessThan(4096);
        assertThat(log.messages(Level.WARN)).hasSize(1);
    }

    @Test
    void lengthJustAboveMaximumIsRefused() {
        send(Frames.header(MessageType.LOG_BATCH.getCode(), ProtocolOptions.DEFAULT_MAX_FRAME_LENGTH - 9));
        assertClosedWith(ProtocolViolation.FRAME_TOO_LARGE, ErrorCode.ERROR_CODE_FRAME_TOO_LARGE);
    }

    @Test
    void legalButUnfinishedLargeFrameIsNotAllocatedUpFront() {
        CountingAllocator alloc = new CountingAllocator();
        channel.config().setAllocator(alloc);
        send(Frames.header(MessageType.LOG_BATCH.getCode(), 3 * 1024 * 1024));
        send(new byte[100]);
        assertThat(channel.isOpen()).isTrue();
        assertThat(alloc.largestRequest.get()).as("largest single allocation").isLessThan(4096);
    }

    @Test
    void lengthSmallerThanHeaderIsRefused() {
        send(Frames.raw(FrameFormat.MAGIC, 1, 9, MessageType.HEARTBEAT.getCode(), new byte[0]));
        assertClosedWith(ProtocolViolation.FRAME_TOO_SMALL, ErrorCode.ERROR_CODE_MALFORMED_FRAME);
    }

    @Test
    void zeroLengthIsRefused() {
        send(Frames.raw(FrameFormat.MAGIC, 1, 0, MessageType.HEARTBEAT.getCode(), new byte[0]));
        assertClosedWith(ProtocolViolation.FRAME_TOO_SMALL, ErrorCode.ERROR_CODE_MALFORMED_FRAME);
    }

    @Test
    void truncatedBodyThenCloseIsReported() {
        byte[] frame = Frames.encode(SampleMessages.logBatch(10));
        send(Arrays.copyOf(frame, frame.length - 5));
        assertThat(channel.isOpen()).isTrue();
        channel.close();
        assertClosedWith(ProtocolViolation.TRUNCATED_FRAME, null);
        assertThat(log.messages(Level.WARN).get(0)).contains((frame.length - 5) + " bytes");
    }

    @Test
    void truncatedHeaderThenCloseIsReported() {
        send(Arrays.copyOf(Frames.encode(SampleMessages.heartbeat(1)), 6));
        channel.close();
        assertClosedWith(ProtocolViolation.TRUNCATED_FRAME, null);
    }

    @Test
    void bodyThatIsNotValidProtobufIsRepliedAndClosed() {
        byte[] garbageBody = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        send(Frames.raw(FrameFormat.MAGIC, 1, 10 + garbageBody.length, MessageType.HEARTBEAT.getCode(), garbageBody));
        assertClosedWith(ProtocolViolation.MALFORMED_BODY, ErrorCode.ERROR_CODE_MALFORMED_FRAME);
    }

    @Test
    void invalidUtf8InAStringFieldIsMalformed() {
        // field 1 (worker_id), wire type 2, length 2, bytes that are not UTF-8
        byte[] body = {0x0A, 0x02, (byte) 0xC3, (byte) 0x28};
        send(Frames.raw(FrameFormat.MAGIC, 1, 10 + body.length, MessageType.HEARTBEAT.getCode(), body));
        assertClosedWith(ProtocolViolation.MALFORMED_BODY, ErrorCode.ERROR_CODE_MALFORMED_FRAME);
    }

    @Test
    void framesBeforeTheBadOneAreDeliveredAndNothingAfterIt() {
        byte[] good = Frames.encode(SampleMessages.heartbeat(1));
        byte[] bad = Frames.raw(FrameFormat.MAGIC, 1, 10, 77, new byte[0]);
        byte[] alsoGood = Frames.encode(SampleMessages.heartbeat(2));
        byte[] all = new byte[good.length + bad.length + alsoGood.length];
        System.arraycopy(good, 0, all, 0, good.length);
        System.arraycopy(bad, 0, all, good.length, bad.length);
        System.arraycopy(alsoGood, 0, all, good.length + bad.length, alsoGood.length);
        send(all);
        assertClosedWith(ProtocolViolation.UNKNOWN_MESSAGE_TYPE, ErrorCode.ERROR_CODE_UNKNOWN_MESSAGE_TYPE,
                SampleMessages.heartbeat(1));
    }

    @Test
    void sameInitializerGivesEachChannelItsOwnWorkingPipeline() {
        ProtocolChannelInitializer initializer = new ProtocolChannelInitializer(ProtocolOptions.defaults(),
                RecordingHandler::new);
        EmbeddedChannel first = new EmbeddedChannel(initializer);
        EmbeddedChannel second = new EmbeddedChannel(initializer);
        first.writeInbound(Frames.wrap(Arrays.copyOf(Frames.encode(SampleMessages.heartbeat(1)), 7)));
        second.writeInbound(Frames.wrap(Frames.encode(SampleMessages.heartbeat(2))));
        RecordingHandler secondApp = (RecordingHandler) second.pipeline().get(ProtocolChannelInitializer.HANDLER);
        RecordingHandler firstApp = (RecordingHandler) first.pipeline().get(ProtocolChannelInitializer.HANDLER);
        assertThat(secondApp).isNotSameAs(firstApp);
        assertThat(secondApp.received).containsExactly(SampleMessages.heartbeat(2));
        assertThat(first.pipeline().get(ProtocolChannelInitializer.DECODER))
                .isNotSameAs(second.pipeline().get(ProtocolChannelInitializer.DECODER));
        first.finishAndReleaseAll();
        second.finishAndReleaseAll();
    }

    private void send(byte[] bytes) {
        ByteBuf buf = Frames.wrap(bytes);
        inputs.add(buf);
        channel.writeInbound(buf);
    }

    private void assertClosedWith(ProtocolViolation violation, ErrorCode reply, Object... delivered) {
        assertThat(channel.isOpen()).as("connection closed").isFalse();
        List<String> warnings = log.messages(Level.WARN);
        assertThat(warnings).as("exactly one log line").hasSize(1);
        assertThat(warnings.get(0)).contains("closing connection").contains("embedded").contains(violation.name());
        assertThat(app.received).containsExactly(delivered);
        ByteBuf written = channel.readOutbound();
        if (reply == null) {
            assertThat(written).as("no reply to a peer that does not speak the protocol").isNull();
            return;
        }
        assertThat(written).as("typed error reply").isNotNull();
        List<Object> decoded = CodecRoundTripTest.decodeAll(List.of(written));
        assertThat(decoded).hasSize(1).first().isInstanceOfSatisfying(ErrorReply.class,
                e -> assertThat(e.getCode()).isEqualTo(reply));
    }

    /** Records the largest buffer capacity anyone asked it for; the buffers come from the unpooled allocator. */
    private static final class CountingAllocator extends AbstractByteBufAllocator {
        final AtomicInteger largestRequest = new AtomicInteger();

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            largestRequest.accumulateAndGet(initialCapacity, Math::max);
            return UnpooledByteBufAllocator.DEFAULT.heapBuffer(initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            largestRequest.accumulateAndGet(initialCapacity, Math::max);
            return UnpooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }
}
