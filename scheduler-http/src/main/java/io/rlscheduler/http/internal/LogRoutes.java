package io.rlscheduler.http.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.MetricPoint;
import io.rlscheduler.master.SchedulerMaster;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The routes of a run's log and metrics, as ranges and live (Server-Sent Events), and the task event stream. */
final class LogRoutes {

    private static final Logger log = LoggerFactory.getLogger(LogRoutes.class);

    private final SchedulerMaster master;
    private final Streams streams;

    LogRoutes(SchedulerMaster master, Streams streams) {
        this.master = master;
        this.streams = streams;
    }

    // --- logs and metrics

    /** A log position: attempt and sequence; lines after it are sent. */
    private record Position(int attempt, long sequence) {
        static final Position START = new Position(-1, -1);

        boolean before(LogRecord r) {
            return r.getAttempt() > attempt || (r.getAttempt() == attempt && r.getSequence() > sequence);
        }

        static Position parse(String text) {
            if (text == null || text.isEmpty()) {
                return START;
            }
            int colon = text.indexOf(':');
            try {
                if (colon < 1) {
                    throw new NumberFormatException();
                }
                return new Position(Integer.parseInt(text.substring(0, colon)), Long.parseLong(text.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("a log position is '<attempt>:<sequence>', was '" + text + "'");
            }
        }
    }

    void log(Exchange ex) {
        String id = Routes.id(ex);
        TaskRecord record = Routes.record(master, id);
        Position after = Position.parse(ex.query("after"));
        int limit = ex.intQuery("limit", 1000, 1, 10_000);
        ObjectNode o = Views.object();
        ArrayNode lines = o.putArray("lines");
        String[] next = {after == Position.START ? null : ex.query("after")};
        boolean[] more = {false};
        LogRecord[] lastEnd = {null};
        master.scanLog(id, r -> {
            if (r.isEndOfStream()) {
                lastEnd[0] = r;
                return true;
            }
            if (!after.before(r)) {
                return true;
            }
            if (lines.size() == limit) {
                more[0] = true;
                return false; // the page is full: the rest of the file is not read
            }
            lines.add(Views.line(r));
            next[0] = Views.lineId(r);
            return true;
        });
        boolean ended = record.getState().isTerminal() && !more[0];
        o.put("next", next[0]);
        o.put("ended", ended);
        if (ended) {
            ObjectNode end = Views.object();
            end.put("state", record.getState().name());
            end.put("complete", lastEnd[0] != null && lastEnd[0].isComplete());
            Views.putText(end, "note", lastEnd[0] == null ? null : lastEnd[0].getNote());
            o.set("end", end);
        } else {
            o.putNull("end");
        }
        ex.ok(o);
    }

    void metricPoints(Exchange ex) {
        String id = Routes.id(ex);
        Routes.record(master, id);
        Position after = Position.parse(ex.query("after"));
        int limit = ex.intQuery("limit", 10_000, 1, 100_000);
        ObjectNode o = Views.object();
        ArrayNode points = o.putArray("points");
        boolean[] more = {false};
        master.scanLog(id, r -> {
            MetricPoint p = r.isLine() && after.before(r) ? MetricPoint.of(r) : null;
            if (p != null) {
                if (points.size() == limit) {
                    more[0] = true;
                    return false;
                }
                points.add(Views.point(p));
            }
            return true;
        });
        o.put("more", more[0]);
        ex.ok(o);
    }

    void follow(Exchange ex, boolean metricsOnly) {
        String id = Routes.id(ex);
        Routes.record(master, id);
        String lastEventId = ex.header("Last-Event-ID");
        Position after = Position.parse(lastEventId != null ? lastEventId : ex.query("after"));
        AtomicReference<LogFollow> follow = new AtomicReference<>();
        ex.answered = HttpResponseStatus.OK;
        ex.streaming = true;
        SseStream stream = streams.open(ex.channel, () -> {
            LogFollow f = follow.get();
            if (f != null) {
                f.close();
            }
        });
        LogFollow f;
        try {
            f = master.task(id).followLogs(r -> {
            if (r.isEndOfStream()) {
                if (r.getFinalState() != null) {
                    stream.send(null, "end", Views.end(r).toString());
                    stream.end();
                } else {
                    stream.close(); // not the run's end (this master stops, or the follow fell behind): the client resumes
                }
                return;
            }
            if (!after.before(r)) {
                return;
            }
            if (metricsOnly) {
                MetricPoint p = MetricPoint.of(r);
                if (p != null) {
                    stream.send(Views.lineId(r), "metric", Views.point(p).toString());
                }
            } else {
                stream.sendWith(b -> Views.lineEvent(r, b));
            }
        });
        } catch (RuntimeException e) {
            log.warn("the log of run {} could not be followed: {}", id, e.toString());
            stream.close(); // the head is out: the client sees the stream end and follows again
            return;
        }
        follow.set(f);
        if (stream.isClosed()) {
            f.close();
        }
    }

    void events(Exchange ex) {
        ex.answered = HttpResponseStatus.OK;
        ex.streaming = true;
        AtomicReference<Consumer<TaskEvent>> listener = new AtomicReference<>();
        SseStream stream = streams.open(ex.channel, () -> {
            Consumer<TaskEvent> l = listener.get();
            if (l != null) {
                try {
                    master.removeTaskListener(l);
                } catch (IllegalStateException e) {
                    // the master stopped: its listeners are gone with it
                }
            }
        });
        Consumer<TaskEvent> l = e -> {
            if (e.getKind() == TaskEvent.Kind.TASK && e.getTaskId() != null) {
                stream.send(e.getStreamId(), "task", Views.event(e).toString());
            }
        };
        listener.set(l);
        try {
            master.addTaskListener(l);
        } catch (RuntimeException e) {
            log.warn("the task events could not be followed: {}", e.toString());
            stream.close();
            return;
        }
        if (stream.isClosed()) {
            master.removeTaskListener(l);
        }
    }

}
