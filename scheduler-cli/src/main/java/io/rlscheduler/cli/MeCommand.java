package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

@Command(name = "me", mixinStandardHelpOptions = true, description = "Show whose token this is, and the server used.")
final class MeCommand extends BaseCommand {
    @Override
    int execute() {
        JsonNode me = api().get("/api/v1/me");
        if (json()) {
            printJson(me);
            return ExitCodes.OK;
        }
        out().println(me.path("user").asText() + (me.path("admin").asBoolean() ? " (admin)" : "") + " at " + api().server());
        out().flush();
        return ExitCodes.OK;
    }
}
