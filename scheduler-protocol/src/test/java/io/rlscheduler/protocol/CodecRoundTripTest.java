package io.rlscheduler.protocol;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(LeakCheck.class)
class CodecRoundTripTest {

    @ParameterizedTest
    @EnumSource(MessageType.class)
    void everyMessageTypeRoundTripsThroughEncoderAndDecoder(MessageType type) {
        MessageLite sample = SampleMessages.all().get(type);
        byte[] frame = Frames.encode(sample);

        ByteBuffer header = ByteBuffer.wrap(frame);
        assertThat(header.getInt()).isEqualTo(FrameFormat.MAGIC);
        assertThat(header.get()).isEqualTo((byte) FrameFormat.VERSION);
        assertThat(header.getInt()).as("length counts the whole frame").isEqualTo(frame.length);
        assertThat(header.get() & 0xFF).isEqualTo(type.getCode());
        assertThat(frame.length).isEqualTo(FrameFormat.HEADER_LENGTH + sample.getSerializedSize());

        assertThat(decodeAll(List.of(Frames.wrap(frame)))).containsExactly(sample);
    }

    @Test
    void emptyBodyIsAValidTenByteFrame() {
        byte[] frame = Frames.encode(LogAck.getDefaultInstance());
        assertThat(frame).hasSize(FrameFormat.HEADER_LENGTH);
        assertThat(decodeAll(List.of(Frames.wrap(frame)))).containsExactly(LogAck.getDefaultInstance());
    }

    @Test
    void oneByteChunksDecodeLikeOneBufferOfManyFrames() {
        Map<MessageType, MessageLite> samples = SampleMessages.all();
        byte[] stream = Frames.encodeAll(samples.values());

        List<Object> whole = decodeAll(List.of(Frames.wrap(stream)));

        List<ByteBuf> chunks = new ArrayList<>();
        for (byte b : stream) {
            chunks.add(Unpooled.wrappedBuffer(new byte[] {b}));
        }
        List<Object> bytewise = decodeAll(chunks);

        assertThat(whole).containsExactlyElementsOf(samples.values());
        assertThat(bytewise).containsExactlyElementsOf(whole);
        assertThat(chunks).allSatisfy(c -> assertThat(c.refCnt()).isZero());
    }

    @Test
    void framesSplitAtEveryPossibleBoundaryDecodeIdentically() {
        byte[] stream = Frames.encodeAll(List.of(SampleMessages.heartbeat(1), SampleMessages.logBatch(5),
                SampleMessages.heartbeat(2)));
        for (int cut = 1; cut < stream.length; cut++) {
            ByteBuf first = Unpooled.wrappedBuffer(stream, 0, cut);
            ByteBuf second = Unpooled.wrappedBuffer(stream, cut, stream.length - cut);
            assertThat(decodeAll(List.of(first, second))).as("cut at %d", cut)
                    .containsExactly(SampleMessages.heartbeat(1), SampleMessages.logBatch(5), SampleMessages.heartbeat(2));
        }
    }

    @Test
    void directAndHeapInputDecodeIdentically() {
        byte[] frame = Frames.encode(SampleMessages.logBatch(100));
        ByteBuf direct = Unpooled.directBuffer(frame.length).writeBytes(frame);
        assertThat(decodeAll(List.of(direct))).containsExactly(SampleMessages.logBatch(100));
        assertThat(decodeAll(List.of(Frames.wrap(frame)))).containsExactly(SampleMessages.logBatch(100));
    }

    @Test
    void encoderRefusesFrameLargerThanTheMaximum() {
        EmbeddedChannel channel = new EmbeddedChannel(new FrameEncoder(1024));
        LogBatch big = SampleMessages.logBatch(100);
        assertThat(big.getSerializedSize()).isGreaterThan(1024);
        assertThatThrownBy(() -> channel.writeOutbound(big))
                .isInstanceOf(EncoderException.class).hasMessageContaining("exceeds the maximum frame length of 1024");
        assertThat((Object) channel.readOutbound()).isNull();
        channel.finishAndReleaseAll();
    }

    @Test
    void encoderRefusesMessageThatHasNoFrameType() {
        EmbeddedChannel channel = new EmbeddedChannel(new FrameEncoder(Frames.MAX));
        assertThatThrownBy(() -> channel.writeOutbound(LogChunk.newBuilder().setFirstSequence(1).build()))
                .isInstanceOf(EncoderException.class).hasMessageContaining("not a protocol message");
        channel.finishAndReleaseAll();
    }

    @Test
    void encoderIsSharedByManyChannels() {
        FrameEncoder shared = new FrameEncoder(Frames.MAX);
        EmbeddedChannel a = new EmbeddedChannel(shared);
        EmbeddedChannel b = new EmbeddedChannel(shared);
        a.writeOutbound(SampleMessages.heartbeat(1));
        b.writeOutbound(SampleMessages.heartbeat(2));
        ByteBuf fromA = a.readOutbound();
        ByteBuf fromB = b.readOutbound();
        assertThat(decodeAll(List.of(fromA, fromB))).containsExactly(SampleMessages.heartbeat(1), SampleMessages.heartbeat(2));
        a.finishAndReleaseAll();
        b.finishAndReleaseAll();
    }

    /** Feeds the buffers to a fresh decoder, returns what it emitted, and checks all input was released. */
    static List<Object> decodeAll(List<ByteBuf> inputs) {
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(Frames.MAX));
        for (ByteBuf input : inputs) {
            channel.writeInbound(input);
        }
        List<Object> out = new ArrayList<>();
        for (Object msg; (msg = channel.readInbound()) != null; ) {
            out.add(msg);
        }
        assertThat(channel.finish()).as("nothing left over after the last frame").isFalse();
        assertThat(inputs).allSatisfy(b -> assertThat(b.refCnt()).as("input buffer released").isZero());
        return out;
    }
}
