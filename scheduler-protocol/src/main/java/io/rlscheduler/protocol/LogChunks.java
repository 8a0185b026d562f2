package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Helpers for the {@link LogChunk}s a {@link LogBatch} carries lines in: runs of consecutive lines
 * of one stream as one block of UTF-8 bytes, each line ended by LF.
 *
 * <p>The conversions from and to the deprecated {@link LogLine} ({@link #fromLines},
 * {@link #toLines}) serve only code that still builds or reads lines one message each; protocol 1
 * carries chunks alone, and a master refuses a batch with lines.
 *
 * <p>This class is not instantiable.
 */
public final class LogChunks {

    private LogChunks() {
    }

    /** Returns the number of lines in a chunk's text: its LF bytes. */
    public static int lineCount(ByteString text) {
        Objects.requireNonNull(text, "text");
        int count = 0;
        for (int i = 0, n = text.size(); i < n; i++) {
            if (text.byteAt(i) == '\n') {
                count++;
            }
        }
        return count;
    }

    /**
     * Returns the chunk's lines as {@link LogLine}s, each with the chunk's stream and time; a last
     * line without its LF is kept too.
     *
     * @deprecated lines travel as chunks; a batch with lines is refused
     */
    @Deprecated(forRemoval = true)
    public static List<LogLine> toLines(LogChunk chunk) {
        byte[] text = chunk.getText().toByteArray();
        List<LogLine> lines = new ArrayList<>();
        long sequence = chunk.getFirstSequence();
        int start = 0;
        for (int i = 0; i <= text.length; i++) {
            if (i == text.length ? i > start : text[i] == '\n') {
                lines.add(LogLine.newBuilder().setSequence(sequence++).setStreamValue(chunk.getStreamValue())
                        .setTimestampUnixMs(chunk.getTimestampUnixMs())
                        .setText(new String(text, start, i - start, StandardCharsets.UTF_8)).build());
                start = i + 1;
            }
        }
        return lines;
    }

    /**
     * Returns lines as chunks: sorted by sequence number, each run of consecutive numbers of one
     * stream one chunk. CR and LF inside a line's text become spaces (LF ends a line in a chunk).
     * Repeated numbers start a new chunk, which overlaps the one before (a receiver skips lines it
     * already has).
     *
     * @deprecated lines travel as chunks; a batch with lines is refused
     */
    @Deprecated(forRemoval = true)
    public static List<LogChunk> fromLines(List<LogLine> lines) {
        Objects.requireNonNull(lines, "lines");
        List<LogLine> ordered = lines;
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).getSequence() < lines.get(i - 1).getSequence()) {
                ordered = new ArrayList<>(lines);
                ordered.sort(Comparator.comparingLong(LogLine::getSequence));
                break;
            }
        }
        List<LogChunk> chunks = new ArrayList<>();
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        LogLine first = null;
        LogLine previous = null;
        for (LogLine line : ordered) {
            if (previous != null && (line.getSequence() != previous.getSequence() + 1
                    || line.getStreamValue() != previous.getStreamValue())) {
                chunks.add(chunk(first, text));
                first = null;
            }
            if (first == null) {
                first = line;
                text.reset();
            }
            String one = line.getText();
            if (one.indexOf('\n') >= 0 || one.indexOf('\r') >= 0) {
                one = one.replace('\n', ' ').replace('\r', ' ');
            }
            text.writeBytes(one.getBytes(StandardCharsets.UTF_8));
            text.write('\n');
            previous = line;
        }
        if (first != null) {
            chunks.add(chunk(first, text));
        }
        return chunks;
    }

    private static LogChunk chunk(LogLine first, ByteArrayOutputStream text) {
        return LogChunk.newBuilder().setFirstSequence(first.getSequence()).setStreamValue(first.getStreamValue())
                .setTimestampUnixMs(first.getTimestampUnixMs()).setText(ByteString.copyFrom(text.toByteArray()))
                .build();
    }
}
