package io.rlscheduler.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.testkit.JvmProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo with {@code --serve}, as a newcomer runs it: its last line is unchanged, and after it the
 * master and the dashboard keep serving the sweep at the URL it printed, with the token it printed.
 */
class DemoServeIT {

    private static final Pattern SERVING = Pattern.compile("demo: serving the dashboard at (http://[0-9.:]+)/#/sweep/(\\S+) until"
            + " Ctrl-C \\(token (rls_\\S+)\\)");

    @TempDir
    Path dir;

    @Test
    void withServeTheDemoEndsWithItsLastLineAndKeepsServingTheSweepsDashboard() throws Exception {
        Files.createDirectories(dir.resolve("scripts"));
        Files.copy(Cluster.REPO_SCRIPTS.resolve("train.py"), dir.resolve("scripts").resolve("train.py"));
        try (JvmProcess demo = JvmProcess.builder(LocalClusterDemo.class).args("--serve", "--port", "0").workingDirectory(dir)
                .logFile(dir.resolve("demo.log")).start()) {
            demo.awaitOutput("demo: 6 tasks, 6 succeeded, 0 failed", Duration.ofMinutes(3));
            String serving = demo.output().stream().filter(l -> SERVING.matcher(l).find()).findFirst().orElseThrow();
            java.util.List<String> lines = demo.output().stream().filter(l -> l.startsWith("demo:")).toList();
            assertThat(lines.get(lines.size() - 1)).isEqualTo("demo: 6 tasks, 6 succeeded, 0 failed");
            Matcher m = SERVING.matcher(serving);
            assertThat(m.find()).isTrue();
            String url = m.group(1);
            String sweep = m.group(2);
            String token = m.group(3);

            HttpClient client = HttpClient.newHttpClient();
            HttpResponse<String> page = client.send(HttpRequest.newBuilder(URI.create(url + "/")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
            HttpResponse<String> compared = client.send(HttpRequest.newBuilder(URI.create(url + "/api/v1/sweeps/" + sweep
                    + "/compare?metric=final_reward")).header("Authorization", "Bearer " + token).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(compared.statusCode()).isEqualTo(200);
            JsonNode json = new ObjectMapper().readTree(compared.body());
            assertThat(json.path("runs").size()).isEqualTo(6);
            assertThat(json.path("varying").toString()).contains("lr").contains("seed");
            assertThat(json.path("best").asText()).startsWith(sweep + "-");
            assertThat(demo.isAlive()).as("still serving after its last line").isTrue();
            assertThat(demo.terminate(Duration.ofSeconds(30))).isTrue();
        }
    }
}
