package io.rlscheduler.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Coalesces concurrent calls of one batch-capable Lua script into fewer script runs, so that the
 * fixed cost of a run (the round trip, the command's framing, the script's prelude, reading the
 * clock) is paid once per batch instead of once per call, the way a database commits a group.
 *
 * <p>A call is sent at once when fewer than {@code maxInFlight} runs of the script are
 * outstanding, so an idle system answers a lone call after one round trip, as if it were not
 * batched. Calls that arrive while the limit is reached wait in a queue and go together, up to
 * {@code maxBatch} per run, as soon as a run completes. Nothing waits on a timer, unless the
 * batcher was made with a linger: then a call waits up to that long for others to join it (or
 * until {@code maxBatch} calls wait), for calls that come one at a time, too far apart to meet in
 * the queue, and can afford the wait (the liveness renewals of idle workers). A call waits at
 * most the linger or until a run that was out when the linger ended comes back, whichever is later.
 *
 * <p>The script decides each call on its own, exactly as if it came alone, and answers a JSON
 * array with one element per call, in order; each call's future completes with its element. If
 * a run fails as a whole (Redis unreachable, a timeout), every call of that run fails with that
 * error; the calls are safe to repeat, as every mutating call of the core is.
 *
 * <p>Lock-free: never blocks the calling thread (which may be an event loop); runs complete on
 * Lettuce's I/O threads, which also send the next batch. Thread-safe.
 *
 * @param <T> one call's arguments, as the run function takes them
 */
public final class ScriptBatcher<T> {

    /** One queued call. */
    private record Call<T>(T args, CompletableFuture<JsonNode> answer) {
    }

    private final String name;
    private final int maxBatch;
    private final int maxInFlight;
    private final Function<List<T>, CompletableFuture<String>> run;
    private final Function<String, JsonNode> parse;
    private final ConcurrentLinkedQueue<Call<T>> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** How many calls wait in the queue (its size, which the queue itself counts by walking it). */
    private final AtomicInteger waiting = new AtomicInteger();
    private final long lingerNanos;
    private final ScheduledExecutorService timer;
    /** Whether a lingering flush is scheduled. */
    private final AtomicBoolean lingering = new AtomicBoolean();
    /** Whether a linger ended while the runs in flight kept its calls from going: the next run's end sends them. */
    private final AtomicBoolean overdue = new AtomicBoolean();
    private volatile boolean closed;

    /**
     * @param name        the script's name, for error messages
     * @param maxBatch    the most calls per run, at least 1
     * @param maxInFlight the most runs outstanding at once, at least 1
     * @param run         sends one run of the script for the given calls and returns its reply
     * @param parse       parses a reply into a JSON array
     */
    public ScriptBatcher(String name, int maxBatch, int maxInFlight, Function<List<T>, CompletableFuture<String>> run,
                         Function<String, JsonNode> parse) {
        this(name, maxBatch, maxInFlight, run, parse, 0, null);
    }

    /**
     * A batcher whose calls wait up to {@code lingerNanos} for others to join them.
     *
     * @param name        the script's name, for error messages
     * @param maxBatch    the most calls per run, at least 1; that many waiting go at once
     * @param maxInFlight the most runs outstanding at once, at least 1
     * @param run         sends one run of the script for the given calls and returns its reply
     * @param parse       parses a reply into a JSON array
     * @param lingerNanos how long a call waits for others, 0 for not at all
     * @param timer       runs the lingering flushes (never blocked by them); null when
     *                    {@code lingerNanos} is 0
     */
    public ScriptBatcher(String name, int maxBatch, int maxInFlight, Function<List<T>, CompletableFuture<String>> run,
                         Function<String, JsonNode> parse, long lingerNanos, ScheduledExecutorService timer) {
        if (lingerNanos < 0 || (lingerNanos > 0 && timer == null)) {
            throw new IllegalArgumentException("a linger must be positive and come with a timer, was " + lingerNanos);
        }
        this.lingerNanos = lingerNanos;
        this.timer = timer;
        if (maxBatch < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("maxBatch and maxInFlight must be at least 1, were " + maxBatch + ", "
                    + maxInFlight);
        }
        this.name = Objects.requireNonNull(name, "name");
        this.maxBatch = maxBatch;
        this.maxInFlight = maxInFlight;
        this.run = Objects.requireNonNull(run, "run");
        this.parse = Objects.requireNonNull(parse, "parse");
    }

