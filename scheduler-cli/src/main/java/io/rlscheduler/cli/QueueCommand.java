package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "queue", mixinStandardHelpOptions = true, description = "List the waiting runs, first first, and why each waits.")
final class QueueCommand extends BaseCommand {
    @Option(names = "--limit", paramLabel = "N", description = "At most N runs.")
    Integer limit;

    @Override
    int execute() {
        JsonNode answer = api().get(new Api.Query().add("limit", limit).of("/api/v1/queue"));
        if (json()) {
            printJson(answer);
            return ExitCodes.OK;
        }
        Table t = new Table("#", "ID", "OWNER", "SCRIPT", "GPUS", "PRIORITY", "WAITING", "WHY");
        int n = 0;
        for (JsonNode r : answer.path("runs")) {
            n++;
            JsonNode why = r.path("why");
            String reason = why.isObject()
                    ? why.path("code").asText("") + (why.hasNonNull("message") ? ": " + why.path("message").asText() : "")
                    : "-";
            t.row(n, r.path("id").asText(), Format.text(r.get("owner")), Format.text(r.get("script")),
                    Format.text(r.get("gpus")), Format.text(r.get("priority")), Format.ago(r.get("createdAt")), reason);
        }
        if (t.size() == 0) {
            out().println("the queue is empty");
            out().flush();
            return ExitCodes.OK;
        }
        t.print(out());
        long total = answer.path("total").asLong(n);
        if (total > n) {
            out().println("(" + n + " of " + total + " waiting)");
            out().flush();
        }
        return ExitCodes.OK;
    }
}
