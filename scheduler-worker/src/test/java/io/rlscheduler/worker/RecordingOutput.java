package io.rlscheduler.worker;

import io.rlscheduler.protocol.LogStream;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** Records every line an attempt writes, with its stream. */
final class RecordingOutput implements TaskOutput {

    static final String LAUNCHER_PREFIX = "rls-launcher: ";

    /** One line as received. */
    record Line(LogStream stream, String text) {
    }

    private final List<Line> lines = new ArrayList<>();

    @Override
    public synchronized void line(LogStream stream, String text) {
        lines.add(new Line(stream, text));
    }

    synchronized List<Line> all() {
        return List.copyOf(lines);
    }

    /** Returns the stdout lines. */
    List<String> stdout() {
        return texts(LogStream.LOG_STREAM_STDOUT);
    }

    /** Returns the stderr lines, without the launcher's own diagnostics. */
    List<String> stderr() {
        return texts(LogStream.LOG_STREAM_STDERR).stream()
                .filter(t -> !t.startsWith(LAUNCHER_PREFIX))
                .collect(Collectors.toList());
    }

    /** Returns the first stdout line starting with {@code prefix}, without the prefix. */
    Optional<String> stdoutAfter(String prefix) {
        return stdout().stream().filter(t -> t.startsWith(prefix)).map(t -> t.substring(prefix.length())).findFirst();
    }

    private List<String> texts(LogStream stream) {
        return all().stream().filter(l -> l.stream() == stream).map(Line::text).collect(Collectors.toList());
    }
}
