package io.rlscheduler.master.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link IdleWorkerCloser} on an {@link EmbeddedChannel} whose clock the test moves. */
class IdleWorkerCloserTest {

    private final WorkerLimits limits = new WorkerLimits(1 << 20, 1 << 20, 1, Duration.ofMinutes(1), Duration.ofSeconds(1));
    private final AtomicReference<ConnectedWorker> worker = new AtomicReference<>();
    private EmbeddedChannel channel;

    @BeforeEach
    void start() {
        channel = new EmbeddedChannel();
        channel.freezeTime();
        channel.pipeline().addLast(new IdleWorkerCloser(limits, worker::get));
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
    }

    private void authenticate() {
        worker.set(new ConnectedWorker("w1", "s1", Map.of(), channel));
    }

    private void idleFor(long millis) {
        channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
    }

    private void read() {
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[8]));
        ((ByteBuf) channel.readInbound()).release();
    }

    @Test
    void anAuthenticatedConnectionThatSendsNothingIsClosedAndCounted() {
        authenticate();
        idleFor(1_001);
        assertThat(channel.isActive()).isFalse();
        assertThat(limits.getIdleCloses()).isEqualTo(1);
    }

    @Test
    void aConnectionThatKeepsSendingStaysOpen() {
        authenticate();
        for (int i = 0; i < 10; i++) {
            idleFor(600);
            read();
        }
        assertThat(channel.isActive()).isTrue();
        assertThat(limits.getIdleCloses()).isZero();
    }

    @Test
    void aConnectionBeforeItsHandshakeIsLeftToTheHandshakeTimeout() {
        idleFor(5_000);
        assertThat(channel.isActive()).isTrue();
        assertThat(limits.getIdleCloses()).isZero();
    }

    @Test
    void aConnectionWhoseReadsAreThrottledIsNotIdle() {
        authenticate();
        channel.config().setAutoRead(false);
        idleFor(3_000);
        assertThat(channel.isActive()).isTrue();
        channel.config().setAutoRead(true);
        idleFor(1_001);
        assertThat(channel.isActive()).isFalse();
    }
}
