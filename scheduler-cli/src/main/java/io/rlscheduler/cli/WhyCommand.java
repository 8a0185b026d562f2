package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "why", mixinStandardHelpOptions = true, description = "Say why a run is still waiting.")
final class WhyCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "The run.")
    String id;

    @Override
    int execute() {
        JsonNode why = api().get("/api/v1/runs/" + Api.seg(id) + "/why");
        if (json()) {
            printJson(why);
            return ExitCodes.OK;
        }
        out().println(why.path("code").asText() + ": " + why.path("message").asText(""));
        if (why.path("position").isNumber() && why.path("position").asLong() >= 0) {
            // the server counts from 0 at the head of the queue
            out().println("place in the queue: " + (why.path("position").asLong() + 1));
        }
        JsonNode reasons = why.path("reasons");
        boolean onlyTheSame = reasons.size() == 1
                && reasons.get(0).path("code").asText().equals(why.path("code").asText());
        if (reasons.isArray() && reasons.size() > 0 && !onlyTheSame) {
            Table t = new Table("REASON", "MESSAGE");
            reasons.forEach(r -> t.row(Format.text(r.get("code")), Format.text(r.get("message"))));
            t.print(out());
        }
        out().flush();
        return ExitCodes.OK;
    }
}
