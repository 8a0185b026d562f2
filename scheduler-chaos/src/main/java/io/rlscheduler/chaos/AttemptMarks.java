package io.rlscheduler.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The marks of all attempts of one task, by epoch, as {@code scripts/chaos_task.py} writes them
 * to {@code marks.log} in each attempt's run directory (gathered from the workers that ran them,
 * see {@link Evidence#marks}): {@code start <epoch> <time> <attempt>
 * <pid>} before an attempt trains, {@code stop <epoch> <time> <how>} when it stops
 * ({@code exit=0}, {@code signal=N}, {@code error=...}). Times are Unix times in seconds.
 * Not thread-safe; built once by {@link #parse(List)}.
 */
final class AttemptMarks {

    /** One attempt by its marks; NaN for a mark that is missing. */
    record Span(long epoch, String attempt, double start, double stop, String how) {
        @Override
        public String toString() {
            return "attempt " + attempt + " epoch " + epoch + " [" + start + ", "
                    + (Double.isNaN(stop) ? "no stop mark" : stop + " " + how) + "]";
        }
    }

    final Map<Long, Span> spans = new LinkedHashMap<>();
    final List<String> lines = new ArrayList<>();
    boolean unreadable;

    /** Returns marks that say only that the file could not be read. */
    static AttemptMarks unreadable(Exception e) {
        AttemptMarks marks = new AttemptMarks();
        marks.lines.add("unreadable: " + e);
        return marks;
    }

    /** Parses the lines of a task's marks.log files, one attempt's after the other. */
    static AttemptMarks parse(List<String> lines) {
        AttemptMarks marks = new AttemptMarks();
        try {
            for (String line : lines) {
                marks.lines.add(line);
                String[] f = line.trim().split(" ");
                if (f.length < 3) {
                    continue;
                }
                long epoch = Long.parseLong(f[1]);
                double at = Double.parseDouble(f[2]);
                Span s = marks.spans.getOrDefault(epoch, new Span(epoch, "?", Double.NaN, Double.NaN, "?"));
                if (f[0].equals("start")) {
                    if (!Double.isNaN(s.start())) {
                        // Two start marks for one epoch: two processes ran for one lease.
                        marks.spans.put(-epoch, new Span(-epoch, "second start of epoch " + epoch, at, Double.NaN, "?"));
                        continue;
                    }
                    s = new Span(epoch, f.length > 3 ? f[3] : "?", at, s.stop(), s.how());
                } else if (f[0].equals("stop")) {
                    s = new Span(epoch, s.attempt(), s.start(), at, f.length > 3 ? f[3] : "?");
                }
                marks.spans.put(epoch, s);
            }
        } catch (RuntimeException e) {
            marks.lines.add("unreadable: " + e);
            marks.unreadable = true;
        }
        return marks;
    }

    /**
     * Returns a description of the first overlap found, or null. Attempts are ordered by their
     * start marks; each must start after every earlier one stopped. An attempt without a stop mark
     * that is followed by another attempt cannot be shown to have stopped first, so it counts as
     * overlapping. An attempt without any mark never started training (the start mark is written
     * before it) and cannot overlap.
     */
    String overlap() {
        if (unreadable) {
            return "marks unreadable: " + lines.get(lines.size() - 1);
        }
        List<Span> byStart = new ArrayList<>(spans.values());
        byStart.removeIf(s -> Double.isNaN(s.start()));
        byStart.sort(Comparator.comparingDouble(Span::start));
        Span latest = null; // the earlier attempt that stopped last
        for (Span s : byStart) {
            if (latest != null) {
                if (Double.isNaN(latest.stop())) {
                    return "epoch " + latest.epoch() + " has no stop mark and epoch " + s.epoch() + " started after it";
                }
                if (s.start() < latest.stop()) {
                    return String.format(Locale.ROOT, "epoch %d started at %.6f before epoch %d stopped at %.6f",
                            s.epoch(), s.start(), latest.epoch(), latest.stop());
                }
            }
            if (latest == null || Double.isNaN(s.stop()) || s.stop() > latest.stop()) {
                latest = s;
            }
        }
        for (Span s : spans.values()) {
            if (Double.isNaN(s.start())) {
                return "epoch " + s.epoch() + " has a stop mark but no start mark";
            }
        }
        return null;
    }

    /** Returns how many attempts trained to the end ({@code exit=0}). */
    long completed() {
        return spans.values().stream().filter(s -> "exit=0".equals(s.how())).count();
    }

    /** Returns the attempts in one short line: {@code 1:term 2:done} (done: trained to the end; term: stopped by a signal). */
    String summary() {
        StringBuilder b = new StringBuilder();
        for (Span s : spans.values()) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(s.attempt()).append(Double.isNaN(s.stop()) ? ":?" : s.how().equals("exit=0") ? ":done"
                    : s.how().startsWith("signal=") ? ":term" : ":" + s.how());
        }
        return b.length() == 0 ? "-" : b.toString();
    }
}
