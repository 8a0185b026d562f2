package io.rlscheduler.master.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.Json;
import io.rlscheduler.protocol.CheckpointPolicy;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.ResourceRequest;
import java.io.IOException;

/**
 * Turns an assignment and the spec the master's API stored at submission into the
 * {@link ExecuteTask} message. Parameters keep their exact text (numbers are read as big decimals).
 */
final class SpecReader {

    private SpecReader() {
    }

    static String traceId(String specJson) {
        try {
            return Json.exactTree(specJson).path("traceId").asText("unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    static ExecuteTask executeTask(Assignment a) throws IOException {
        JsonNode spec = Json.exactTree(a.getSpecJson());
        ExecuteTask.Builder msg = ExecuteTask.newBuilder()
                .setTaskId(a.getTaskId())
                .setEpoch(a.getEpoch())
                .setAttempt(a.getAttempt())
                .setTraceId(spec.path("traceId").asText(""))
                .setScript(spec.path("script").asText(""))
                .setParametersJson(spec.path("parameters").isObject() ? spec.get("parameters").toString() : "{}")
                .setTimeoutMs(spec.path("timeoutMs").asLong(0))
                .setOwner(spec.path("owner").asText(""))
                .setCheckpoints(CheckpointPolicy.newBuilder().setKeep(spec.path("checkpointsKept").asInt(0))
                        .setMaxBytes(spec.path("maxCheckpointBytes").asLong(0)))
                .setResources(ResourceRequest.newBuilder()
                        .setGpus(a.getGpuIds().size()).addAllGpuIds(a.getGpuIds())
                        .setCpuSlots(a.getCpuSlots()).setMemoryBytes(a.getMemoryBytes()));
        spec.path("arguments").forEach(arg -> msg.addArguments(arg.asText()));
        spec.path("environment").fields().forEachRemaining(e -> msg.putEnvironment(e.getKey(), e.getValue().asText()));
        return msg.build();
    }
}