    /**
     * Queues one call and sends it, alone or with others, as soon as the in-flight limit allows.
     *
     * @param args the call's arguments
     * @return the script's answer to this call
     */
    public CompletableFuture<JsonNode> call(T args) {
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        if (closed) {
            answer.completeExceptionally(closedError());
            return answer;
        }
        queue.add(new Call<>(Objects.requireNonNull(args, "args"), answer));
        if (closed) {
            failWaiting();
            return answer;
        }
        waiting.incrementAndGet();
        dispatchOrLinger();
        return answer;
    }

    /** Sends what waits, or with a linger and fewer than a full batch waiting, schedules it. */
    private void dispatchOrLinger() {
        if (lingerNanos == 0 || waiting.get() >= maxBatch) {
            dispatch();
        } else if (!queue.isEmpty() && lingering.compareAndSet(false, true)) {
            try {
                timer.schedule(this::lingered, lingerNanos, TimeUnit.NANOSECONDS);
            } catch (RuntimeException e) {
                // The timer is shutting down (the core closes): send now rather than never.
                lingering.set(false);
                dispatch();
            }
        }
    }

    /**
     * A run ended: what waits goes now, but for calls whose linger is still running (a timer is
     * scheduled for them, and sends them when it fires), unless a full batch waits.
     */
    private void afterRun() {
        if (lingerNanos == 0 || !lingering.get() || overdue.get() || waiting.get() >= maxBatch) {
            dispatch();
        }
    }

    private void lingered() {
        lingering.set(false);
        overdue.set(true);
        dispatch();
    }

    /**
     * Fails every call still waiting, and every later one, with an {@link IllegalStateException}:
     * for the core's close, so that no call waits for a timer that will never fire. Runs already
     * sent complete as their connection answers them.
     */
    public void close() {
        closed = true;
        failWaiting();
    }

    private void failWaiting() {
        Call<T> c;
        while ((c = queue.poll()) != null) {
            waiting.decrementAndGet();
            c.answer().completeExceptionally(closedError());
        }
    }

    private IllegalStateException closedError() {
        return new IllegalStateException("script " + name + ": the core is closed");
    }

    /** Returns how many runs are outstanding (sent, not yet answered). */
    public int inFlight() {
        return inFlight.get();
    }

    /** Returns how many calls wait for a run (for tests and diagnostics). */
    public int queued() {
        return Math.max(0, waiting.get()); // counted just after the queue changes: -1 for a moment
    }

    private void dispatch() {
        while (!queue.isEmpty()) {
            int running = inFlight.get();
            if (running >= maxInFlight) {
                // The run that completes next picks the queue up.
                return;
            }
            if (!inFlight.compareAndSet(running, running + 1)) {
                continue;
            }
            List<Call<T>> batch = new ArrayList<>(Math.min(maxBatch, 64));
            Call<T> c;
            while (batch.size() < maxBatch && (c = queue.poll()) != null) {
                waiting.decrementAndGet();
                batch.add(c);
            }
            if (queue.isEmpty()) {
                overdue.set(false);
            }
            if (batch.isEmpty()) {
                // Another thread took the queue between the check and the poll.
                inFlight.decrementAndGet();
                continue;
            }
            send(batch);
        }
    }

    private void send(List<Call<T>> batch) {
        List<T> args = new ArrayList<>(batch.size());
        for (Call<T> c : batch) {
            args.add(c.args());
        }
        CompletableFuture<String> reply;
        try {
            reply = run.apply(args);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((text, error) -> {
            try {
                complete(batch, text, error);
            } finally {
                inFlight.decrementAndGet();
                afterRun();
            }
        });
    }

    private void complete(List<Call<T>> batch, String text, Throwable error) {
        if (error != null) {
            batch.forEach(c -> c.answer().completeExceptionally(error));
            return;
        }
        JsonNode answers;
        try {
            answers = parse.apply(text);
        } catch (RuntimeException e) {
            batch.forEach(c -> c.answer().completeExceptionally(e));
            return;
        }
        if (answers == null || !answers.isArray() || answers.size() != batch.size()) {
            IllegalStateException e = new IllegalStateException("script " + name + " answered " + batch.size()
                    + " calls with " + (answers == null ? "nothing" : answers.isArray() ? answers.size() + " answers"
                    : "a non-array"));
            batch.forEach(c -> c.answer().completeExceptionally(e));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).answer().complete(answers.get(i));
        }
    }
}
