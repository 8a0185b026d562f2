package io.rlscheduler.http.internal;

import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** The open streams: their keep-alive comments, the closing of stuck ones, and closing all at shutdown. */
final class Streams {

    private final Set<SseStream> open = ConcurrentHashMap.newKeySet();
    private final Settings settings;

    Streams(EventExecutor timer, Settings settings) {
        this.settings = settings;
        long tick = Math.max(1000, Math.min(settings.sseKeepAlive().toMillis(), settings.sseWriteTimeout().toMillis()) / 2);
        long interval = settings.sseKeepAlive().toNanos();
        timer.scheduleWithFixedDelay(() -> open.forEach(s -> {
            try {
                s.keepAlive(interval);
            } catch (Throwable e) { // one stream's failure must not end the keep-alives of all
                s.close();
            }
        }), tick, tick, TimeUnit.MILLISECONDS);
    }

    /** Opens a stream on the channel; {@code cleanup} runs once when it closes, either end. */
    SseStream open(Channel channel, Runnable cleanup) {
        SseStream stream = new SseStream(channel, settings.sseWriteTimeout().toNanos());
        open.add(stream);
        stream.open(() -> {
            open.remove(stream);
            cleanup.run();
        });
        return stream;
    }

    int size() {
        return open.size();
    }

    void closeAll() {
        open.forEach(SseStream::close);
    }
}
