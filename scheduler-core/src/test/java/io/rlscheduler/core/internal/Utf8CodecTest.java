package io.rlscheduler.core.internal;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Utf8Codec writes exactly what Lettuce's UTF-8 StringCodec writes, and reads the same. */
class Utf8CodecTest {

    private static final List<String> SAMPLES = List.of(
            "", "a", "t-0b8f6a8e-1f1e-4f5e-9d7a-3c1f7b1a2e44", "{\"script\":\"train.py\",\"lr\":0.1}",
            "café", "日本語のエラー", "loss 📉 went up", "tab\tand\nnewline",
            "unpaired \uD83D surrogate", "trailing high \uD83D", "\uDE00 low first", "x".repeat(70_000));

    private static byte[] encoded(StringCodec reference, Utf8Codec codec, String text, boolean asKey) {
        CommandArgs<String, String> args = reference != null ? new CommandArgs<>(reference) : new CommandArgs<>(codec);
        if (asKey) {
            args.addKey(text);
        } else {
            args.addValue(text);
        }
        ByteBuf buf = Unpooled.buffer();
        try {
            args.encode(buf);
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    @Test
    void commandArgumentsAreEncodedByteForByteAsStringCodecDoes() {
        for (String text : SAMPLES) {
            for (boolean asKey : new boolean[] {true, false}) {
                byte[] expected = encoded(StringCodec.UTF8, null, text, asKey);
                byte[] actual = encoded(null, Utf8Codec.INSTANCE, text, asKey);
                assertThat(actual).as("%s as %s", text.length() > 40 ? text.substring(0, 40) : text, asKey ? "key" : "value")
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    void theSizeItGivesIsTheNumberOfBytesItWrites() {
        assertThat(Utf8Codec.INSTANCE.isEstimateExact()).isTrue();
        for (String text : SAMPLES) {
            ByteBuf buf = Unpooled.buffer();
            try {
                Utf8Codec.INSTANCE.encodeValue(text, buf);
                assertThat(Utf8Codec.INSTANCE.estimateSize(text)).as(text.length() > 40 ? text.substring(0, 40) : text)
                        .isEqualTo(buf.readableBytes());
            } finally {
                buf.release();
            }
        }
        assertThat(Utf8Codec.INSTANCE.estimateSize(null)).isZero();
    }

    @Test
    void decodesAsStringCodecDoes() {
        for (String text : SAMPLES) {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            assertThat(Utf8Codec.INSTANCE.decodeValue(ByteBuffer.wrap(bytes)))
                    .isEqualTo(StringCodec.UTF8.decodeValue(ByteBuffer.wrap(bytes)));
            assertThat(Utf8Codec.INSTANCE.decodeKey(ByteBuffer.wrap(bytes)))
                    .isEqualTo(StringCodec.UTF8.decodeKey(ByteBuffer.wrap(bytes)));
        }
        assertThat(Utf8Codec.INSTANCE.decodeValue(ByteBuffer.wrap("日本".getBytes(StandardCharsets.UTF_8)))).isEqualTo("日本");
    }
}
