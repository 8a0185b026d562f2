package io.rlscheduler.master.internal.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Reads LF-terminated UTF-8 lines of a file from a byte offset, and knows the byte offset after
 * each line, so a reader can stop at an exact offset and later go on from it. Not thread-safe.
 */
final class LogLineReader implements Closeable {

    private static final int BUFFER_SIZE = 64 * 1024;

    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_SIZE);
    private long readPosition;
    private long consumed;
    private byte[] line = new byte[256];
    private int lineLength;

    private LogLineReader(FileChannel channel, long from) {
        this.channel = channel;
        this.readPosition = from;
        this.consumed = from;
        buffer.flip();
    }

    /** Opens {@code path} for reading from byte offset {@code from}; never follows a symbolic link. */
    static LogLineReader open(Path path, long from) throws IOException {
        return new LogLineReader(FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS), from);
    }

    /** Returns the offset just after the last complete line returned: where the next line starts. */
    long consumed() {
        return consumed;
    }

    /**
     * Returns the next line, without its LF, if it ends (LF included) at or before byte offset
     * {@code limit}; null when there is no such line: the file, or the limit, is reached (a line
     * that is cut short there is not returned, {@link #consumed()} stays before it, and a later
     * call with a higher limit reads it again from its start).
     */
    String next(long limit) throws IOException {
        lineLength = 0;
        while (true) {
            if (!buffer.hasRemaining()) {
                if (readPosition >= limit) {
                    return rewind();
                }
                buffer.clear();
                buffer.limit((int) Math.min(BUFFER_SIZE, limit - readPosition));
                int read = channel.read(buffer, readPosition);
                buffer.flip();
                if (read <= 0) {
                    return rewind();
                }
                readPosition += read;
            }
            byte[] bytes = buffer.array();
            int start = buffer.position();
            int end = buffer.limit();
            int at = start;
            while (at < end && bytes[at] != '\n') {
                at++;
            }
            append(bytes, start, at - start);
            if (at < end) {
                buffer.position(at + 1);
                consumed += lineLength + 1;
                return new String(line, 0, lineLength, StandardCharsets.UTF_8);
            }
            buffer.position(end);
        }
    }

    /** Forgets a line cut short, so the next call reads it again from its start. */
    private String rewind() {
        lineLength = 0;
        readPosition = consumed;
        buffer.clear().flip();
        return null;
    }

    private void append(byte[] bytes, int from, int length) {
        if (lineLength + length > line.length) {
            line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + length));
        }
        System.arraycopy(bytes, from, line, lineLength, length);
        lineLength += length;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
