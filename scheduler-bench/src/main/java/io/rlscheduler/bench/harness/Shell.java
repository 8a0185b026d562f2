package io.rlscheduler.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs a command of the machine's own (cp, sync) as a benchmark's baseline or between its runs,
 * through bash, whose {@code times} then reports the CPU the command used.
 */
final class Shell {

    /** bash's {@code times} line of its children: user and system time, as {@code 0m0.012s 0m0.190s}. */
    private static final Pattern TIMES = Pattern.compile("(\\d+)m([0-9.]+)s (\\d+)m([0-9.]+)s");

    private Shell() {
    }

    /** What a command took: wall seconds from its start to its exit, and its CPU seconds (user + system). */
    record Timing(double seconds, double cpuSeconds) {
    }

    /**
     * Runs the command, waits for it and returns the seconds from its start to its exit.
     *
     * @throws IOException if it cannot start, or exits with a status other than 0 (its output in the message)
     */
    static double seconds(String... command) throws IOException, InterruptedException {
        return run(command).seconds();
    }

    /**
     * Runs the command, waits for it and returns its wall and CPU time.
     *
     * @throws IOException if it cannot start, or exits with a status other than 0 (its output in the message)
     */
    static Timing run(String... command) throws IOException, InterruptedException {
        List<String> line = new ArrayList<>(List.of("bash", "-c", "\"$@\" && times", "bash"));
        line.addAll(Arrays.asList(command));
        long began = System.nanoTime();
        Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int status = process.waitFor();
        double seconds = (System.nanoTime() - began) / 1e9;
        if (status != 0) {
            throw new IOException(Arrays.toString(command) + " exited " + status + ": " + output.trim());
        }
        String[] lines = output.trim().split("\n");
        Matcher m = TIMES.matcher(lines[lines.length - 1]);
        if (!m.find()) {
            throw new IOException("no CPU times after " + Arrays.toString(command) + ": " + output.trim());
        }
        double cpu = Integer.parseInt(m.group(1)) * 60 + Double.parseDouble(m.group(2))
                + Integer.parseInt(m.group(3)) * 60 + Double.parseDouble(m.group(4));
        return new Timing(seconds, cpu);
    }
}
