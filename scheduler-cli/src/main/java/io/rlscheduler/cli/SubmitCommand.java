package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "submit", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Submit one run of SCRIPT (a path under the workers' script root).",
            "Arguments after -- go to the script: rls submit train.py -p lr=0.1 -- --verbose"})
final class SubmitCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "SCRIPT", description = "The training script.")
    String script;

    @Parameters(index = "1..*", paramLabel = "ARG", description = "Arguments for the script.")
    List<String> args;

    @Mixin
    SpecOptions specOptions;

    @Option(names = "--id", paramLabel = "ID", description = "The run's id (else the server makes one); resubmitting the same spec under it is a no-op.")
    String id;

    @Option(names = {"-f", "--follow"}, description = "Follow the log to the end; exit with the run's code, as wait does.")
    boolean follow;

    @Override
    int execute() {
        Map<String, Object> spec = specOptions.toSpec(script, args);
        if (id != null) {
            spec.put("taskId", id);
        }
        JsonNode run = api().post("/api/v1/runs", spec);
        String runId = run.path("id").asText();
        if (!follow) {
            if (json()) {
                printJson(run);
            } else {
                out().println("submitted " + runId + " (" + run.path("state").asText() + ")");
            }
            return ExitCodes.OK;
        }
        err().println("submitted " + runId + "; following its log");
        err().flush();
        LogsCommand.followLog(api(), runId, json() ? err() : out());
        JsonNode last = api().get("/api/v1/runs/" + Api.seg(runId));
        String state = last.path("state").asText();
        if (json()) {
            printJson(last);
        } else {
            WaitCommand.printOutcome(err(), last);
        }
        return ExitCodes.forState(state);
    }
}
