package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "wait", mixinStandardHelpOptions = true,
        description = {"Wait until a run ends; the exit code says how it ended.",
            "0 SUCCEEDED, 1 FAILED, 3 CANCELLED, 4 TIMED_OUT, 5 --timeout passed first, 6 server/network error."})
final class WaitCommand extends BaseCommand {
    /** With the task-event stream open the run is re-read this often anyway, in case an event was missed. */
    private static final long REFRESH_WITH_EVENTS_MILLIS = 15_000;
    /** Without it (a server without /events, or while reconnecting), the run is polled this often. */
    private static final long POLL_MILLIS = 2_000;
    private static final int MAX_TRANSIENT_FAILURES = 10;

    @Parameters(index = "0", paramLabel = "ID", description = "The run.")
    String id;

    @Option(names = "--timeout", paramLabel = "DURATION", description = "Give up (exit 5) after this long: 90s, 30m, 2h.")
    String timeout;

    @Option(names = "--progress", negatable = true,
            description = "A progress line on stderr (default: when stderr is a terminal).")
    Boolean progress;

    private boolean progressShown;

    @Override
    int execute() {
        long start = System.currentTimeMillis();
        long deadline = timeout == null ? Long.MAX_VALUE : start + Values.seconds(timeout) * 1000;
        boolean showProgress = progress != null ? progress : rls().stderrTerminal;
        String runPath = "/api/v1/runs/" + Api.seg(id);

        JsonNode run = api().get(runPath);
        EventStream events = null;
        boolean eventsSupported = true;
        long lastHeard = start;
        long nextEventsTry = start;
        int eventFailures = 0;
        int transientFailures = 0;
        long lastRefresh = System.currentTimeMillis();
        String why = null;

        try {
            while (!ExitCodes.isTerminal(run.path("state").asText())) {
                long now = System.currentTimeMillis();
                if (now >= deadline) {
                    clearProgress();
                    throw new RlsException(ExitCodes.WAIT_TIMEOUT, "gave up waiting for " + id + " after "
                            + Format.duration(now - start) + "; it is still " + run.path("state").asText());
                }
                if (events == null && eventsSupported && now >= nextEventsTry) {
                    try {
                        events = api().stream("/api/v1/events", null);
                        lastHeard = now;
                        eventFailures = 0;
                    } catch (ApiException e) {
                        if (e.status() != 404 && e.status() != 405) {
                            throw e;
                        }
                        eventsSupported = false;
                    } catch (IOException e) {
                        eventFailures++;
                        nextEventsTry = now + Math.min(30_000, 1000L << Math.min(eventFailures, 5));
                    }
                    if (events != null) {
                        lastRefresh = 0; // re-read the run: changes before the stream opened
                    }
                }
                long slice = Math.max(1, Math.min(1000, deadline - now));
                boolean refresh = false;
                if (events != null) {
                    Object item = events.next(slice);
                    now = System.currentTimeMillis();
                    if (item instanceof EventStream.Event) {
                        lastHeard = now;
                        EventStream.Event e = (EventStream.Event) item;
                        if (mentions(e, id)) {
                            refresh = true;
                        }
                    } else if (item == EventStream.Signal.ALIVE) {
                        lastHeard = now;
                    } else if (item != EventStream.Signal.NOTHING || now - lastHeard > Follower.SILENCE_MILLIS) {
                        events.close();
                        events = null;
                        eventFailures++;
                        nextEventsTry = now + Math.min(30_000, 250L << Math.min(eventFailures, 7));
                        refresh = true;
                    }
                } else {
                    sleep(Math.min(slice, POLL_MILLIS));
                    now = System.currentTimeMillis();
                }
                long every = events != null ? REFRESH_WITH_EVENTS_MILLIS : POLL_MILLIS;
                if (refresh || now - lastRefresh >= every) {
                    try {
                        run = api().get(runPath);
                        if (showProgress && "QUEUED".equals(run.path("state").asText())) {
                            JsonNode w = api().get(runPath + "/why");
                            why = w.path("code").asText("") + (w.path("position").asLong(-1) >= 0
                                    ? " #" + (w.path("position").asLong() + 1) : "");
                        } else {
                            why = null;
                        }
                        transientFailures = 0;
                    } catch (RlsException e) {
                        boolean transientError = !(e instanceof ApiException) || ((ApiException) e).status() == 503;
                        if (!transientError || ++transientFailures > MAX_TRANSIENT_FAILURES) {
                            throw e;
                        }
                    }
                    lastRefresh = now;
                }
                if (showProgress) {
                    showProgress(run, why, now - start);
                }
            }
        } finally {
            if (events != null) {
                events.close();
            }
            clearProgress();
        }
        if (json()) {
            printJson(run);
        } else {
            printOutcome(out(), run);
        }
        return ExitCodes.forState(run.path("state").asText());
    }

    private static boolean mentions(EventStream.Event e, String id) {
        if (!"task".equals(e.event()) && !"message".equals(e.event())) {
            return false;
        }
        try {
            return id.equals(Api.JSON.readTree(e.data()).path("id").asText());
        } catch (IOException ex) {
            return false;
        }
    }

    private void showProgress(JsonNode run, String why, long elapsed) {
        StringBuilder s = new StringBuilder("\r\033[K").append(id).append(' ').append(run.path("state").asText());
        if (why != null && !why.isEmpty()) {
            s.append(" (").append(why).append(')');
        }
        if (run.path("attempt").asInt() > 0) {
            s.append("  attempt ").append(run.path("attempt").asInt()).append('/').append(run.path("maxAttempts").asInt());
        }
        if (run.hasNonNull("workerId")) {
            s.append("  on ").append(run.path("workerId").asText());
        }
        if (run.path("logLines").asLong() > 0) {
            s.append("  ").append(run.path("logLines").asLong()).append(" log lines");
        }
        s.append("  ").append(Format.duration(elapsed - elapsed % 1000));
        err().print(s);
        err().flush();
        progressShown = true;
    }

    private void clearProgress() {
        if (progressShown) {
            err().print("\r\033[K");
            err().flush();
            progressShown = false;
        }
    }

    /** One line on how a run ended: state, exit code, error or reason, final metrics. */
    static void printOutcome(PrintWriter to, JsonNode run) {
        StringBuilder s = new StringBuilder(run.path("id").asText()).append(' ').append(run.path("state").asText());
        if (run.hasNonNull("exitCode")) {
            s.append(" (exit code ").append(run.path("exitCode").asText()).append(')');
        }
        boolean succeeded = "SUCCEEDED".equals(run.path("state").asText());
        if (run.hasNonNull("error")) {
            s.append(": ").append(run.path("error").asText());
        } else if (run.hasNonNull("reason") && !succeeded) {
            s.append(": ").append(run.path("reason").asText());
        }
        if (run.path("finalMetrics").isObject() && run.path("finalMetrics").size() > 0) {
            s.append("  ").append(Format.pairs(run.get("finalMetrics")));
        }
        to.println(s);
        to.flush();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RlsException(ExitCodes.ERROR, "interrupted");
        }
    }
}
