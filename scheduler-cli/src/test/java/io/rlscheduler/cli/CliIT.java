package io.rlscheduler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.http.Http;
import io.rlscheduler.http.HttpLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rls as a real process ({@code java -jar scheduler-cli/target/rls.jar}) against a real master with
 * its HTTP API, two workers and real python3 runs.
 */
class CliIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long PROCESS_SECONDS = 120;

    @TempDir
    static Path tmp;

    private static HttpLab lab;
    private static String alice;
    private static Path gates;
    private static Path home;

    @BeforeAll
    static void startLab() throws Exception {
        lab = HttpLab.start(tmp.resolve("lab"), 2, 2);
        lab.writeScript("echo.py", LabProcesses.ECHO_SCRIPT);
        alice = lab.token("alice");
        gates = Files.createDirectories(tmp.resolve("gates"));
        home = Files.createDirectories(tmp.resolve("home"));
    }

    @AfterAll
    static void stopLab() {
        if (lab != null) {
            lab.close();
        }
    }

    private static LabProcesses.Running start(String token, String... args) throws Exception {
        return new LabProcesses.Running(LabProcesses.rls(home, Map.of("RLS_SERVER", lab.url(), "RLS_TOKEN", token), args),
                tmp.resolve("out"));
    }

    private static LabProcesses.Result rls(String... args) throws Exception {
        return start(alice, args).await(PROCESS_SECONDS);
    }

    private static LabProcesses.Result rlsAs(String token, String... args) throws Exception {
        return start(token, args).await(PROCESS_SECONDS);
    }

    private static JsonNode json(LabProcesses.Result r) throws Exception {
        assertThat(r.code()).as(r.toString()).isZero();
        return JSON.readTree(r.out());
    }

    private static String submit(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("submit", "echo.py", "--json"));
        all.addAll(List.of(args));
        return json(rls(all.toArray(new String[0]))).path("id").asText();
    }

    @Test
    void submitThenWaitSucceedsAndShowJsonHasTheTypedParameters() throws Exception {
        String id = submit("-p", "lines=3", "-p", "lr=0.5", "-p", "tag=first", "-p", "flag=true", "--gpus", "1");
        LabProcesses.Result wait = rls("wait", id);
        assertThat(wait.code()).as(wait.toString()).isEqualTo(0);
        assertThat(wait.out()).startsWith(id + " SUCCEEDED (exit code 0)");

        JsonNode run = json(rls("show", id, "--json"));
        assertThat(run.path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(run.path("owner").asText()).isEqualTo("alice");
        assertThat(run.path("gpus").asInt()).isEqualTo(1);
        assertThat(run.path("parameters").path("lr").isNumber()).isTrue();
        assertThat(run.path("parameters").path("lines").isIntegralNumber()).isTrue();
        assertThat(run.path("parameters").path("flag").isBoolean()).isTrue();
        assertThat(run.path("parameters").path("tag").asText()).isEqualTo("first");
        assertThat(run.path("finalMetrics").path("reward").asDouble()).isEqualTo(1.5);

        LabProcesses.Result show = rls("show", id);
        assertThat(show.out()).contains("SUCCEEDED").contains("lr=0.5");

        LabProcesses.Result metrics = rls("metrics", id);
        assertThat(metrics.code()).as(metrics.toString()).isZero();
        assertThat(metrics.outLines().get(0)).matches("ATTEMPT +SEQ +STEP +REWARD");
        assertThat(metrics.outLines()).hasSize(4);
        assertThat(metrics.outLines().get(3)).endsWith("3     1.5");

        LabProcesses.Result logs = rls("logs", id);
        assertThat(logs.outLines()).filteredOn(l -> l.startsWith("line ")).containsExactly("line 1", "line 2", "line 3");
    }

    @Test
    void waitExitCodeIsOneForAFailingRun() throws Exception {
        String id = submit("-p", "lines=1", "-p", "exit=3", "--max-attempts", "1");
        LabProcesses.Result wait = rls("wait", id);
        assertThat(wait.code()).as(wait.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(wait.out()).startsWith(id + " FAILED");
        LabProcesses.Result asJson = rls("--json", "wait", id);
        assertThat(asJson.code()).as(asJson.toString()).isEqualTo(ExitCodes.FAILED);
        JsonNode run = JSON.readTree(asJson.out());
        assertThat(run.path("state").asText()).isEqualTo("FAILED");
        assertThat(run.path("exitCode").asInt()).isEqualTo(3);
    }

    @Test
    void logsFollowPrintsEveryLineInOrderAndEndsWithTheRun() throws Exception {
        Path gate = gates.resolve("follow");
        String id = submit("-p", "lines=40", "-p", "gate=" + gate);
        LabProcesses.Running follow = start(alice, "logs", "-f", id);
        Files.createFile(gate);
        LabProcesses.Result r = follow.await(PROCESS_SECONDS);
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.outLines()).filteredOn(l -> l.startsWith("line "))
                .containsExactlyElementsOf(IntStream.rangeClosed(1, 40).mapToObj(i -> "line " + i).toList());
        assertThat(r.outLines()).filteredOn(l -> l.startsWith("RLS_METRIC ")).hasSize(40);
        assertThat(r.err()).isEmpty();
    }

    @Test
    void submitFollowStreamsTheLogAndExitsLikeWait() throws Exception {
        LabProcesses.Result r = rls("submit", "echo.py", "-p", "lines=2", "-p", "exit=4", "--max-attempts", "1", "--follow");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.outLines()).filteredOn(l -> l.startsWith("line ")).containsExactly("line 1", "line 2");
        assertThat(r.err()).contains("FAILED");
    }

    @Test
    void sweepThenCompareBySweepPicksTheBestRun() throws Exception {
        JsonNode sweep = json(rls("sweep", "echo.py", "-g", "lr=0.1,0.2,0.3", "--seeds", "1,2", "-p", "lines=2",
                "--name", "lr scan", "--json"));
        String sweepId = sweep.path("id").asText();
        List<String> ids = new ArrayList<>();
        sweep.path("runIds").forEach(n -> ids.add(n.asText()));
        assertThat(ids).hasSize(6).allMatch(i -> i.startsWith(sweepId + "-"));
        for (String id : ids) {
            LabProcesses.Result w = rls("wait", "--timeout", "2m", id);
            assertThat(w.code()).as(w.toString()).isZero();
        }

        LabProcesses.Result table = rls("compare", "--sweep", sweepId, "--metric", "reward");
        assertThat(table.code()).as(table.toString()).isZero();
        List<String> best = table.outLines().stream().filter(l -> l.startsWith("*")).toList();
        assertThat(best).as(table.toString()).hasSize(1);
        assertThat(best.get(0)).contains("SUCCEEDED").contains("0.3");
        assertThat(table.out()).contains("best: ");

        JsonNode cmp = json(rls("compare", "--sweep", sweepId, "--metric", "reward", "--json"));
        assertThat(cmp.path("runs")).hasSize(6);
        JsonNode bestRun = json(rls("show", cmp.path("best").asText(), "--json"));
        assertThat(bestRun.path("parameters").path("lr").asDouble()).isEqualTo(0.3);

        JsonNode lower = json(rls("compare", ids.get(0), ids.get(5), "--metric", "reward", "--lower-is-better", "--json"));
        assertThat(json(rls("show", lower.path("best").asText(), "--json")).path("parameters").path("lr").asDouble())
                .isEqualTo(0.1);

        JsonNode listed = json(rls("ls", "--sweep", sweepId, "--json"));
        assertThat(listed.path("runs")).hasSize(6);
        LabProcesses.Result ls = rls("ls", "--sweep", sweepId);
        assertThat(ls.outLines().get(0)).startsWith("ID ").contains("STATE");
        assertThat(ls.outLines()).hasSize(7);
    }

    @Test
    void aBadTokenIsExit6WithTheServersMessage() throws Exception {
        Http.Answer raw = new Http(lab.url(), "rls_bogus").get("/api/v1/runs");
        String message = raw.json().path("error").path("message").asText();
        LabProcesses.Result r = rlsAs("rls_bogus", "ls");
        assertThat(r.code()).isEqualTo(ExitCodes.ERROR);
        assertThat(r.err()).isEqualTo("rls: " + message + System.lineSeparator());
        assertThat(r.out()).isEmpty();

        LabProcesses.Result missing = rls("show", "no-such-run");
        assertThat(missing.code()).isEqualTo(ExitCodes.ERROR);
        assertThat(missing.err()).startsWith("rls: ").doesNotContain("Exception");
    }

    @Test
    void cancelledRunWaitsWithExit3AndTimeoutWithExit5() throws Exception {
        String id = submit("-p", "gate=" + gates.resolve("never"));
        LabProcesses.Result early = rls("wait", "--timeout", "1s", id);
        assertThat(early.code()).as(early.toString()).isEqualTo(ExitCodes.WAIT_TIMEOUT);
        assertThat(early.err()).startsWith("rls: gave up waiting for " + id);

        LabProcesses.Result cancel = rls("cancel", id);
        assertThat(cancel.code()).as(cancel.toString()).isZero();
        assertThat(cancel.out()).isEqualTo("cancelled " + id + System.lineSeparator());
        LabProcesses.Result wait = rls("wait", id);
        assertThat(wait.code()).as(wait.toString()).isEqualTo(ExitCodes.CANCELLED);
    }

    @Test
    void tokensAreMadeUsedAndRevoked() throws Exception {
        String admin = lab.adminToken();
        LabProcesses.Result made = rlsAs(admin, "token", "create", "--user", "bob");
        assertThat(made.code()).as(made.toString()).isZero();
        String secret = made.out().trim();
        assertThat(secret).startsWith("rls_");
        assertThat(json(rlsAs(secret, "me", "--json")).path("user").asText()).isEqualTo("bob");

        JsonNode tokens = json(rlsAs(admin, "token", "ls", "--json"));
        String tokenId = null;
        for (JsonNode t : tokens.path("tokens")) {
            if ("bob".equals(t.path("user").asText())) {
                tokenId = t.path("id").asText();
            }
        }
        assertThat(tokenId).isNotNull();
        LabProcesses.Result revoke = rlsAs(admin, "token", "revoke", tokenId);
        assertThat(revoke.code()).as(revoke.toString()).isZero();
        assertThat(rlsAs(secret, "ls").code()).isEqualTo(ExitCodes.ERROR);

        LabProcesses.Result notAdmin = rls("token", "create", "--user", "mallory", "--admin");
        assertThat(notAdmin.code()).isEqualTo(ExitCodes.ERROR);
        assertThat(notAdmin.err()).startsWith("rls: ");
    }

    @Test
    void workersQueueAndUsage() throws Exception {
        LabProcesses.Result workers = rls("workers");
        assertThat(workers.code()).as(workers.toString()).isZero();
        assertThat(workers.out()).contains("machine-1").contains("machine-2");
        assertThat(json(rls("workers", "--json")).path("workers")).hasSize(2);
        LabProcesses.Result queue = rls("queue");
        assertThat(queue.code()).as(queue.toString()).isZero();
        LabProcesses.Result usage = rls("submit");
        assertThat(usage.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(usage.err()).startsWith("rls: Missing required parameter");
    }

    @Test
    void theLauncherScriptRunsTheJar() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", LabProcesses.repositoryRoot().resolve("scripts/rls").toString(),
                "--version");
        LabProcesses.Result r = new LabProcesses.Running(pb, tmp.resolve("out")).await(PROCESS_SECONDS);
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).startsWith("rls ");
    }
}
