package io.rlscheduler.master;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reads the GPU readings the leader publishes (see {@code GpuReadingPublisher} for the encoding). */
final class GpuReadings {

    private static final Logger log = LoggerFactory.getLogger(GpuReadings.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private GpuReadings() {
    }

    /** Decodes every worker's readings; a worker whose entry is unreadable is left out (and logged). */
    static Map<String, List<WorkerUsage.Gpu>> decode(Map<String, String> published) {
        Map<String, List<WorkerUsage.Gpu>> readings = new TreeMap<>();
        published.forEach((workerId, json) -> {
            try {
                JsonNode gpus = JSON.readTree(json);
                List<WorkerUsage.Gpu> list = new ArrayList<>(gpus.size());
                for (JsonNode g : gpus) {
                    if (!g.isArray() || g.size() < 6 || !g.get(0).canConvertToInt()) {
                        throw new IllegalArgumentException("not a GPU reading: " + g);
                    }
                    list.add(new WorkerUsage.Gpu(g.get(0).asInt(), g.get(1).asText(), g.get(2).asText(), g.get(3).asLong(),
                            g.get(4).asLong(), g.get(5).asInt()));
                }
                readings.put(workerId, List.copyOf(list));
            } catch (JsonProcessingException | IllegalArgumentException e) {
                log.warn("GPU readings of worker {} are unreadable: {}", workerId, e.getMessage());
            }
        });
        return readings;
    }
}
