package io.rlscheduler.protocol;

import ch.qos.logback.classic.Level;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Shows that {@link LeakCheck} would notice a leak: an unreleased buffer is reported. */
class LeakCheckTest {

    @Test
    void unreleasedBufferIsReportedByTheDetector() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        try (LogCapture capture = LogCapture.of(ResourceLeakDetector.class, Level.ERROR)) {
            leakOneBuffer();
            assertThat(LeakCheck.collectLeakReports(capture)).anySatisfy(m -> assertThat(m).contains("LEAK"));
        }
    }

    private static void leakOneBuffer() {
        ByteBuf leaked = UnpooledByteBufAllocator.DEFAULT.directBuffer(32);
        leaked.writeInt(42); // never released; the reference is dropped on return
    }
}
