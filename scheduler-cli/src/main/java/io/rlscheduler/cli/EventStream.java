package io.rlscheduler.cli;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One Server-Sent Events connection, parsed by the rules of the HTML standard (fields {@code id},
 * {@code event}, {@code data}; comment lines; an empty line dispatches). A daemon thread reads
 * the socket so that {@link #next(long)} can wait with a bound: the caller notices a connection
 * that went silent (the server sends a comment every 15 s) and can update a progress line.
 */
final class EventStream implements Closeable {
    /** One event: {@code id} is the id this event carried (or null), {@code event} defaults to "message". */
    record Event(String id, String event, String data) {
    }

    /** What {@link #next(long)} returns besides events. */
    enum Signal {
        /** Nothing arrived within the wait. */
        NOTHING,
        /** A comment (a keep-alive) arrived: the connection is alive. */
        ALIVE,
        /** The server closed the stream. */
        CLOSED,
        /** Reading failed (connection reset, ...). */
        FAILED
    }

    private static final Object ALIVE_MARK = new Object();
    private static final Object CLOSED_MARK = new Object();

    private final InputStream in;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private volatile boolean closed;
    private Object last;

    EventStream(InputStream in) {
        this.in = in;
        Thread reader = new Thread(this::read, "rls-sse");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Waits up to {@code timeoutMillis} for the next item: an {@link Event}, or a {@link Signal}.
     * After CLOSED or FAILED every call returns the same.
     */
    Object next(long timeoutMillis) {
        if (last == Signal.CLOSED || last == Signal.FAILED) {
            return last;
        }
        Object item;
        try {
            item = queue.poll(Math.max(0, timeoutMillis), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            item = null;
        }
        if (item == null) {
            return Signal.NOTHING;
        }
        if (item == ALIVE_MARK) {
            return Signal.ALIVE;
        }
        if (item == CLOSED_MARK) {
            last = Signal.CLOSED;
            return last;
        }
        if (item instanceof IOException) {
            last = Signal.FAILED;
            return last;
        }
        return item;
    }

    private void read() {
        String id = null;
        String event = null;
        StringBuilder data = null;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) {
                    if (data != null) {
                        queue.add(new Event(id, event == null ? "message" : event, data.toString()));
                    }
                    id = null;
                    event = null;
                    data = null;
                    continue;
                }
                if (line.startsWith(":")) {
                    queue.add(ALIVE_MARK);
                    continue;
                }
                int colon = line.indexOf(':');
                String field = colon < 0 ? line : line.substring(0, colon);
                String value = colon < 0 ? "" : line.substring(colon + 1);
                if (value.startsWith(" ")) {
                    value = value.substring(1);
                }
                switch (field) {
                    case "id":
                        id = value.isEmpty() ? null : value;
                        break;
                    case "event":
                        event = value;
                        break;
                    case "data":
                        if (data == null) {
                            data = new StringBuilder(value);
                        } else {
                            data.append('\n').append(value);
                        }
                        break;
                    default:
                        // "retry" and unknown fields: ignored
                }
            }
            queue.add(CLOSED_MARK);
        } catch (IOException e) {
            queue.add(closed ? CLOSED_MARK : e);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            in.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
