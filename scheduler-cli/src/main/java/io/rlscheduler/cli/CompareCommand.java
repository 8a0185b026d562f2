package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Compare runs side by side: the parameters that differ, the final metrics, the best run.",
            "rls compare run-a run-b run-c --metric final_reward",
            "rls compare --sweep sw-3f2a --metric loss --lower-is-better"})
final class CompareCommand extends BaseCommand {
    @Parameters(index = "0..*", paramLabel = "ID", description = "The runs.")
    List<String> ids;

    @Option(names = "--sweep", paramLabel = "SWEEP", description = "All the runs of this sweep.")
    String sweep;

    @Option(names = "--metric", paramLabel = "NAME", description = "The final metric that picks the best run.")
    String metric;

    @Option(names = "--lower-is-better", description = "The smallest value of --metric is best.")
    boolean lowerIsBetter;

    @Override
    int execute() {
        boolean haveIds = ids != null && !ids.isEmpty();
        if (haveIds == (sweep != null)) {
            throw RlsException.usage("compare wants either run ids or --sweep SWEEP");
        }
        Api.Query q = new Api.Query();
        String path;
        if (haveIds) {
            q.add("ids", String.join(",", ids));
            path = "/api/v1/compare";
        } else {
            path = "/api/v1/sweeps/" + Api.seg(sweep) + "/compare";
        }
        q.add("metric", metric);
        if (metric != null) {
            q.add("higher", lowerIsBetter ? "false" : "true");
        }
        JsonNode answer = api().get(q.of(path));
        if (json()) {
            printJson(answer);
            return ExitCodes.OK;
        }
        List<String> varying = new ArrayList<>();
        answer.path("varying").forEach(v -> varying.add(v.asText()));
        Set<String> metrics = new LinkedHashSet<>();
        if (metric != null) {
            metrics.add(metric);
        }
        answer.path("runs").forEach(r -> r.path("finalMetrics").fieldNames().forEachRemaining(metrics::add));
        String best = answer.path("best").isTextual() ? answer.path("best").asText() : null;

        List<String> headers = new ArrayList<>(List.of("", "ID", "STATE"));
        varying.forEach(headers::add);
        metrics.forEach(headers::add);
        Table t = new Table(headers);
        for (JsonNode r : answer.path("runs")) {
            List<String> row = new ArrayList<>();
            String runId = r.path("id").asText();
            row.add(runId.equals(best) ? "*" : "");
            row.add(runId);
            row.add(Format.text(r.get("state")));
            varying.forEach(v -> row.add(Format.text(r.path("parameters").get(v))));
            metrics.forEach(m -> row.add(Format.text(r.path("finalMetrics").get(m))));
            t.row(row);
        }
        t.print(out());
        if (best != null) {
            out().println("best: " + best + " by " + answer.path("metric").asText(metric)
                    + (lowerIsBetter ? " (lower is better)" : " (higher is better)"));
        } else if (metric != null) {
            out().println("best: none (no run has " + metric + ")");
        }
        if (answer.path("codeDiffering").asBoolean()) {
            out().println("note: these runs ran different code (their scripts' SHA-256 differ)");
        }
        out().flush();
        return ExitCodes.OK;
    }
}
