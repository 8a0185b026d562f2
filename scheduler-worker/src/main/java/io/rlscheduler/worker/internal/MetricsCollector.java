package io.rlscheduler.worker.internal;

import io.rlscheduler.core.internal.MetricLines;
import io.rlscheduler.core.internal.Json;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects the metrics a task prints as lines {@code RLS_METRIC {json object}}: the latest value
 * of each metric, and a bounded series of the last {@code seriesLimit} objects. Lines that are not
 * valid JSON objects are ignored (they still go to the log). Thread-safe.
 */
public final class MetricsCollector {


    private final int seriesLimit;
    private final ObjectNode latest = Json.object();
    private final ArrayDeque<JsonNode> series = new ArrayDeque<>();
    private long count;
    /** {@link #latestJson()} until the next metric: asked twice per attempt end, changed rarely. */
    private String latestJson = "{}";

    public MetricsCollector(int seriesLimit) {
        this.seriesLimit = seriesLimit;
    }

    /** Takes a line of output; returns whether it was a metrics line. */
    public boolean offer(String line) {
        ObjectNode node = MetricLines.parse(line);
        if (node == null) {
            return false;
        }
        synchronized (this) {
            latest.setAll((ObjectNode) node);
            latestJson = null;
            series.addLast(node);
            if (series.size() > seriesLimit) {
                series.removeFirst();
            }
            count++;
        }
        return true;
    }

    /** Returns the latest value of every metric seen, as a JSON object ("{}" if none). */
    public synchronized String latestJson() {
        if (latestJson == null) {
            latestJson = latest.toString();
        }
        return latestJson;
    }

    /** Returns the last metric objects, oldest first (at most the series limit). */
    public synchronized List<JsonNode> series() {
        return new ArrayList<>(series);
    }

    /** Returns how many metric lines were seen. */
    public synchronized long count() {
        return count;
    }
}
