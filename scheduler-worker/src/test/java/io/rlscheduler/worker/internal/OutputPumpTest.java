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
    void detachWithNoDeliveryInProgressIsQuietAtOnce() throws Exception {
        List<String> taken = new CopyOnWriteArrayList<>();
        PipedOutputStream process = new PipedOutputStream();
        OutputPump pump = new OutputPump(new PipedInputStream(process, 1 << 16), LogStream.LOG_STREAM_STDERR,
                (stream, text) -> taken.add(text), "task t attempt 1");
        Thread reader = new Thread(pump, "pump");
        reader.start();
        process.write("kept\n".getBytes(StandardCharsets.UTF_8));
        process.flush();
        await().atMost(Duration.ofSeconds(10)).until(() -> taken.size() == 1);
        assertThat(pump.detach()).isDone();
        process.write("dropped\n".getBytes(StandardCharsets.UTF_8));
        process.close();
        pump.done().get(10, TimeUnit.SECONDS);
        reader.join(10_000);
        assertThat(taken).containsExactly("kept");
    }

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

            // The supervision thread detaches: the call must not wait for the blocked delivery,
            // and its future must not complete before that delivery is over.
            CompletableFuture<CompletableFuture<Void>> detaching = CompletableFuture.supplyAsync(pump::detach);
            await().atMost(Duration.ofSeconds(2)).until(detaching::isDone);
            CompletableFuture<Void> quiet = detaching.get();
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !quiet.isDone());

            process.write("second\nthird\n".getBytes(StandardCharsets.UTF_8));
            process.flush();
            release.countDown();
            quiet.get(10, TimeUnit.SECONDS);
            process.close();
            pump.done().get(10, TimeUnit.SECONDS);
            // The block in progress was kept; what was read after detaching was dropped.
            assertThat(taken).containsExactly("first");
        } finally {
            release.countDown();
            reader.join(10_000);
        }
    }
}
