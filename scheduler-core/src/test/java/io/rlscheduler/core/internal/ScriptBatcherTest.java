package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The coalescing of {@link ScriptBatcher}, with a run function standing in for Redis. */
class ScriptBatcherTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Records each run's calls and completes it only when the test says so. */
    private static final class Runs {
        final List<List<String>> batches = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<CompletableFuture<String>> replies = new java.util.concurrent.CopyOnWriteArrayList<>();

        CompletableFuture<String> run(List<String> calls) {
            batches.add(List.copyOf(calls));
            CompletableFuture<String> reply = new CompletableFuture<>();
            replies.add(reply);
            return reply;
        }

        /** Answers run {@code i} with each call's argument upper-cased. */
        void answer(int i) {
            StringBuilder json = new StringBuilder("[");
            for (String call : batches.get(i)) {
                json.append(json.length() > 1 ? "," : "").append('"').append(call.toUpperCase()).append('"');
            }
            replies.get(i).complete(json.append(']').toString());
        }
    }

    private static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (java.io.IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void loneCallGoesAtOnceAndCallsArrivingMeanwhileGoTogether() {
        Runs runs = new Runs();
        ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 3, 1, runs::run, ScriptBatcherTest::parse);
        CompletableFuture<JsonNode> a = batcher.call("a");
        assertThat(runs.batches).containsExactly(List.of("a"));
        List<CompletableFuture<JsonNode>> waiting = new ArrayList<>();
        for (String s : List.of("b", "c", "d", "e")) {
            waiting.add(batcher.call(s));
        }
        assertThat(runs.batches).hasSize(1);
        assertThat(batcher.queued()).isEqualTo(4);
        runs.answer(0);
        assertThat(a.join().asText()).isEqualTo("A");
        assertThat(runs.batches).containsExactly(List.of("a"), List.of("b", "c", "d"));
        runs.answer(1);
        assertThat(runs.batches).containsExactly(List.of("a"), List.of("b", "c", "d"), List.of("e"));
        runs.answer(2);
        assertThat(waiting).extracting(f -> f.join().asText()).containsExactly("B", "C", "D", "E");
        assertThat(batcher.queued()).isZero();
    }

    @Test
    void withALingerCallsWaitForTheTimerOrAFullBatchThenGoTogether() throws Exception {
        Runs runs = new Runs();
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        java.util.concurrent.CountDownLatch fired = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger flushes = new java.util.concurrent.atomic.AtomicInteger();
        // A linger that only the test's own latch ends: the flush runs when the test lets it.
        java.util.concurrent.ScheduledExecutorService gated = new java.util.concurrent.ScheduledThreadPoolExecutor(1) {
            @Override
            public java.util.concurrent.ScheduledFuture<?> schedule(Runnable command, long delay, java.util.concurrent.TimeUnit unit) {
                return timer.schedule(() -> {
                    try {
                        fired.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    command.run();
                    flushes.incrementAndGet();
                }, 0, unit);
            }
        };
        try {
            ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 3, 1, runs::run, ScriptBatcherTest::parse,
                    java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(2), gated);
            CompletableFuture<JsonNode> a = batcher.call("a");
            CompletableFuture<JsonNode> b = batcher.call("b");
            assertThat(runs.batches).as("nothing goes before the linger ends").isEmpty();
            assertThat(batcher.queued()).isEqualTo(2);
            CompletableFuture<JsonNode> c = batcher.call("c");
            assertThat(runs.batches).as("a full batch goes at once").containsExactly(List.of("a", "b", "c"));
            CompletableFuture<JsonNode> d = batcher.call("d");
            runs.answer(0);
            assertThat(List.of(a, b, c)).extracting(f -> f.join().asText()).containsExactly("A", "B", "C");
            assertThat(runs.batches).as("what came meanwhile lingers too").hasSize(1);
            CompletableFuture<JsonNode> e = batcher.call("e");
            fired.countDown();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> runs.batches.size() == 2);
            assertThat(runs.batches.get(1)).containsExactly("d", "e");
            // A linger that ends while a run is out: the run's end sends what waits at once.
            CompletableFuture<JsonNode> f = batcher.call("f");
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> flushes.get() == 2);
            assertThat(runs.batches).hasSize(2);
            runs.answer(1);
            assertThat(List.of(d, e)).extracting(x -> x.join().asText()).containsExactly("D", "E");
            assertThat(runs.batches).hasSize(3);
            assertThat(runs.batches.get(2)).containsExactly("f");
            runs.answer(2);
            assertThat(f.join().asText()).isEqualTo("F");
            assertThat(batcher.queued()).isZero();
        } finally {
            fired.countDown();
            gated.shutdownNow();
            timer.shutdownNow();
        }
    }

    @Test
    void closingFailsTheCallsThatWaitAndEveryLaterOne() {
        Runs runs = new Runs();
        java.util.concurrent.ScheduledExecutorService never = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            // A linger that never ends within the test: the calls wait until the close.
            ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 10, 1, runs::run, ScriptBatcherTest::parse,
                    java.util.concurrent.TimeUnit.HOURS.toNanos(1), never);
            CompletableFuture<JsonNode> a = batcher.call("a");
            CompletableFuture<JsonNode> b = batcher.call("b");
            batcher.close();
            assertThat(runs.batches).isEmpty();
            for (CompletableFuture<JsonNode> f : List.of(a, b, batcher.call("c"))) {
                assertThatThrownBy(f::join).isInstanceOf(CompletionException.class)
                        .hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            }
            assertThat(batcher.queued()).isZero();
        } finally {
            never.shutdownNow();
        }
    }

    @Test
    void upToMaxInFlightRunsGoWithoutWaiting() {
        Runs runs = new Runs();
        ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 10, 2, runs::run, ScriptBatcherTest::parse);
        batcher.call("a");
        batcher.call("b");
        batcher.call("c");
        assertThat(runs.batches).containsExactly(List.of("a"), List.of("b"));
        runs.answer(1);
        assertThat(runs.batches).containsExactly(List.of("a"), List.of("b"), List.of("c"));
    }

    @Test
    void failedRunFailsEachOfItsCallsAndTheNextRunStillGoes() {
        Runs runs = new Runs();
        ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 10, 1, runs::run, ScriptBatcherTest::parse);
        CompletableFuture<JsonNode> a = batcher.call("a");
        CompletableFuture<JsonNode> b = batcher.call("b");
        CompletableFuture<JsonNode> c = batcher.call("c");
        runs.answer(0);
        runs.replies.get(1).completeExceptionally(new IllegalStateException("connection lost"));
        assertThat(a.join().asText()).isEqualTo("A");
        for (CompletableFuture<JsonNode> f : List.of(b, c)) {
            assertThatThrownBy(f::join).isInstanceOf(CompletionException.class).hasMessageContaining("connection lost");
        }
        CompletableFuture<JsonNode> d = batcher.call("d");
        runs.answer(2);
        assertThat(d.join().asText()).isEqualTo("D");
    }

    @Test
    void replyOfTheWrongLengthFailsEveryCallOfTheRun() {
        Runs runs = new Runs();
        ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 10, 1, runs::run, ScriptBatcherTest::parse);
        CompletableFuture<JsonNode> a = batcher.call("a");
        runs.replies.get(0).complete("[\"A\",\"extra\"]");
        assertThatThrownBy(a::join).hasMessageContaining("answered 1 calls with 2 answers");
    }

    @Test
    void runFunctionThrowingFailsItsCallsInsteadOfTheCaller() {
        ScriptBatcher<String> batcher = new ScriptBatcher<>("t", 10, 1, calls -> {
            throw new IllegalArgumentException("bad");
        }, ScriptBatcherTest::parse);
        CompletableFuture<JsonNode> a = batcher.call("a");
        assertThatThrownBy(a::join).hasMessageContaining("bad");
        assertThat(batcher.queued()).isZero();
    }
}
