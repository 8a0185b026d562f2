package io.rlscheduler.http.internal;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One Server-Sent Events stream on its connection. Events are written whole, from any thread; a
 * stream whose socket stays unwritable (a client not reading) longer than the write timeout is
 * closed: the client reconnects with {@code Last-Event-ID} and misses nothing. Closing it (either
 * end) runs its cleanup once (closing the follow or the listener that feeds it).
 */
final class SseStream {

    private final Channel channel;
    private final long writeTimeoutNanos;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile long lastWriteNanos = System.nanoTime();
    private volatile long unwritableSinceNanos;
    private volatile Runnable cleanup = () -> { };
    /** Events written but not yet handed to the channel; one drain task at a time hands them over together. */
    private final StringBuilder pending = new StringBuilder();
    private boolean drainScheduled;
    /** Set on the event loop while the socket is full: the drain goes on when a write completes. */
    private boolean waitingForSocket;
    /**
     * The most characters kept for a client that does not read fast enough (a replay of a long log
     * to a slow client): past it the stream is closed, and the client resumes by its Last-Event-ID.
     */
    static final int MAX_PENDING_CHARS = 8 * 1024 * 1024;

    SseStream(Channel channel, long writeTimeoutNanos) {
        this.channel = channel;
        this.writeTimeoutNanos = writeTimeoutNanos;
    }

    /** Sends the response head; the stream is open from here until {@link #end()} or a close. */
    void open(Runnable cleanup) {
        this.cleanup = cleanup;
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        head.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        head.headers().set("X-Accel-Buffering", "no");
        channel.closeFuture().addListener(f -> closed());
        channel.writeAndFlush(head);
        // Tells EventSource how long to wait before reconnecting.
        write("retry: 1000\n\n");
    }

    /** Writes one event; its data must be one line (JSON is). Returns false once the stream is closed. */
    boolean send(String id, String event, String data) {
        return write(b -> {
            if (id != null) {
                b.append("id: ").append(id).append('\n');
            }
            b.append("event: ").append(event).append('\n').append("data: ").append(data).append("\n\n");
        });
    }

    /** Writes one event that {@code event} appends, whole, straight into what is pending (no copy of its own). */
    boolean sendWith(java.util.function.Consumer<StringBuilder> event) {
        return write(event);
    }

    /** Writes a comment line, to keep an idle connection open; also closes a stream stuck too long. */
    void keepAlive(long intervalNanos) {
        long now = System.nanoTime();
        if (stuck(now)) {
            return;
        }
        if (now - lastWriteNanos >= intervalNanos) {
            write(": keep-alive\n\n");
        }
    }

    private boolean write(String text) {
        return write(b -> b.append(text));
    }

    private boolean write(java.util.function.Consumer<StringBuilder> text) {
        if (closed.get()) {
            return false;
        }
        long now = System.nanoTime();
        if (stuck(now)) {
            return false;
        }
        lastWriteNanos = now;
        synchronized (pending) {
            if (pending.length() > MAX_PENDING_CHARS) {
                pending.setLength(0);
                pending.trimToSize();
            } else {
                text.accept(pending);
                if (drainScheduled) {
                    return true; // goes out with the drain already due: one write and one flush for many events
                }
                drainScheduled = true;
                channel.eventLoop().execute(this::drain);
                return true;
            }
        }
        close(); // too far behind: what it has not got, it gets again when it resumes
        return false;
    }

    /** On the event loop: hands every pending event to the channel as one chunk. */
    private void drain() {
        drain(false);
    }

    /**
     * Hands what is pending to the socket; while the socket is full (and not {@code force}), waits
     * for a write in flight to complete instead, so that what waits stays in {@code pending}, bounded.
     */
    private void drain(boolean force) {
        if (!force && !channel.isWritable() && channel.isActive()) {
            waitingForSocket = true; // drainScheduled stays set: writes only append until the socket drains
            return;
        }
        waitingForSocket = false;
        io.netty.buffer.ByteBuf bytes;
        synchronized (pending) {
            drainScheduled = false;
            if (pending.length() == 0) {
                return;
            }
            // The JDK's encoder of a String is intrinsic: faster than a char-by-char copy of the builder.
            bytes = Unpooled.wrappedBuffer(pending.toString().getBytes(StandardCharsets.UTF_8));
            pending.setLength(0);
            if (pending.capacity() > 1 << 20) {
                pending.trimToSize();
            }
        }
        channel.writeAndFlush(new DefaultHttpContent(bytes)).addListener(f -> {
            if (waitingForSocket && channel.isActive()) {
                drain(false);
            }
        });
    }


    /** Whether the socket has been full past the write timeout; closes the stream then. */
    private boolean stuck(long now) {
        if (channel.isWritable()) {
            unwritableSinceNanos = 0;
            return false;
        }
        long since = unwritableSinceNanos;
        if (since == 0) {
            unwritableSinceNanos = now;
            return false;
        }
        if (now - since > writeTimeoutNanos) {
            channel.close();
            closed();
            return true;
        }
        return false;
    }

    /** Ends the stream after what was written: the last chunk, then the connection is closed. */
    void end() {
        if (closed.get()) {
            return;
        }
        channel.eventLoop().execute(() -> {
            drain(true);
            channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
        });
    }

    /** Closes the connection at once. */
    void close() {
        channel.close();
        closed();
    }

    boolean isClosed() {
        return closed.get();
    }

    private void closed() {
        if (closed.compareAndSet(false, true)) {
            cleanup.run();
        }
    }
}
