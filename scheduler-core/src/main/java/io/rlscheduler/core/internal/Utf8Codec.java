package io.rlscheduler.core.internal;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * Lettuce's UTF-8 string codec, but writing each argument straight into the command's buffer.
 * {@link StringCodec#UTF8} only estimates a string's encoded size, so Lettuce encodes every
 * argument into a temporary buffer first to learn its length, then copies it: an allocation and a
 * copy per argument, and a script run of the core passes dozens of them. This codec gives the
 * exact size ({@link ByteBufUtil#utf8Bytes}, which counts as {@link ByteBufUtil#writeUtf8} writes,
 * unpaired surrogates included), so Lettuce writes the length and then the bytes in place.
 * Decoding is {@link StringCodec#UTF8}'s. Stateless and thread-safe.
 */
public final class Utf8Codec implements RedisCodec<String, String>, ToByteBufEncoder<String, String> {

    public static final Utf8Codec INSTANCE = new Utf8Codec();

    private static final StringCodec DELEGATE = StringCodec.UTF8;

    private Utf8Codec() {
    }

    @Override
    public String decodeKey(ByteBuffer bytes) {
        return DELEGATE.decodeKey(bytes);
    }

    @Override
    public String decodeValue(ByteBuffer bytes) {
        return DELEGATE.decodeValue(bytes);
    }

    @Override
    public ByteBuffer encodeKey(String key) {
        return DELEGATE.encodeKey(key);
    }

    @Override
    public ByteBuffer encodeValue(String value) {
        return DELEGATE.encodeValue(value);
    }

    @Override
    public void encodeKey(String key, ByteBuf target) {
        if (key != null) {
            ByteBufUtil.writeUtf8(target, key);
        }
    }

    @Override
    public void encodeValue(String value, ByteBuf target) {
        if (value != null) {
            ByteBufUtil.writeUtf8(target, value);
        }
    }

    @Override
    public int estimateSize(Object keyOrValue) {
        return keyOrValue == null ? 0 : ByteBufUtil.utf8Bytes((CharSequence) keyOrValue);
    }

    @Override
    public boolean isEstimateExact() {
        return true;
    }
}
