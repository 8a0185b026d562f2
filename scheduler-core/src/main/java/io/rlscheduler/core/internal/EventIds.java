package io.rlscheduler.core.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The event stream's entries of several task transitions and the ids of the events in them.
 * A script run that makes more than one transition writes them up to 64 to an entry (lib.lua's
 * {@code flush_events}; a lone one left over, the 65th, is written as a single transition is):
 * {@code type=tasks}, {@code n=<count>}, then fields {@code "1"} to
 * {@code "n"}, each one transition as text, tab-separated: task, from, to, epoch, worker,
 * attempt, via, at, reason (the reason last: the only field that may hold a tab). The last event
 * of such an entry has the entry's id; event {@code i} before it has {@code <entry id>#i}, so that
 * a subscription can resume after any event.
 */
final class EventIds {

    static final String BATCH_TYPE = "tasks";
    static final char SEPARATOR = '#';
    /** As lib.lua's EVENTS_PER_ENTRY: at most this many transitions share an entry. */
    static final int MAX_PER_ENTRY = 64;

    private static final Pattern VALID = Pattern.compile("\\$|0|\\d{1,19}(-\\d{1,19}(#[1-9]\\d{0,8})?)?");
    private static final String[] FIELDS = {"task", "from", "to", "epoch", "worker", "attempt", "via", "at", "lines", "exit",
            "reason"};

    private EventIds() {
    }

    /**
     * Checks a position to subscribe after: {@code $} (only new events), {@code 0} (from the
     * start), a stream entry id ({@code ms} or {@code ms-seq}), or an event id of an entry of
     * several ({@code ms-seq#i}).
     *
     * @throws IllegalArgumentException if it is none of these
     */
    static String requireValid(String afterId) {
        if (!VALID.matcher(afterId).matches()) {
            throw new IllegalArgumentException("afterId must be '$', '0', a stream id 'ms-seq' or an event id 'ms-seq#i'"
                    + " (as TaskEvent.getStreamId() returns), was '" + afterId + "'");
        }
        return afterId;
    }

    /**
     * Compares the stream entries two positions are in, as Redis orders ids: {@code ms-seq} as two
     * unsigned numbers, {@code ms} as {@code ms-0}, an event id {@code ms-seq#i} as its entry, and
     * {@code 0} as the smallest. Not for {@code $}.
     */
    static int compareEntries(String a, String b) {
        long[] x = entryOf(a);
        long[] y = entryOf(b);
        int c = Long.compareUnsigned(x[0], y[0]);
        return c != 0 ? c : Long.compareUnsigned(x[1], y[1]);
    }

    private static long[] entryOf(String id) {
        int end = id.indexOf(SEPARATOR);
        String entry = end < 0 ? id : id.substring(0, end);
        int dash = entry.indexOf('-');
        return dash < 0 ? new long[] {Long.parseUnsignedLong(entry), 0}
                : new long[] {Long.parseUnsignedLong(entry.substring(0, dash)), Long.parseUnsignedLong(entry.substring(dash + 1))};
    }

    /**
     * Returns the first entry id after the entry a position is in ({@code ms-seq} + 1, as XREAD
     * counts "after"), as an inclusive XRANGE start.
     */
    static String successor(String id) {
        long[] e = entryOf(id);
        return e[1] == -1L ? Long.toUnsignedString(e[0] + 1) + "-0" : Long.toUnsignedString(e[0]) + "-" + Long.toUnsignedString(e[1] + 1);
    }

    /** Returns i of an event id {@code <entry id>#i}. */
    static int indexOf(String eventId) {
        return Integer.parseInt(eventId.substring(eventId.indexOf(SEPARATOR) + 1));
    }

    /** Returns the number of transitions an entry of type {@code tasks} holds, or 0 if its count is not valid. */
    static int count(Map<String, String> body) {
        String n = body.get("n");
        if (n == null || n.isEmpty() || n.length() > 3) {
            return 0;
        }
        for (int i = 0; i < n.length(); i++) {
            if (n.charAt(i) < '0' || n.charAt(i) > '9') {
                return 0;
            }
        }
        int count = Integer.parseInt(n);
        return count <= MAX_PER_ENTRY ? count : 0;
    }

    /**
     * Returns the fields of one transition of an entry of several, as a single-transition entry
     * has them (type, task, from, to, epoch, worker, attempt, reason, via, at, and lines and exit on
     * an end its worker recorded), or null when the text is absent or has fewer than eleven parts.
     */
    static Map<String, String> transition(String text) {
        if (text == null) {
            return null;
        }
        String[] parts = new String[FIELDS.length];
        int start = 0;
        for (int i = 0; i < FIELDS.length - 1; i++) {
            int tab = text.indexOf('\t', start);
            if (tab < 0) {
                return null;
            }
            parts[i] = text.substring(start, tab);
            start = tab + 1;
        }
        parts[FIELDS.length - 1] = text.substring(start);
        Map<String, String> fields = new LinkedHashMap<>(16);
        fields.put("type", "task");
        fields.put("task", parts[0]);
        fields.put("from", parts[1]);
        fields.put("to", parts[2]);
        fields.put("epoch", parts[3]);
        fields.put("worker", parts[4]);
        fields.put("attempt", parts[5]);
        fields.put("reason", parts[10]);
        fields.put("via", parts[6]);
        fields.put("at", parts[7]);
        if (!parts[8].isEmpty()) {
            fields.put("lines", parts[8]);
            fields.put("exit", parts[9]);
        }
        return fields;
    }
}
