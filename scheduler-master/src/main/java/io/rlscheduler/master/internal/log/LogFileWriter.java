package io.rlscheduler.master.internal.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends to the log files of one I/O thread's tasks. It keeps at most {@code maxOpenFiles} of
 * them open, closing the least recently used first; a file is also closed when its attempt
 * ends. A file is appended to only while it is as long as this master last wrote or read it:
 * if another master sharing the directory wrote to it, the task's state is read again first
 * ({@link LogRecovery}). Files are created and written without following symbolic links.
 * Confined to the I/O thread.
 */
final class LogFileWriter {

    private static final Logger log = LoggerFactory.getLogger(LogFileWriter.class);

    private final int maxOpenFiles;
    /** Files open for appending, over all I/O threads. */
    private final AtomicInteger openFiles;
    /** The states with an open writer, least recently used first: {@link #trim} closes from the front. */
    private final LinkedHashMap<TaskLogState, Boolean> writing = new LinkedHashMap<>(64, 0.75f, true);

    LogFileWriter(int maxOpenFiles, AtomicInteger openFiles) {
        this.maxOpenFiles = maxOpenFiles;
        this.openFiles = openFiles;
    }

    /** Returns the task's append channel, opening it (and creating the file) if needed. */
    FileChannel open(TaskLogState st) throws IOException {
        if (st.writer != null) {
            return st.writer;
        }
        for (int tries = 0;; tries++) {
            FileChannel channel = FileChannel.open(st.path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS);
            long size;
            try {
                size = channel.size();
            } catch (IOException e) {
                channel.close();
                throw e;
            }
            if (size != st.length && st.incompleteTail > 0 && size == st.length + st.incompleteTail) {
                // A line the last read found without its end: this master appends now, so it goes.
                log.warn("task {}: log file {} ends with an incomplete line ({} bytes); cutting it off, the"
                        + " worker resends it", st.taskId, st.path, st.incompleteTail);
                try {
                    channel.truncate(st.length);
                } catch (IOException e) {
                    channel.close();
                    throw e;
                }
                st.incompleteTail = 0;
                size = st.length;
            }
            if (size == st.length) {
                st.writer = channel;
                writing.put(st, Boolean.TRUE);
                openFiles.incrementAndGet();
                return channel;
            }
            channel.close();
            if (tries > 0) {
                throw new IOException("log file " + st.path + " keeps changing outside the log manager");
            }
            log.warn("task {}: log file {} changed outside the log manager ({} bytes, expected {}); reading it"
                    + " again", st.taskId, st.path, size, st.length);
            LogRecovery.recover(st);
        }
    }

    /**
     * Writes the encoder's output to the task's open file. If that fails the file is closed and
     * the state marked to be read again: what part of the output reached the file is not known.
     */
    void append(TaskLogState st, LineEncoder out) throws IOException {
        ByteBuffer buffer = out.buffer();
        try {
            while (buffer.hasRemaining()) {
                st.writer.write(buffer);
            }
        } catch (IOException e) {
            st.needsRecovery = true;
            close(st);
            throw e;
        }
        st.length += out.size();
    }

    /** Marks the task's file as most recently used, if it is open. */
    void touch(TaskLogState st) {
        if (st.writer != null) {
            writing.get(st);
        }
    }

    /**
     * Returns the file's size now: one fstat of the open file, else {@code java.io.File.length},
     * which is 0 for a missing file (most tasks have none: an attempt that prints nothing makes
     * none) without the exception that {@code Files.readAttributes} throws, and builds a stack
     * trace for, on every such call. It follows links, as recovery's check for the file does; a
     * file that cannot be read counts as missing, and the write that comes next meets the error.
     */
    long size(TaskLogState st) throws IOException {
        if (st.writer != null) {
            return st.writer.size();
        }
        return st.path.toFile().length();
    }

    /** Forces the task's open file to disk, if one is open. A failure is logged. */
    void force(TaskLogState st) {
        if (st.writer == null) {
            return;
        }
        try {
            st.writer.force(false);
        } catch (IOException e) {
            log.warn("task {}: cannot force log file to disk: {}", st.taskId, e.toString());
        }
    }

    /** Closes the task's file, if open. */
    void close(TaskLogState st) {
        if (st.writer == null) {
            return;
        }
        try {
            st.writer.close();
        } catch (IOException e) {
            log.warn("task {}: closing log file: {}", st.taskId, e.toString());
        }
        st.writer = null;
        writing.remove(st);
        openFiles.decrementAndGet();
    }

    /** Closes the least recently used files over the limit. */
    void trim() {
        while (writing.size() > maxOpenFiles) {
            close(writing.keySet().iterator().next());
        }
    }
}
