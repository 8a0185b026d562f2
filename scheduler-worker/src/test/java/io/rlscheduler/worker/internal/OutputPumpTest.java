package io.rlscheduler.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.worker.TaskOutput;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** OutputPump's detach, with an output that blocks as a full log buffer does. */
class OutputPumpTest {

    @Test
    void detachReturnsAtOnceWhileADeliveryIsBlockedAndLaterLinesAreDropped() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inOutput = new CountDownLatch(1);
        List<String> taken = new CopyOnWriteArrayList<>();
        TaskOutput blocking = (stream, text) -> {
            taken.add(text);
            inOutput.countDown();
            try {
                // Blocks as LogBuffer.add does while the master acknowledges nothing.
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        PipedOutputStream process = new PipedOutputStream();
        OutputPump pump = new OutputPump(new PipedInputStream(process, 1 << 16), LogStream.LOG_STREAM_STDOUT, blocking,
                "task t attempt 1");
        Thread reader = new Thread(pump, "pump");
        reader.start();
        try {
            process.write("first\n".getBytes(StandardCharsets.UTF_8));
            process.flush();
            assertThat(inOutput.await(10, TimeUnit.SECONDS)).isTrue();

            // The supervision thread detaches: it must not wait for the blocked delivery.
            CompletableFuture<Void> detached = CompletableFuture.runAsync(pump::detach);
            await().atMost(Duration.ofSeconds(2)).until(detached::isDone);

            release.countDown();
            process.write("second\nthird\n".getBytes(StandardCharsets.UTF_8));
            process.close();
            pump.done().get(10, TimeUnit.SECONDS);
            assertThat(taken).containsExactly("first");
        } finally {
            release.countDown();
            reader.join(10_000);
        }
    }
}
