package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "show", mixinStandardHelpOptions = true, description = "Show one run: its spec, state, result and history.")
final class ShowCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "The run.")
    String id;

    @Override
    int execute() {
        JsonNode r = api().get("/api/v1/runs/" + Api.seg(id));
        if (json()) {
            printJson(r);
            return ExitCodes.OK;
        }
        Table t = new Table("FIELD", "VALUE");
        t.row("id", r.path("id").asText());
        t.row("state", Format.text(r.get("state")) + (r.path("cancelRequested").asBoolean() ? " (cancel requested)" : ""));
        t.row("owner", Format.text(r.get("owner")));
        t.row("script", Format.text(r.get("script")));
        t.row("parameters", Format.pairs(r.get("parameters")));
        if (r.hasNonNull("sweep")) {
            t.row("sweep", Format.text(r.get("sweep")));
        }
        t.row("gpus", Format.text(r.get("gpus")) + (r.path("gpuIds").size() > 0 ? " (ids " + Format.list(r.get("gpuIds")) + ")" : ""));
        t.row("worker", Format.text(r.get("workerId")));
        t.row("priority", Format.text(r.get("priority")));
        t.row("attempt", r.path("attempt").asInt() + " of " + r.path("maxAttempts").asInt());
        t.row("exit code", Format.text(r.get("exitCode")));
        if (r.hasNonNull("error")) {
            t.row("error", Format.text(r.get("error")));
        }
        if (r.hasNonNull("reason")) {
            t.row("reason", Format.text(r.get("reason")));
        }
        t.row("final metrics", Format.pairs(r.get("finalMetrics")));
        t.row("created", Format.time(r.get("createdAt")) + " (" + Format.ago(r.get("createdAt")) + ")");
        t.row("updated", Format.time(r.get("updatedAt")) + " (" + Format.ago(r.get("updatedAt")) + ")");
        t.row("log lines", Format.text(r.get("logLines")));
        t.print(out());
        JsonNode history = r.path("history");
        if (history.isArray() && history.size() > 0) {
            out().println();
            Table h = new Table("AT", "FROM", "TO", "EPOCH", "WORKER", "REASON");
            history.forEach(e -> h.row(Format.time(e.get("at")), Format.text(e.get("from")), Format.text(e.get("to")),
                    Format.text(e.get("epoch")), Format.text(e.get("workerId")), Format.text(e.get("reason"))));
            h.print(out());
        }
        return ExitCodes.OK;
    }
}
