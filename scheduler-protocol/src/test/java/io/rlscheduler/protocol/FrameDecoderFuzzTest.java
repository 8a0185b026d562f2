package io.rlscheduler.protocol;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded fuzzing of the decoder: random and mutated frames (bit flips, truncations, length lies,
 * wrong types, random bodies), fed in random chunks and followed by a close. Only typed
 * {@link ProtocolException}s may occur, at most one per connection, every input buffer is released,
 * and an unmutated frame always decodes to the message it encodes.
 *
 * <p>Replay a failing run with {@code -Dfuzz.seed=<seed printed by the failing run>}; change the
 * count with {@code -Dfuzz.cases=N}.
 */
@ExtendWith(LeakCheck.class)
class FrameDecoderFuzzTest {

    private static final long SEED = Long.getLong("fuzz.seed", 0x5EEDL);
    private static final int CASES = Integer.getInteger("fuzz.cases", 100_000);
    private static final int MAX_FRAME = 64 * 1024;

    private enum Mutation { NONE, RANDOM_BYTES, BIT_FLIPS, TRUNCATE, LENGTH_LIE, WRONG_TYPE, RANDOM_BODY, GARBAGE_TAIL }

    @Test
    void randomAndMutatedFramesRaiseOnlyTypedProtocolErrors() {
        Random random = new Random(SEED);
        List<MessageLite> samples = new ArrayList<>(SampleMessages.all().values());
        samples.add(SampleMessages.logBatch(200));
        List<byte[]> encoded = samples.stream().map(Frames::encode).toList();
        Map<Mutation, Integer> byMutation = new EnumMap<>(Mutation.class);
        Map<ProtocolViolation, Integer> byViolation = new EnumMap<>(ProtocolViolation.class);
        int decodedIntact = 0;

        for (int i = 0; i < CASES; i++) {
            Mutation mutation = Mutation.values()[random.nextInt(Mutation.values().length)];
            int pick = random.nextInt(samples.size());
            MessageLite sample = samples.get(pick);
            byte[] input = mutate(mutation, encoded.get(pick).clone(), random);
            byMutation.merge(mutation, 1, Integer::sum);

            Outcome outcome = run(input, random);
            String context = "case " + i + " (" + mutation + ") of seed " + SEED + ": " + hex(input);

            assertThat(outcome.unexpected).as(context).isEmpty();
            assertThat(outcome.violations).as(context).hasSizeLessThanOrEqualTo(1);
            assertThat(outcome.inputs).as(context).allSatisfy(b -> assertThat(b.refCnt()).isZero());
            outcome.violations.forEach(v -> byViolation.merge(v, 1, Integer::sum));
            if (mutation == Mutation.NONE) {
                assertThat(outcome.violations).as(context).isEmpty();
                assertThat(outcome.messages).as(context).containsExactly(sample);
                decodedIntact++;
            }
        }

        System.out.printf("fuzz seed=%d cases=%d mutations=%s violations=%s intact=%d%n",
                SEED, CASES, byMutation, byViolation, decodedIntact);
        assertThat(byViolation.keySet()).as("every violation kind was provoked")
                .containsExactlyInAnyOrder(ProtocolViolation.values());
    }

    private static byte[] mutate(Mutation mutation, byte[] frame, Random random) {
        switch (mutation) {
            case NONE:
                return frame;
            case RANDOM_BYTES: {
                byte[] bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
                if (bytes.length >= 5 && random.nextBoolean()) {
                    ByteBuffer.wrap(bytes).putInt(FrameFormat.MAGIC).put((byte) FrameFormat.VERSION);
                }
                return bytes;
            }
            case BIT_FLIPS: {
                byte[] bytes = frame.clone();
                int flips = 1 + random.nextInt(8);
                for (int f = 0; f < flips; f++) {
                    int bit = random.nextInt(bytes.length * 8);
                    bytes[bit / 8] ^= (byte) (1 << (bit % 8));
                }
                return bytes;
            }
            case TRUNCATE:
                return Arrays.copyOf(frame, random.nextInt(frame.length));
            case LENGTH_LIE: {
                byte[] bytes = frame.clone();
                long[] lies = {0, 1, 9, 10, frame.length - 1L, frame.length + 1L, MAX_FRAME, MAX_FRAME + 1L,
                        0x7FFF_FFFFL, 0xFFFF_FFFFL, random.nextInt() & 0xFFFF_FFFFL};
                ByteBuffer.wrap(bytes).putInt(FrameFormat.LENGTH_OFFSET, (int) lies[random.nextInt(lies.length)]);
                return bytes;
            }
            case WRONG_TYPE: {
                byte[] bytes = frame.clone();
                bytes[FrameFormat.TYPE_OFFSET] = (byte) random.nextInt(256);
                return bytes;
            }
            case RANDOM_BODY: {
                byte[] bytes = Arrays.copyOf(frame, FrameFormat.HEADER_LENGTH + random.nextInt(200));
                byte[] body = new byte[bytes.length - FrameFormat.HEADER_LENGTH];
                random.nextBytes(body);
                System.arraycopy(body, 0, bytes, FrameFormat.HEADER_LENGTH, body.length);
                ByteBuffer.wrap(bytes).putInt(FrameFormat.LENGTH_OFFSET, bytes.length);
                return bytes;
            }
            case GARBAGE_TAIL: {
                byte[] tail = new byte[1 + random.nextInt(32)];
                random.nextBytes(tail);
                byte[] bytes = Arrays.copyOf(frame, frame.length + tail.length);
                System.arraycopy(tail, 0, bytes, frame.length, tail.length);
                return bytes;
            }
            default:
                throw new AssertionError(mutation);
        }
    }

    /**
     * Feeds the input in one to four chunks cut at random points, each a pooled direct buffer
     * (tracked by the leak detector), then closes the connection.
     */
    private static Outcome run(byte[] input, Random random) {
        Outcome outcome = new Outcome();
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(MAX_FRAME), outcome);
        int[] cuts = random.ints(random.nextInt(4), 0, input.length + 1).sorted().toArray();
        int offset = 0;
        for (int c = 0; c <= cuts.length && channel.isOpen(); c++) {
            int end = c < cuts.length ? cuts[c] : input.length;
            int chunk = end - offset;
            if (chunk == 0) {
                continue;
            }
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(chunk).writeBytes(input, offset, chunk);
            outcome.inputs.add(buf);
            channel.writeInbound(buf);
            offset += chunk;
        }
        channel.finishAndReleaseAll();
        return outcome;
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(bytes.length, 48); i++) {
            sb.append(String.format("%02x", bytes[i]));
        }
        return bytes.length > 48 ? sb + "... (" + bytes.length + " bytes)" : sb.toString();
    }

    /** Collects what one connection produced; plays the application and error-handler roles. */
    private static final class Outcome extends ChannelInboundHandlerAdapter {
        final List<ByteBuf> inputs = new ArrayList<>();
        final List<Object> messages = new ArrayList<>();
        final List<ProtocolViolation> violations = new ArrayList<>();
        final List<Throwable> unexpected = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            messages.add(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof ProtocolException pe) {
                violations.add(pe.getViolation());
            } else {
                unexpected.add(cause);
            }
            ctx.close();
        }
    }
}
