package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "sweep", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Submit a sweep: the product of the -g grids, times the --seeds.",
            "rls sweep train.py -g lr=0.01,0.05,0.1 --seeds 1,2 -p episodes=500 --gpus 1"})
final class SweepCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "SCRIPT", description = "The training script.")
    String script;

    @Parameters(index = "1..*", paramLabel = "ARG", description = "Arguments for the script.")
    List<String> args;

    @Option(names = {"-g", "--grid"}, paramLabel = "NAME=V1,V2,...",
            description = "A parameter's values; several -g make the product, in the order given.")
    List<String> grid;

    @Option(names = "--seeds", paramLabel = "S1,S2,...", description = "The seeds: every grid point runs once per seed.")
    String seeds;

    @Option(names = "--seed-param", paramLabel = "NAME", description = "The parameter that gets the seed (default seed).")
    String seedParameter;

    @Option(names = "--name", paramLabel = "NAME", description = "A name for the sweep.")
    String name;

    @Mixin
    SpecOptions specOptions;

    @Override
    int execute() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("base", specOptions.toSpec(script, args));
        Map<String, List<Object>> g = Values.grid(grid);
        if (!g.isEmpty()) {
            body.put("grid", g);
        }
        if (seeds != null) {
            body.put("seeds", Values.list(seeds, "--seeds"));
        }
        if (seedParameter != null) {
            body.put("seedParameter", seedParameter);
        }
        if (name != null) {
            body.put("name", name);
        }
        if (g.isEmpty() && seeds == null) {
            throw RlsException.usage("a sweep needs -g NAME=V1,V2 or --seeds (for one run, use submit)");
        }
        JsonNode sweep = api().post("/api/v1/sweeps", body);
        if (json()) {
            printJson(sweep);
            return ExitCodes.OK;
        }
        List<String> ids = new ArrayList<>();
        sweep.path("runIds").forEach(n -> ids.add(n.asText()));
        String title = sweep.path("name").isTextual() ? " \"" + sweep.path("name").asText() + "\"" : "";
        out().println("sweep " + sweep.path("id").asText() + title + ": " + ids.size() + " runs");
        JsonNode runs = sweep.path("runs");
        if (runs.isArray() && runs.size() > 0) {
            Table t = new Table("ID", "STATE", "PARAMETERS");
            runs.forEach(r -> t.row(r.path("id").asText(), Format.text(r.get("state")), Format.pairs(r.get("parameters"))));
            t.print(out());
        } else {
            ids.forEach(out()::println);
        }
        return ExitCodes.OK;
    }
}
