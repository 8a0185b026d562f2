package io.rlscheduler.protocol;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.MessageToByteEncoder;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Writes protocol messages as frames: the 10-byte header, then the protobuf body, into one buffer
 * sized exactly once. A message whose frame would exceed the maximum frame length fails its write
 * with an {@link EncoderException} instead of being sent to a peer that would refuse it.
 *
 * <p>Stateless and {@code @Sharable}: one instance may serve every channel.
 */
@Sharable
public final class FrameEncoder extends MessageToByteEncoder<MessageLite> {

    private final int maxFrameLength;

    /**
     * Creates an encoder.
     *
     * @param maxFrameLength largest frame it writes, in bytes and header included
     */
    public FrameEncoder(int maxFrameLength) {
        super(MessageLite.class);
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, MessageLite msg, boolean preferDirect) {
        int frameLength = frameLength(msg);
        return preferDirect
                ? ctx.alloc().ioBuffer(frameLength, frameLength)
                : ctx.alloc().heapBuffer(frameLength, frameLength);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, MessageLite msg, ByteBuf out) throws IOException {
        MessageType type = MessageType.forMessage(msg);
        int bodyLength = msg.getSerializedSize();
        int frameLength = frameLength(msg);
        out.writeInt(FrameFormat.MAGIC);
        out.writeByte(FrameFormat.VERSION);
        out.writeInt(frameLength);
        out.writeByte(type.getCode());
        out.ensureWritable(bodyLength);
        int bodyStart = out.writerIndex();
        CodedOutputStream body;
        if (out.hasArray()) {
            body = CodedOutputStream.newInstance(out.array(), out.arrayOffset() + bodyStart, bodyLength);
        } else {
            ByteBuffer nio = out.nioBuffer(bodyStart, bodyLength);
            body = CodedOutputStream.newInstance(nio);
        }
        msg.writeTo(body);
        body.checkNoSpaceLeft();
        out.writerIndex(bodyStart + bodyLength);
    }

    private int frameLength(MessageLite msg) {
        long frameLength = (long) FrameFormat.HEADER_LENGTH + msg.getSerializedSize();
        if (frameLength > maxFrameLength) {
            throw new EncoderException(MessageType.forMessage(msg) + " frame of " + frameLength
                    + " bytes exceeds the maximum frame length of " + maxFrameLength);
        }
        return (int) frameLength;
    }
}
