package io.rlscheduler.protocol;

import ch.qos.logback.classic.Level;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Runs a test class under Netty's leak detector at PARANOID level (every buffer tracked) and
 * fails the class if the detector reports a leaked buffer. The detector reports a leak when it
 * finds a collected but unreleased buffer while tracking a new one, so after the tests this
 * extension collects garbage and allocates a few buffers to make it look. The level the class
 * found is set again after it.
 *
 * <p>Public, in this module's test jar, for the protocol tests of other modules
 * ({@code @ExtendWith(LeakCheck.class)}).
 */
public final class LeakCheck implements BeforeAllCallback, AfterAllCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LeakCheck.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NS).put("level", ResourceLeakDetector.getLevel());
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        context.getStore(NS).put("capture", LogCapture.of(ResourceLeakDetector.class, Level.ERROR));
    }

    /**
     * Makes the leak detector look for collected, unreleased buffers and returns what it reported
     * to {@code capture}: garbage is collected until a canary reference is enqueued (so the
     * collection has been processed), then new buffers are tracked, which drains the detector's
     * queue and logs each leak.
     */
    static List<String> collectLeakReports(LogCapture capture) {
        for (int round = 0; round < 3; round++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> canary = new WeakReference<>(new Object(), queue);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                System.gc();
                return queue.poll() != null;
            });
            canary.clear();
            for (int i = 0; i < 64; i++) {
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                pooled.release();
                ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.heapBuffer(16);
                unpooled.release();
            }
        }
        return capture.messages(Level.ERROR);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        try (LogCapture capture = context.getStore(NS).remove("capture", LogCapture.class)) {
            List<String> leaks = collectLeakReports(capture);
            assertThat(leaks).as("buffers reported leaked by Netty's PARANOID leak detector").isEmpty();
        } finally {
            ResourceLeakDetector.setLevel(context.getStore(NS).remove("level", ResourceLeakDetector.Level.class));
        }
    }
}
