package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "ls", mixinStandardHelpOptions = true, sortOptions = false, description = "List runs, newest first.")
final class LsCommand extends BaseCommand {
    @Option(names = "--state", paramLabel = "STATE", description = "QUEUED, ASSIGNED, RUNNING, SUCCEEDED, FAILED, CANCELLED or TIMED_OUT.")
    String state;

    @Option(names = "--mine", description = "Only my runs (the token's user).")
    boolean mine;

    @Option(names = "--owner", paramLabel = "USER", description = "Only this owner's runs.")
    String owner;

    @Option(names = "--sweep", paramLabel = "SWEEP", description = "Only this sweep's runs.")
    String sweep;

    @Option(names = "--script", paramLabel = "SCRIPT", description = "Only runs of this script.")
    String script;

    @Option(names = "--limit", paramLabel = "N", description = "At most N runs (1 to 500, default 50).")
    Integer limit;

    @Option(names = "--offset", paramLabel = "N", description = "Skip the first N.")
    Integer offset;

    @Override
    int execute() {
        String path = new Api.Query()
                .add("state", state == null ? null : state.toUpperCase(Locale.ROOT))
                .add("owner", owner)
                .add("mine", mine ? "true" : null)
                .add("sweep", sweep)
                .add("script", script)
                .add("offset", offset)
                .add("limit", limit)
                .of("/api/v1/runs");
        JsonNode answer = api().get(path);
        if (json()) {
            printJson(answer);
            return ExitCodes.OK;
        }
        Table t = new Table("ID", "STATE", "OWNER", "SCRIPT", "GPUS", "ATTEMPT", "CREATED", "PARAMETERS");
        answer.path("runs").forEach(r -> t.row(
                r.path("id").asText(),
                Format.text(r.get("state")),
                Format.text(r.get("owner")),
                Format.text(r.get("script")),
                Format.text(r.get("gpus")),
                r.path("attempt").asInt() + "/" + r.path("maxAttempts").asInt(),
                Format.ago(r.get("createdAt")),
                Format.pairs(r.get("parameters"))));
        if (t.size() == 0) {
            out().println("no runs");
            out().flush();
        } else {
            t.print(out());
        }
        long total = answer.path("total").asLong(t.size());
        long from = answer.path("offset").asLong(0);
        if (total > from + t.size()) {
            out().println("(" + (from + 1) + "-" + (from + t.size()) + " of " + total + "; --offset "
                    + (from + t.size()) + " for more)");
            out().flush();
        }
        return ExitCodes.OK;
    }
}
