package io.rlscheduler.core.internal;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.core.TaskEvent;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running subscription to the event stream, made by {@link LeaseCore#subscribe}. It reads with
 * blocking XREAD on its own connection and thread, remembers the id of the last event it
 * delivered, and resumes after it when the connection comes back. Thread-safe; {@link #close()}
 * stops it and waits for its thread.
 *
 * <p><b>Gaps.</b> The stream is trimmed to about {@code eventStreamMaxLength} entries, oldest
 * first. A subscription that falls further behind than that (its connection to Redis away while
 * others keep writing, or a listener too slow for the rate of events) would resume after events it
 * never saw. So it reads in two steps: a blocking XREAD of one entry only waits for something to
 * read; then one transaction (MULTI/EXEC: XRANGE of the stream's oldest entry, XRANGE of the next
 * entries after the last event delivered, XLEN) reads the entries and what the stream holds at
 * the same instant, so that trimming between the two cannot be mistaken for a loss. If the oldest
 * entry lies past the last event delivered, events in between were trimmed unread, and the
 * listener gets a {@link TaskEvent.Kind#GAP} event before the entries read, with the last event
 * delivered ({@code after}) and the first entry read ({@code next}: the events delivered go on
 * from there); so too when an entry of several events was trimmed after only some of them were
 * delivered. While reads come back full, the next one skips the wait. Redis 6.2 keeps no
 * record of what it trimmed, so a gap event can be a false alarm: when exactly the last event
 * delivered, and nothing after it, was trimmed (the subscription was at the trimming edge); and
 * for a subscription from the stream's start, see {@link #trimmedUnread}. A listener that keeps
 * state from events re-reads that state from Redis on a gap.
 */
public final class EventSubscription implements AutoCloseable {

    /** The type of the event a gap is delivered as ({@link TaskEvent.Kind#GAP}); never written to the stream. */
    static final String GAP_TYPE = "gap";

    private static final Logger log = LoggerFactory.getLogger(EventSubscription.class);
    private static final long BLOCK_MILLIS = 500;
    private static final int BATCH = 256;

    private final StatefulRedisConnection<String, String> connection;
    private final String stream;
    private final Consumer<TaskEvent> listener;
    private final Thread thread;
    private volatile boolean running = true;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile String lastId;
    /** The stream's trimming length (entries), for the check of a subscription from its start. */
    private final long maxLength;
    /**
     * For a subscription from the stream's start ("0", or "$" on an empty stream): the oldest
     * entry when it began, or null when the stream was empty. Set before the thread starts.
     */
    private String startFloor;
    /**
     * The last event delivered of an entry trimmed before the rest of it was read: those events
     * are lost, and the next read reports it. Read and written by the subscription's thread only.
     */
    private String lostAfter;

    private EventSubscription(RedisClient client, String stream, String afterId, long maxLength, Consumer<TaskEvent> listener) {
        this.connection = client.connect();
        this.stream = stream;
        this.maxLength = maxLength;
        this.lastId = afterId;
        this.listener = listener;
        this.thread = new Thread(this::loop, "rls-events-" + stream);
        this.thread.setDaemon(true);
    }

    static EventSubscription start(RedisClient client, String stream, String afterId, long maxLength,
                                   Consumer<TaskEvent> listener) {
        Objects.requireNonNull(afterId, "afterId");
        Objects.requireNonNull(listener, "listener");
        EventIds.requireValid(afterId);
        EventSubscription subscription = new EventSubscription(client, stream, afterId, maxLength, listener);
        RedisCommands<String, String> redis = subscription.connection.sync();
        if ("$".equals(afterId)) {
            // Pin "only new events" to the stream's current end now, so nothing between start and
            // the first read is missed.
            List<StreamMessage<String, String>> last = redis.xrevrange(stream, Range.create("-", "+"), Limit.create(0, 1));
            subscription.lastId = last.isEmpty() ? "0" : last.get(0).getId();
        }
        if (fromStart(subscription.lastId)) {
            List<StreamMessage<String, String>> first = redis.xrange(stream, Range.create("-", "+"), Limit.create(0, 1));
            subscription.startFloor = first.isEmpty() ? null : first.get(0).getId();
        }
        subscription.thread.start();
        return subscription;
    }

    /** Returns the id of the last event delivered, or the starting id if none was. */
    public String getLastId() {
        return lastId;
    }

    /** What one transaction read: the entries after a position, the stream's oldest entry (null when empty) and its length. */
    private record Read(List<StreamMessage<String, String>> entries, String oldest, long length) {
    }

    /** Reads up to {@value #BATCH} entries after {@code after}, with the stream's oldest entry and length, in one transaction. */
    private Read readAfter(String after) throws Exception {
        RedisAsyncCommands<String, String> async = connection.async();
        async.multi();
        async.xrange(stream, Range.create("-", "+"), Limit.create(0, 1));
        async.xrange(stream, Range.create(EventIds.successor(after), "+"), Limit.create(0, BATCH));
        async.xlen(stream);
        long timeout = connection.getTimeout().toMillis(); // 0 or less: no timeout, as Lettuce's sync API reads it
        TransactionResult tx = timeout > 0 ? async.exec().get(timeout, TimeUnit.MILLISECONDS) : async.exec().get();
        if (tx.wasDiscarded() || tx.size() != 3) {
            throw new IllegalStateException("the read transaction on " + stream + " was discarded");
        }
        List<StreamMessage<String, String>> first = tx.get(0);
        List<StreamMessage<String, String>> entries = tx.get(1);
        Long length = tx.get(2);
        return new Read(entries, first.isEmpty() ? null : first.get(0).getId(), length);
    }

    private void loop() {
        RedisCommands<String, String> redis = connection.sync();
        long backoffNanos = TimeUnit.MILLISECONDS.toNanos(10);
        boolean full = false; // the last read came back full: read on without waiting
        while (running) {
            try {
                String after = lastId;
                int inEntry = after.indexOf(EventIds.SEPARATOR);
                if (inEntry >= 0) {
                    // Resuming inside an entry of several transitions: the rest of that entry first.
                    String entryId = after.substring(0, inEntry);
                    List<StreamMessage<String, String>> entry = redis.xrange(stream, Range.create(entryId, entryId));
                    if (entry.isEmpty()) {
                        log.warn("event stream entry {} was trimmed before it was read whole; resuming after it", entryId);
                        lostAfter = after; // told with the next read, with the oldest entry kept then
                        lastId = entryId;
                    } else if (!deliver(entry.get(0), EventIds.indexOf(after))) {
                        return;
                    }
                    continue;
                }
                if (!full && redis.xread(XReadArgs.Builder.block(BLOCK_MILLIS).count(1),
                        XReadArgs.StreamOffset.from(stream, after)).isEmpty()) {
                    continue; // nothing new yet
                }
                Read read = readAfter(after);
                List<StreamMessage<String, String>> messages = read.entries();
                full = messages.size() == BATCH;
                if (!messages.isEmpty()) {
                    String next = messages.get(0).getId();
                    String lost = lostAfter != null ? lostAfter : trimmedUnread(after, read) ? after : null;
                    if (lost != null) {
                        log.warn("events of stream {} after {} up to {} were trimmed before this subscription read them",
                                stream, lost, next);
                        if (!gap(lost, next)) {
                            return;
                        }
                        lostAfter = null;
                    }
                }
                for (StreamMessage<String, String> m : messages) {
                    if (!deliver(m, 0)) {
                        return;
                    }
                }
                backoffNanos = TimeUnit.MILLISECONDS.toNanos(10);
            } catch (Exception e) {
                // An interrupt from outside (close() does not interrupt) must neither stop the
                // subscription silently nor, left set, make every later call fail at once: cleared.
                boolean interrupted = Thread.interrupted() || e instanceof InterruptedException;
                if (!running) {
                    return;
                }
                if (interrupted) {
                    log.warn("the event thread of {} was interrupted; the subscription goes on", stream);
                }
                log.warn("reading events from {} failed ({}); retrying after {} ms", stream, e.toString(),
                        TimeUnit.NANOSECONDS.toMillis(backoffNanos));
                LockSupport.parkNanos(backoffNanos); // back off while Redis is away; not a synchronisation
                backoffNanos = Math.min(backoffNanos * 2, TimeUnit.SECONDS.toNanos(2));
            }
        }
    }

    /**
     * Delivers the events of one stream entry after the first {@code skip} of them, advancing
     * {@link #lastId} after each. An entry of type {@code tasks} holds several task transitions
     * (one script run's, see {@link TaskEvent#getStreamId()}); any other entry is one event.
     *
     * @return false when the subscription was closed meanwhile
     */
    private boolean deliver(StreamMessage<String, String> m, int skip) {
        Map<String, String> body = m.getBody();
        String type = body.getOrDefault("type", "");
        if (!EventIds.BATCH_TYPE.equals(type)) {
            if (!running) {
                return false;
            }
            accept(ValueFactory.get().taskEvent(m.getId(), type, body, false));
            lastId = m.getId();
            return true;
        }
        int n = EventIds.count(body);
        for (int i = skip + 1; i <= n; i++) {
            if (!running) {
                return false;
            }
            String id = i == n ? m.getId() : m.getId() + EventIds.SEPARATOR + i;
            Map<String, String> fields = EventIds.transition(body.get(Integer.toString(i)));
            if (fields == null) {
                log.error("event {} of stream entry {} is malformed; skipped: {}", i, m.getId(), body.get(Integer.toString(i)));
            } else {
                accept(ValueFactory.get().taskEvent(id, "task", fields, false));
            }
            lastId = id;
        }
        if (n == 0) {
            log.error("stream entry {} of type {} has no valid count; skipped: {}", m.getId(), type, body);
        }
        lastId = m.getId(); // also when resumed after an event beyond the entry's count
        return true;
    }

    /** Whether a position is the stream's start ("0", "0-0"). */
    private static boolean fromStart(String id) {
        return id.indexOf(EventIds.SEPARATOR) < 0 && EventIds.compareEntries(id, "0") == 0;
    }

    /**
     * Whether entries after {@code after} were trimmed before the read that just returned entries
     * after it, given the oldest entry and the length the stream had at that read (the same
     * transaction). Trimming removes the
     * oldest entries first (and nothing here deletes others): if the oldest kept one lies past
     * the last event delivered, whatever lay between is gone. From the stream's start, the oldest
     * entry when the subscription began stands for the last delivered; when the stream was empty
     * then, only a stream that has since grown to its trimming length can have lost entries (so a
     * subscription that waited through that many entries before its first read is told of a gap
     * that may not be one).
     */
    private boolean trimmedUnread(String after, Read read) {
        if (read.oldest() == null) {
            return false;
        }
        if (!fromStart(after)) {
            return EventIds.compareEntries(read.oldest(), after) > 0;
        }
        return startFloor != null ? EventIds.compareEntries(read.oldest(), startFloor) > 0 : read.length() >= maxLength;
    }

    /**
     * Tells the listener that events after {@code after} and before {@code next} may never reach it.
     *
     * @return false when the subscription was closed meanwhile
     */
    private boolean gap(String after, String next) {
        if (!running) {
            return false;
        }
        Map<String, String> fields = new java.util.LinkedHashMap<>(4);
        fields.put("type", GAP_TYPE);
        fields.put("after", after);
        fields.put("next", next);
        accept(ValueFactory.get().taskEvent(after, GAP_TYPE, fields, false));
        return true;
    }

    private void accept(TaskEvent event) {
        try {
            listener.accept(event);
        } catch (RuntimeException e) {
            log.error("event listener failed on event {}; continuing with the next", event.getStreamId(), e);
        }
    }

    /** Stops the subscription, closes its connection and waits up to 5 s for its thread. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        running = false;
        connection.close();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
