package io.rlscheduler.http.internal;

import io.netty.buffer.Unpooled;
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
import java.nio.charset.StandardCharsets;
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
        StringBuilder b = new StringBuilder(data.length() + 48);
        if (id != null) {
            b.append("id: ").append(id).append('\n');
        }
        b.append("event: ").append(event).append('\n').append("data: ").append(data).append("\n\n");
        return write(b.toString());
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
        if (closed.get()) {
            return false;
        }
        long now = System.nanoTime();
        if (stuck(now)) {
            return false;
        }
        lastWriteNanos = now;
        channel.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8)));
        return true;
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
        channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
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
