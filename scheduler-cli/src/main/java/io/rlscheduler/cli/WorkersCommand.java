package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

@Command(name = "workers", mixinStandardHelpOptions = true, description = "List the workers, their GPUs and runs.")
final class WorkersCommand extends BaseCommand {
    @Override
    int execute() {
        JsonNode answer = api().get("/api/v1/workers");
        if (json()) {
            printJson(answer);
            return ExitCodes.OK;
        }
        Table t = new Table("ID", "STATE", "GPUS FREE", "CPU FREE", "MEMORY", "RUNS", "HEARTBEAT", "LABELS");
        for (JsonNode w : answer.path("workers")) {
            JsonNode gpus = w.path("gpus");
            int free = 0;
            for (JsonNode g : gpus) {
                if (!g.hasNonNull("run")) {
                    free++;
                }
            }
            t.row(w.path("id").asText(), Format.text(w.get("state")),
                    free + "/" + gpus.size(),
                    Format.text(w.get("freeCpuSlots")) + "/" + Format.text(w.get("cpuSlots")),
                    Format.bytes(w.get("memoryBytes")),
                    Format.list(w.get("runs")),
                    Format.ago(w.get("lastHeartbeat")),
                    Format.pairs(w.get("labels")));
        }
        if (t.size() == 0) {
            out().println("no workers");
            out().flush();
            return ExitCodes.OK;
        }
        t.print(out());
        boolean anyGpu = false;
        Table g = new Table("WORKER", "GPU", "NAME", "MEMORY USED", "UTIL", "RUN");
        for (JsonNode w : answer.path("workers")) {
            for (JsonNode gpu : w.path("gpus")) {
                anyGpu = true;
                String mem = gpu.hasNonNull("memoryUsedBytes")
                        ? Format.bytes(gpu.get("memoryUsedBytes")) + " / " + Format.bytes(gpu.get("memoryTotalBytes"))
                        : "-";
                String util = gpu.hasNonNull("utilizationPercent") ? gpu.path("utilizationPercent").asText() + "%" : "-";
                g.row(w.path("id").asText(), Format.text(gpu.get("index")), Format.text(gpu.get("name")), mem, util,
                        Format.text(gpu.get("run")));
            }
        }
        if (anyGpu) {
            out().println();
            g.print(out());
        }
        return ExitCodes.OK;
    }
}
