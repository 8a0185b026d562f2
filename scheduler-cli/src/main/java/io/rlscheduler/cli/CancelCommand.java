package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "cancel", mixinStandardHelpOptions = true,
        description = "Cancel a run (your own, or any with an admin token).")
final class CancelCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "The run.")
    String id;

    @Override
    int execute() {
        JsonNode answer = api().post("/api/v1/runs/" + Api.seg(id) + "/cancel", null);
        if (json()) {
            printJson(answer);
        } else if (answer.path("cancelled").asBoolean()) {
            out().println("cancelled " + id);
        } else {
            out().println(id + " had already ended; nothing to cancel");
        }
        out().flush();
        return ExitCodes.OK;
    }
}
