package io.rlscheduler.protocol;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Turns the inbound byte stream into immutable protobuf messages, one per frame.
 *
 * <p>Framing is Netty's {@link LengthFieldBasedFrameDecoder}; before it buffers anything, every
 * header field is checked as soon as its bytes have arrived: the magic byte by byte, then the
 * version, then the length against the header size and the configured maximum, then the type code.
 * So a peer sending garbage is refused after at most ten bytes, and a length field that lies is
 * refused before any of the body it claims is buffered. The first violation raises a
 * {@link ProtocolException}; after it the decoder discards all further input of the connection,
 * so one bad peer produces exactly one error.
 *
 * <p>Stateful: create one instance per channel (it is not {@code @Sharable}).
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {

    /** TLS record content types: a handshake message, an alert. */
    private static final int TLS_HANDSHAKE = 0x16;
    private static final int TLS_ALERT = 0x15;

    private final int maxFrameLength;
    private boolean failed;

    /**
     * Creates a decoder.
     *
     * @param maxFrameLength largest accepted frame in bytes, header included
     */
    public FrameDecoder(int maxFrameLength) {
        // Length counts the whole frame; the adjustment makes Netty's frame length equal to it.
        super(maxFrameLength, FrameFormat.LENGTH_OFFSET, 4,
                -(FrameFormat.LENGTH_OFFSET + 4), 0, true);
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        try {
            checkHeader(in);
            ByteBuf frame = (ByteBuf) super.decode(ctx, in);
            if (frame == null) {
                return null;
            }
            try {
                return parseBody(frame);
            } finally {
                frame.release();
            }
        } catch (ProtocolException e) {
            failed = true;
            in.skipBytes(in.readableBytes());
            throw e;
        }
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        super.decodeLast(ctx, in, out);
        if (!failed && in.isReadable()) {
            int pending = in.readableBytes();
            failed = true;
            in.skipBytes(pending);
            throw new ProtocolException(ProtocolViolation.TRUNCATED_FRAME,
                    "input ended inside a frame, " + pending + " bytes of it received");
        }
    }

    private void checkHeader(ByteBuf in) {
        int start = in.readerIndex();
        int available = in.readableBytes();
        int magicBytes = Math.min(available, 4);
        for (int i = 0; i < magicBytes; i++) {
            if (in.getByte(start + i) != FrameFormat.magicByte(i)) {
                if (i == 0 && isTlsRecord(in, start, available, TLS_HANDSHAKE)) {
                    throw new ProtocolException(ProtocolViolation.BAD_MAGIC, "bad magic: the first bytes 0x16 0x03 look"
                            + " like a TLS ClientHello: this port does not use TLS (a client with TLS settings?)");
                }
                if (i == 0 && isTlsRecord(in, start, available, TLS_ALERT)) {
                    throw new ProtocolException(ProtocolViolation.BAD_MAGIC, "bad magic: the first bytes 0x15 0x03 look"
                            + " like a TLS alert: the peer speaks TLS and this end does not (a server that requires TLS,"
                            + " and a client without TLS settings?)");
                }
                throw new ProtocolException(ProtocolViolation.BAD_MAGIC, "bad magic: byte " + i + " is 0x"
                        + Integer.toHexString(in.getUnsignedByte(start + i)) + ", expected 0x"
                        + Integer.toHexString(FrameFormat.magicByte(i) & 0xFF));
            }
        }
        if (available > FrameFormat.VERSION_OFFSET) {
            int version = in.getUnsignedByte(start + FrameFormat.VERSION_OFFSET);
            if (version != FrameFormat.VERSION) {
                throw new ProtocolException(ProtocolViolation.UNSUPPORTED_VERSION,
                        "unsupported protocol version " + version + ", this peer speaks " + FrameFormat.VERSION);
            }
        }
        if (available >= FrameFormat.LENGTH_OFFSET + 4) {
            long length = in.getUnsignedInt(start + FrameFormat.LENGTH_OFFSET);
            if (length < FrameFormat.HEADER_LENGTH) {
                throw new ProtocolException(ProtocolViolation.FRAME_TOO_SMALL,
                        "frame length " + length + " is smaller than the " + FrameFormat.HEADER_LENGTH + "-byte header");
            }
            if (length > maxFrameLength) {
                throw new ProtocolException(ProtocolViolation.FRAME_TOO_LARGE,
                        "frame length " + length + " exceeds the maximum of " + maxFrameLength);
            }
        }
        if (available > FrameFormat.TYPE_OFFSET) {
            MessageType.fromCode(in.getUnsignedByte(start + FrameFormat.TYPE_OFFSET));
        }
    }

    /**
     * Whether the input begins as a TLS record of the given content type (major version 3): a TLS
     * client's hello sent to a plaintext port, or the alert a TLS server sends a plaintext client
     * before it closes the connection.
     */
    private static boolean isTlsRecord(ByteBuf in, int start, int available, int contentType) {
        return available >= 2 && in.getUnsignedByte(start) == contentType && in.getUnsignedByte(start + 1) == 0x03;
    }

    private static MessageLite parseBody(ByteBuf frame) {
        int start = frame.readerIndex();
        MessageType type = MessageType.fromCode(frame.getUnsignedByte(start + FrameFormat.TYPE_OFFSET));
        int bodyLength = frame.readableBytes() - FrameFormat.HEADER_LENGTH;
        ByteBuffer body = frame.nioBuffer(start + FrameFormat.HEADER_LENGTH, bodyLength);
        try {
            return type.getParser().parseFrom(body);
        } catch (InvalidProtocolBufferException e) {
            throw new ProtocolException(ProtocolViolation.MALFORMED_BODY,
                    "body of " + bodyLength + " bytes is not a valid " + type + " message: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            // Parsers signal bad input with InvalidProtocolBufferException; anything else still
            // means this body cannot be read, and must not escape as an unexpected failure.
            throw new ProtocolException(ProtocolViolation.MALFORMED_BODY,
                    "body of " + bodyLength + " bytes could not be parsed as " + type + ": " + e, e);
        }
    }
}
