package io.rlscheduler.chaos;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * What a chaos run tells: timestamped lines (seconds since the run began) on the console and in
 * the workdir's {@code chaos.log}, and the result table on the console only. Thread-safe: the
 * submitter and the run's own thread both write.
 */
final class RunLog {

    private final PrintStream out;
    private final long startNanos = System.nanoTime();
    private volatile Path file;

    RunLog(PrintStream out) {
        this.out = out;
    }

    /** Returns {@link System#nanoTime()} at the run's start. */
    long startNanos() {
        return startNanos;
    }

    /** Returns the seconds since the run's start. */
    double elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** Starts a new {@code file} (deleting an older one) that every later {@link #say} line goes to. */
    void writeTo(Path file) throws IOException {
        Files.deleteIfExists(file);
        this.file = file;
    }

    /** Prints a timestamped line to the console and the file. */
    void say(String format, Object... args) {
        String line = String.format(Locale.ROOT, "[%6.1fs] ", elapsedSeconds()) + String.format(Locale.ROOT, format, args);
        console(line);
        append(line);
    }

    /** Prints a line, as it is, to the console and the file. */
    void sayPlain(String line) {
        console(line);
        append(line);
    }

    /** Prints to the console only. */
    void printf(String format, Object... args) {
        synchronized (out) {
            out.printf(Locale.ROOT, format, args);
            out.flush();
        }
    }

    private void console(String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    private void append(String line) {
        Path f = file;
        if (f == null) {
            return;
        }
        try {
            Files.writeString(f, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            // The console has it.
        }
    }
}
