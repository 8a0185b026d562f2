package io.rlscheduler.master.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link InboundThrottle} on an {@link EmbeddedChannel} whose clock the test moves. */
class InboundThrottleTest {

    private static final int KIB = 1024;

    /** 64 KiB/s with a 16 KiB burst. */
    private final WorkerLimits limits = new WorkerLimits(64 * KIB, 16 * KIB, 1, Duration.ofMinutes(1), Duration.ofMinutes(1));
    private final AtomicBoolean authenticated = new AtomicBoolean();
    private EmbeddedChannel channel;

    @BeforeEach
    void start() {
        channel = new EmbeddedChannel(new InboundThrottle(limits, authenticated::get));
        channel.freezeTime();
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
    }

    /** Writes {@code bytes} bytes in and checks they are passed on at once, whole. */
    private void read(int bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[bytes]));
        ByteBuf passed = channel.readInbound();
        assertThat(passed.readableBytes()).isEqualTo(bytes);
        passed.release();
    }

    @Test
    void bytesBeforeTheHandshakeAreNotCounted() {
        for (int i = 0; i < 10; i++) {
            read(16 * KIB);
        }
        assertThat(channel.config().isAutoRead()).isTrue();
        assertThat(limits.getThrottledReads()).isZero();
    }

    @Test
    void aBurstPassesAndTheDebtBeyondItPausesReadingUntilItIsPaid() {
        authenticated.set(true);
        read(16 * KIB);
        assertThat(channel.config().isAutoRead()).as("within the burst").isTrue();

        read(32 * KIB); // 32 KiB in debt: half a second at 64 KiB/s
        assertThat(channel.config().isAutoRead()).isFalse();
        assertThat(limits.getThrottledReads()).isEqualTo(1);
        channel.advanceTimeBy(400, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(channel.config().isAutoRead()).as("after 400 ms").isFalse();
        channel.advanceTimeBy(101, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(channel.config().isAutoRead()).as("after 501 ms").isTrue();
        assertThat(limits.getThrottledReads()).isEqualTo(1);
    }

    @Test
    void theBucketRefillsAtTheRateUpToTheBurst() {
        authenticated.set(true);
        read(16 * KIB);
        channel.advanceTimeBy(10, TimeUnit.SECONDS); // far more than the burst's worth
        read(16 * KIB);
        assertThat(channel.config().isAutoRead()).as("refilled to the burst").isTrue();
        read(1);
        assertThat(channel.config().isAutoRead()).as("but not beyond it").isFalse();
    }
}
