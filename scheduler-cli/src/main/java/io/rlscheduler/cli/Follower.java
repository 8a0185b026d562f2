package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/**
 * Follows a log or metrics stream to its {@code end} event. When the connection drops (or goes
 * silent past {@link #SILENCE_MILLIS}, three missed keep-alives) it reconnects with
 * {@code Last-Event-ID} set to the last item's id, so the server resends nothing already seen and
 * skips nothing; an item whose id is not after the last one is dropped all the same, in case a
 * server repeats one.
 */
final class Follower {
    /** Called for each item event, in order, at most once per id. */
    interface Handler {
        void onItem(String id, JsonNode data);
    }

    static final long SILENCE_MILLIS = 45_000;
    static final int MAX_FAILURES = 10;

    private final Api api;
    private final String path;
    private final String itemEvent;
    private String lastId;
    private int reconnects;

    Follower(Api api, String path, String itemEvent) {
        this.api = api;
        this.path = path;
        this.itemEvent = itemEvent;
    }

    /** How many times the stream was reopened after a drop. */
    int reconnects() {
        return reconnects;
    }

    /**
     * Follows until the {@code end} event and returns its data ({@code {"state", "complete",
     * "note"}}). Throws {@link ApiException} when the server refuses the stream (404, 401), and
     * {@link RlsException} after {@link #MAX_FAILURES} drops in a row with nothing new.
     */
    JsonNode follow(Handler handler) {
        int failures = 0;
        IOException lastError = null;
        while (true) {
            if (failures > 0) {
                if (failures > MAX_FAILURES) {
                    if (lastError != null) {
                        throw api.unreachable(lastError);
                    }
                    throw new RlsException(ExitCodes.ERROR, "the stream " + path + " kept closing before its end");
                }
                backoff(failures);
                reconnects++;
            }
            EventStream stream;
            try {
                stream = api.stream(path, lastId);
            } catch (IOException e) {
                lastError = e;
                failures++;
                continue;
            }
            try (stream) {
                while (true) {
                    Object item = stream.next(SILENCE_MILLIS);
                    if (item == EventStream.Signal.ALIVE) {
                        continue;
                    }
                    if (!(item instanceof EventStream.Event)) {
                        break; // closed, failed, or silent: reconnect
                    }
                    EventStream.Event event = (EventStream.Event) item;
                    failures = 0;
                    lastError = null;
                    if ("end".equals(event.event())) {
                        return parse(event.data());
                    }
                    if (!itemEvent.equals(event.event())) {
                        continue;
                    }
                    if (event.id() != null) {
                        if (lastId != null && compareIds(event.id(), lastId) <= 0) {
                            continue;
                        }
                        lastId = event.id();
                    }
                    handler.onItem(event.id(), parse(event.data()));
                }
            }
            failures++;
        }
    }

    /**
     * Orders ids {@code attempt:seq} by attempt, then sequence; ids of another form compare equal
     * only to themselves (and count as after anything else).
     */
    static int compareIds(String a, String b) {
        long[] x = split(a);
        long[] y = split(b);
        if (x == null || y == null) {
            return a.equals(b) ? 0 : 1;
        }
        int c = Long.compare(x[0], y[0]);
        return c != 0 ? c : Long.compare(x[1], y[1]);
    }

    private static long[] split(String id) {
        int colon = id.indexOf(':');
        if (colon <= 0) {
            return null;
        }
        try {
            return new long[] {Long.parseLong(id.substring(0, colon)), Long.parseLong(id.substring(colon + 1))};
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static JsonNode parse(String data) {
        try {
            return Api.JSON.readTree(data);
        } catch (IOException e) {
            return Api.JSON.getNodeFactory().textNode(data);
        }
    }

    /** Waits before reconnecting: 0.25 s, 0.5 s, 1 s, ... up to 5 s. */
    static void backoff(int failures) {
        long millis = Math.min(5000, 250L << Math.min(failures - 1, 5));
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RlsException(ExitCodes.ERROR, "interrupted");
        }
    }
}
