package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "logs", mixinStandardHelpOptions = true,
        description = {"Print a run's log; -f follows it live to the run's end.",
            "A dropped connection is reopened where it was: no line repeated, none missed."})
final class LogsCommand extends BaseCommand {
    private static final int PAGE = 1000;

    @Parameters(index = "0", paramLabel = "ID", description = "The run.")
    String id;

    @Option(names = {"-f", "--follow"}, description = "Follow the log until the run ends.")
    boolean follow;

    @Override
    int execute() {
        if (follow) {
            if (json()) {
                Follower f = new Follower(api(), "/api/v1/runs/" + Api.seg(id) + "/log/stream", "line");
                JsonNode end = f.follow((lineId, data) -> printJsonLine(withId(lineId, data)));
                ObjectNode last = Api.JSON.createObjectNode();
                last.set("end", end);
                printJsonLine(last);
            } else {
                followLog(api(), id, out());
            }
            return ExitCodes.OK;
        }
        ArrayNode all = Api.JSON.createArrayNode();
        JsonNode page;
        String after = null;
        while (true) {
            page = api().get(new Api.Query().add("after", after).add("limit", PAGE)
                    .of("/api/v1/runs/" + Api.seg(id) + "/log"));
            JsonNode lines = page.path("lines");
            for (JsonNode line : lines) {
                if (json()) {
                    all.add(line);
                } else {
                    out().println(line.path("text").asText());
                }
            }
            out().flush();
            String next = page.path("next").isTextual() ? page.path("next").asText() : null;
            if (lines.size() < PAGE || next == null || next.equals(after)) {
                break;
            }
            after = next;
        }
        if (json()) {
            ObjectNode doc = Api.JSON.createObjectNode();
            doc.set("lines", all);
            doc.set("next", page.path("next"));
            doc.set("ended", page.path("ended"));
            doc.set("end", page.path("end"));
            printJson(doc);
        }
        return ExitCodes.OK;
    }

    private static JsonNode withId(String lineId, JsonNode data) {
        if (lineId == null || !data.isObject() || data.has("id")) {
            return data;
        }
        ObjectNode o = Api.JSON.createObjectNode();
        o.put("id", lineId);
        o.setAll((ObjectNode) data);
        return o;
    }

    /**
     * Prints the log's lines as they come, to the end event; notes a new attempt and an incomplete
     * end on stderr of the same stream only when printing to stdout. Returns the end event.
     */
    static JsonNode followLog(Api api, String id, PrintWriter to) {
        Follower f = new Follower(api, "/api/v1/runs/" + Api.seg(id) + "/log/stream", "line");
        int[] attempt = {-1};
        JsonNode end = f.follow((lineId, data) -> {
            int a = data.path("attempt").asInt(-1);
            if (attempt[0] != -1 && a != attempt[0]) {
                to.println("--- attempt " + a + " ---");
            }
            attempt[0] = a;
            to.println(data.path("text").asText());
            to.flush();
        });
        if (end.isObject() && end.has("complete") && !end.path("complete").asBoolean(true)) {
            to.println("--- log incomplete" + (end.hasNonNull("note") ? ": " + end.path("note").asText() : "") + " ---");
        }
        to.flush();
        return end;
    }
}
