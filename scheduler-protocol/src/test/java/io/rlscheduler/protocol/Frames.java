package io.rlscheduler.protocol;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/** Builds frame bytes for codec tests: well-formed ones through the real encoder, and raw ones. */
final class Frames {

    static final int MAX = ProtocolOptions.DEFAULT_MAX_FRAME_LENGTH;

    private Frames() {
    }

    /** Returns the bytes {@link FrameEncoder} writes for {@code message}. */
    static byte[] encode(MessageLite message) {
        EmbeddedChannel channel = new EmbeddedChannel(new FrameEncoder(MAX));
        channel.writeOutbound(message);
        ByteBuf out = channel.readOutbound();
        try {
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
            channel.finishAndReleaseAll();
        }
    }

    /** Returns the concatenated frames of all {@code messages}. */
    static byte[] encodeAll(Iterable<? extends MessageLite> messages) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (MessageLite message : messages) {
            all.writeBytes(encode(message));
        }
        return all.toByteArray();
    }

    /** Returns a frame with every header field given explicitly. */
    static byte[] raw(int magic, int version, long length, int type, byte[] body) {
        ByteBuffer frame = ByteBuffer.allocate(FrameFormat.HEADER_LENGTH + body.length);
        frame.putInt(magic).put((byte) version).putInt((int) length).put((byte) type).put(body);
        return frame.array();
    }

    /** Returns a well-formed header for a body of {@code bodyLength} bytes of type {@code type}. */
    static byte[] header(int type, int bodyLength) {
        return raw(FrameFormat.MAGIC, FrameFormat.VERSION, FrameFormat.HEADER_LENGTH + bodyLength, type, new byte[0]);
    }

    static ByteBuf wrap(byte[] bytes) {
        return Unpooled.copiedBuffer(bytes);
    }
}
