package io.rlscheduler.master.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.MessageType;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link OpenAttempts} and {@link OpenAttemptIndex}, on an {@link EmbeddedChannel} whose clock the test moves. */
class OpenAttemptsTest {

    private final WorkerLimits limits = new WorkerLimits(1 << 20, 1 << 20, 2, Duration.ofSeconds(4), Duration.ofMinutes(1));
    private final OpenAttemptIndex index = new OpenAttemptIndex(limits);
    private EmbeddedChannel channel;
    private ChannelHandlerContext ctx;
    private OpenAttempts attempts;

    @BeforeEach
    void start() {
        channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        channel.freezeTime();
        ctx = channel.pipeline().firstContext();
        attempts = index.forConnection();
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
    }

    private boolean admit(String taskId, long epoch) {
        return attempts.admit(ctx, LogBatch.newBuilder().setTaskId(taskId).setEpoch(epoch).build());
    }

    @Test
    void aBatchForOneAttemptTooManyIsRefusedWithATypedErrorNamingTheLimit() {
        assertThat(admit("t1", 1)).isTrue();
        assertThat(admit("t2", 1)).isTrue();
        assertThat(admit("t1", 1)).as("an open attempt goes on").isTrue();
        assertThat((Object) channel.readOutbound()).isNull();

        assertThat(admit("t1", 2)).as("another epoch is another attempt").isFalse();
        ErrorReply refusal = channel.readOutbound();
        assertThat(refusal.getCode()).isEqualTo(ErrorCode.ERROR_CODE_LIMIT_EXCEEDED);
        assertThat(refusal.getMessage()).contains("open for 2 attempts", "maxOpenAttemptsPerWorker");
        assertThat(refusal.getTaskId()).isEqualTo("t1");
        assertThat(refusal.getEpoch()).isEqualTo(2);
        assertThat(refusal.getOffendingType()).isEqualTo(MessageType.LOG_BATCH.getCode());
        assertThat(refusal.getRetryable()).isTrue();
        assertThat(limits.getOpenAttemptRefusals()).isEqualTo(1);
        assertThat(attempts.size()).isEqualTo(2);
    }

    @Test
    void anAttemptWhoseLogEndedIsClosed() {
        admit("t1", 1);
        admit("t2", 1);
        index.attemptEnded("t1", 1);
        index.attemptEnded("t9", 1); // not open anywhere: nothing happens
        assertThat(admit("t3", 1)).isTrue();
        assertThat(attempts.size()).isEqualTo(2);
    }

    @Test
    void anAttemptNotSentForWithinTheTimeoutIsClosedWhenRoomIsNeeded() {
        admit("t1", 1);
        admit("t2", 1);
        channel.advanceTimeBy(3, TimeUnit.SECONDS);
        admit("t2", 1);
        assertThat(admit("t3", 1)).as("t1 is idle for 3 s only").isFalse();
        channel.advanceTimeBy(2, TimeUnit.SECONDS);
        assertThat(admit("t3", 1)).as("t1 idle for 5 s, the last look 2 s ago").isTrue();
        assertThat(admit("t2", 1)).as("t2 was sent for 2 s ago: still open").isTrue();
        assertThat(admit("t1", 1)).isFalse();
    }

    @Test
    void closingTheConnectionClosesItsAttempts() {
        admit("t1", 1);
        admit("t2", 1);
        assertThat(index.size()).isEqualTo(2);
        channel.close();
        assertThat(index.size()).isZero();
        assertThat(attempts.size()).isZero();
    }
}
