package io.rlscheduler.bench;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.protobuf.ProtobufDecoder;
import io.netty.handler.codec.protobuf.ProtobufEncoder;
import io.rlscheduler.protocol.FrameDecoder;
import io.rlscheduler.protocol.FrameEncoder;

/**
 * One codec under test: an encoder channel and a decoder channel joined by a simulated wire.
 *
 * <p>Every codec is driven the same way: the message is written to the encoder's
 * {@link EmbeddedChannel}; whatever buffers come out are copied into one direct buffer, as the
 * bytes would arrive from a socket read (a peer never sees how the sender split its writes); that
 * buffer is written to the decoder's channel, and the decoded message is read back. Both channels
 * allocate from the same allocator, and every buffer is released before the round trip returns.
 *
 * <p>Not thread-safe: one instance per benchmark thread.
 */
final class CodecPipeline implements AutoCloseable {

    private final EmbeddedChannel encoder;
    private final EmbeddedChannel decoder;
    private final ByteBufAllocator allocator;
    private int wireBytes = 256;

    private CodecPipeline(ByteBufAllocator allocator, ChannelHandler[] encoders, ChannelHandler[] decoders) {
        this.allocator = allocator;
        this.encoder = new EmbeddedChannel(encoders);
        this.decoder = new EmbeddedChannel(decoders);
        encoder.config().setAllocator(allocator);
        decoder.config().setAllocator(allocator);
    }

    /** Returns our frame codec: {@link FrameEncoder} out, {@link FrameDecoder} in. */
    static CodecPipeline ours(ByteBufAllocator allocator, int maxFrameLength) {
        return new CodecPipeline(allocator,
                new ChannelHandler[] {new FrameEncoder(maxFrameLength)},
                new ChannelHandler[] {new FrameDecoder(maxFrameLength)});
    }

    /**
     * Returns Netty's stock protobuf pipeline with a 4-byte length prefix, as its documentation
     * sets it up: {@link ProtobufEncoder} then {@link LengthFieldPrepender} out,
     * {@link LengthFieldBasedFrameDecoder} then {@link ProtobufDecoder} in.
     */
    static CodecPipeline stock(ByteBufAllocator allocator, int maxFrameLength, MessageLite prototype) {
        // Outbound messages pass the handlers from last to first: ProtobufEncoder runs first.
        return new CodecPipeline(allocator,
                new ChannelHandler[] {new LengthFieldPrepender(4), new ProtobufEncoder()},
                new ChannelHandler[] {new LengthFieldBasedFrameDecoder(maxFrameLength, 0, 4, 0, 4),
                        new ProtobufDecoder(prototype)});
    }

    /** Encodes the message, feeds its bytes to the decoder and returns the decoded message. */
    MessageLite roundTrip(MessageLite message) {
        return decode(encode(message));
    }

    /**
     * Round-trips the message once and checks that the codec works: the decoded message equals the
     * original, the wire buffer was released, and no message is left over in either channel.
     *
     * @throws IllegalStateException if any check fails
     */
    void verify(MessageLite message) {
        ByteBuf wire = encode(message);
        int frameBytes = wire.readableBytes();
        MessageLite decoded = decode(wire);
        if (!message.equals(decoded)) {
            throw new IllegalStateException("round trip of " + frameBytes + "-byte frame returned a different message: "
                    + (decoded == null ? "null" : decoded.getClass().getName()));
        }
        if (wire.refCnt() != 0) {
            throw new IllegalStateException("decoder did not release the wire buffer, refCnt " + wire.refCnt());
        }
        if (!encoder.outboundMessages().isEmpty() || !decoder.inboundMessages().isEmpty()) {
            throw new IllegalStateException("messages left over: " + encoder.outboundMessages().size()
                    + " outbound, " + decoder.inboundMessages().size() + " inbound");
        }
        wireBytes = frameBytes;
    }

    private ByteBuf encode(MessageLite message) {
        encoder.writeOutbound(message);
        ByteBuf wire = allocator.directBuffer(wireBytes);
        for (ByteBuf part; (part = encoder.readOutbound()) != null; ) {
            try {
                wire.writeBytes(part);
            } finally {
                part.release();
            }
        }
        return wire;
    }

    private MessageLite decode(ByteBuf wire) {
        decoder.writeInbound(wire);
        return decoder.readInbound();
    }

    @Override
    public void close() {
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }
}
