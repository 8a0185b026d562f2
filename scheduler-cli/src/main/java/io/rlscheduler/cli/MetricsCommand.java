package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "metrics", mixinStandardHelpOptions = true,
        description = "Print a run's metric points (its RLS_METRIC lines) as a table; -f follows them live.")
final class MetricsCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "The run.")
    String id;

    @Option(names = {"-f", "--follow"}, description = "Follow new points until the run ends (one line each).")
    boolean follow;

    @Override
    int execute() {
        if (follow) {
            Follower f = new Follower(api(), "/api/v1/runs/" + Api.seg(id) + "/metrics/stream", "metric");
            f.follow((pointId, point) -> {
                if (json()) {
                    printJsonLine(point);
                } else {
                    out().println("attempt " + point.path("attempt").asText() + " seq " + point.path("seq").asText()
                            + "  " + Format.pairs(point.get("values")));
                    out().flush();
                }
            });
            return ExitCodes.OK;
        }
        JsonNode answer = api().get("/api/v1/runs/" + Api.seg(id) + "/metrics");
        if (json()) {
            printJson(answer);
            return ExitCodes.OK;
        }
        JsonNode points = answer.path("points");
        Set<String> keys = new LinkedHashSet<>();
        points.forEach(p -> p.path("values").fieldNames().forEachRemaining(keys::add));
        List<String> headers = new ArrayList<>(List.of("ATTEMPT", "SEQ"));
        keys.forEach(k -> headers.add(k.toUpperCase(java.util.Locale.ROOT)));
        Table t = new Table(headers);
        for (JsonNode p : points) {
            List<String> row = new ArrayList<>();
            row.add(Format.text(p.get("attempt")));
            row.add(Format.text(p.get("seq")));
            for (Iterator<String> it = keys.iterator(); it.hasNext(); ) {
                row.add(Format.text(p.path("values").get(it.next())));
            }
            t.row(row);
        }
        if (t.size() == 0) {
            out().println("no metric points");
            out().flush();
        } else {
            t.print(out());
        }
        return ExitCodes.OK;
    }
}
