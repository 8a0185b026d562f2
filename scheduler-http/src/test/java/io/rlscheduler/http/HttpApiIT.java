package io.rlscheduler.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API over real loopback sockets, with the JDK's HTTP client, against a real master,
 * two workers that share nothing, python3 runs and a real Redis: the routes, their errors, auth,
 * the size limit, an SSE follow that reconnects, and a sweep.
 */
class HttpApiIT {

    /** Prints {@code line i} for i in 1..n and a metric every 10 lines; waits at line {@code gate_at} for the file {@code gate}. */
    static final String COUNT = """
            import argparse, json, os, sys, time
            p = argparse.ArgumentParser()
            p.add_argument('--n', type=int, default=5)
            p.add_argument('--gate', default='')
            p.add_argument('--gate_at', type=int, default=0)
            p.add_argument('--fail', default='false')
            p.add_argument('--lr', type=float, default=0.1)
            p.add_argument('--seed', type=int, default=0)
            a, _ = p.parse_known_args()
            for i in range(1, a.n + 1):
                if a.gate and i == a.gate_at:
                    while not os.path.exists(a.gate):
                        time.sleep(0.02)
                print('line %d' % i, flush=True)
                if i % 10 == 0:
                    print('RLS_METRIC ' + json.dumps({'step': i, 'reward': a.lr * i + a.seed}), flush=True)
            print('RLS_METRIC ' + json.dumps({'final_reward': a.lr * 100 + a.seed}), flush=True)
            sys.exit(3 if a.fail == 'true' else 0)
            """;

    @TempDir
    Path dir;
    HttpLab lab;
    Http admin;
    Http alice;
    Http bob;

    @BeforeEach
    void start() {
        lab = HttpLab.start(dir, 2, 2);
        lab.writeScript("count.py", COUNT);
        admin = new Http(lab.url(), lab.adminToken());
        alice = admin.as(lab.token("alice"));
        bob = admin.as(lab.token("bob"));
    }

    @AfterEach
    void stop() {
        lab.close();
    }

    private JsonNode awaitState(Http http, String id, String state) {
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get("/api/v1/runs/" + id).json().path("state").asText(),
                s -> s.equals(state));
        return http.get("/api/v1/runs/" + id).json();
    }

    @Test
    void withoutAValidTokenNothingButTheDocumentIsServed() {
        Http anonymous = admin.as(null);
        Http.Answer none = anonymous.get("/api/v1/runs");
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.code()).isEqualTo("UNAUTHORIZED");
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        assertThat(none.body()).doesNotContain("Exception").doesNotContain("at io.");
        assertThat(admin.as("rls_not-a-token-at-all").get("/api/v1/me").status()).isEqualTo(401);
        assertThat(admin.as("garbage").get("/api/v1/me").status()).isEqualTo(401);
        assertThat(anonymous.post("/api/v1/runs", Map.of("script", "count.py")).status()).isEqualTo(401);
        Http.Answer basic = anonymous.send(anonymous.request("/api/v1/me").header("Authorization", "Basic YTpi").GET().build());
        assertThat(basic.status()).isEqualTo(401);
        assertThat(anonymous.get("/api/v1/openapi.json").status()).isEqualTo(200);
        assertThat(anonymous.get("/api/v1/openapi.json").json().path("paths").has("/api/v1/runs")).isTrue();
        assertThat(lab.master().getTask("x").isPresent()).isFalse();
    }

    @Test
    void aRunIsSubmittedReadListedAndItsLogMetricsAttemptsAndArtifactsServed() throws IOException {
        Http.Answer created = alice.post("/api/v1/runs", Map.of("script", "count.py", "parameters", Map.of("n", 25, "lr", 0.5),
                "gpus", 1, "taskId", "alice-run-1"));
        assertThat(created.status()).as(created.body()).isEqualTo(201);
        assertThat(created.json().path("owner").asText()).isEqualTo("alice");
        assertThat(created.json().path("parameters").path("lr").asDouble()).isEqualTo(0.5);

        JsonNode done = awaitState(alice, "alice-run-1", "SUCCEEDED");
        assertThat(done.path("exitCode").asInt()).isZero();
        assertThat(done.path("finalMetrics").path("final_reward").asDouble()).isEqualTo(50.0);
        assertThat(done.path("history").size()).isGreaterThanOrEqualTo(3);
        assertThat(done.path("gpuIds").size()).isEqualTo(1);

        // The same spec under the same id answers the existing run; another spec is a conflict.
        Http.Answer again = alice.post("/api/v1/runs", Map.of("script", "count.py", "parameters", Map.of("n", 25, "lr", 0.5),
                "gpus", 1, "taskId", "alice-run-1"));
        assertThat(again.status()).isEqualTo(200);
        Http.Answer conflict = alice.post("/api/v1/runs", Map.of("script", "count.py", "parameters", Map.of("n", 26),
                "taskId", "alice-run-1"));
        assertThat(conflict.status()).isEqualTo(409);
        assertThat(conflict.code()).isEqualTo("CONFLICT");

        // Lists and filters.
        assertThat(ids(alice.get("/api/v1/runs?state=SUCCEEDED"))).contains("alice-run-1");
        assertThat(ids(alice.get("/api/v1/runs?mine=true"))).containsExactly("alice-run-1");
        assertThat(ids(bob.get("/api/v1/runs?mine=true"))).isEmpty();
        assertThat(ids(alice.get("/api/v1/runs?script=count.py"))).contains("alice-run-1");
        assertThat(ids(alice.get("/api/v1/runs?script=other.py"))).isEmpty();
        assertThat(ids(alice.get("/api/v1/runs?since=" + (done.path("createdAt").asLong() + 1)))).isEmpty();
        assertThat(alice.get("/api/v1/runs?state=SLEEPING").code()).isEqualTo("BAD_REQUEST");
        assertThat(alice.get("/api/v1/runs?limit=0").code()).isEqualTo("BAD_REQUEST");
        assertThat(alice.get("/api/v1/runs?limit=many").code()).isEqualTo("BAD_REQUEST");

        // The log, whole and by range.
        JsonNode log = alice.get("/api/v1/runs/alice-run-1/log").json();
        List<String> texts = new ArrayList<>();
        log.path("lines").forEach(l -> texts.add(l.path("text").asText()));
        assertThat(texts.stream().filter(t -> t.startsWith("line ")).toList()).hasSize(25).startsWith("line 1").endsWith("line 25");
        assertThat(log.path("ended").asBoolean()).isTrue();
        assertThat(log.path("end").path("state").asText()).isEqualTo("SUCCEEDED");
        JsonNode page = alice.get("/api/v1/runs/alice-run-1/log?limit=5").json();
        assertThat(page.path("lines").size()).isEqualTo(5);
        assertThat(page.path("ended").asBoolean()).isFalse();
        JsonNode next = alice.get("/api/v1/runs/alice-run-1/log?limit=5&after=" + page.path("next").asText()).json();
        assertThat(next.path("lines").get(0).path("text").asText()).isEqualTo(texts.get(5));
        assertThat(alice.get("/api/v1/runs/alice-run-1/log?after=nonsense").code()).isEqualTo("BAD_REQUEST");

        // Metrics, attempts, why, artifacts.
        JsonNode points = alice.get("/api/v1/runs/alice-run-1/metrics").json().path("points");
        assertThat(points.size()).isEqualTo(3);
        assertThat(points.get(0).path("values").path("step").asInt()).isEqualTo(10);
        JsonNode attempts = alice.get("/api/v1/runs/alice-run-1/attempts").json().path("attempts");
        assertThat(attempts.size()).isEqualTo(1);
        assertThat(attempts.get(0).path("scriptSha256").asText()).hasSize(64);
        assertThat(alice.get("/api/v1/runs/alice-run-1/why").json().path("code").asText()).isEqualTo("NOT_QUEUED");
        await().atMost(Duration.ofSeconds(20)).until(() -> alice.get("/api/v1/runs/alice-run-1/artifacts").json()
                .path("artifacts").size() > 0);
        JsonNode artifact = alice.get("/api/v1/runs/alice-run-1/artifacts").json().path("artifacts").get(0);
        Http.Answer file = alice.get("/api/v1/runs/alice-run-1/artifacts/file?key="
                + java.net.URLEncoder.encode(artifact.path("key").asText(), java.nio.charset.StandardCharsets.UTF_8));
        assertThat(file.status()).isEqualTo(200);
        assertThat((long) file.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isEqualTo(artifact.path("size").asLong());
        assertThat(alice.get("/api/v1/runs/alice-run-1/artifacts/file?key=nope").status()).isEqualTo(404);
        assertThat(alice.get("/api/v1/runs/alice-run-1/artifacts/file").code()).isEqualTo("BAD_REQUEST");

        // Unknown things.
        assertThat(alice.get("/api/v1/runs/no-such-run").status()).isEqualTo(404);
        assertThat(alice.get("/api/v1/runs/no-such-run/log").status()).isEqualTo(404);
        assertThat(alice.get("/api/v1/nothing-here").code()).isEqualTo("NOT_FOUND");
        Http.Answer method = alice.delete("/api/v1/runs");
        assertThat(method.status()).isEqualTo(405);
        assertThat(method.headers().firstValue("Allow")).hasValue("GET, POST");
    }

    @Test
    void badSpecsGetTypedErrorsAndChangeNothing() {
        long before = lab.master().listTasksNewest(null, null, 0, 100).getTotal();
        assertThat(alice.post("/api/v1/runs", Map.of("script", "count.py", "gpu", 1)).code()).isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/runs", Map.of("script", "count.py", "gpus", "one")).code()).isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/runs", Map.of("script", "../etc/passwd")).code()).isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/runs", Map.of("script", "count.py", "parameters", Map.of("lr", List.of(1)))).code())
                .isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/runs", Map.of("script", "count.py", "env", Map.of("RLS_RUN_DIR", "/tmp"))).code())
                .isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/runs", Map.of("parameters", Map.of())).message()).contains("script");
        Http.Answer malformed = alice.post("/api/v1/runs", "{\"script\": ");
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(malformed.code()).isEqualTo("BAD_REQUEST");
        assertThat(alice.post("/api/v1/runs", "[1, 2]").code()).isEqualTo("BAD_REQUEST");
        Http.Answer other = alice.post("/api/v1/runs", Map.of("script", "count.py", "owner", "bob"));
        assertThat(other.status()).isEqualTo(403);
        Http.Answer tooLarge = alice.post("/api/v1/runs", "{\"script\": \"count.py\", \"args\": [\"" + "x".repeat(2 << 20) + "\"]}");
        assertThat(tooLarge.status()).isEqualTo(413);
        assertThat(tooLarge.code()).isEqualTo("PAYLOAD_TOO_LARGE");
        assertThat(lab.master().listTasksNewest(null, null, 0, 100).getTotal()).isEqualTo(before);
        // The server serves on.
        assertThat(alice.get("/api/v1/me").json().path("user").asText()).isEqualTo("alice");
        // An admin may submit for another owner.
        Http.Answer forBob = admin.post("/api/v1/runs", Map.of("script", "count.py", "owner", "bob"));
        assertThat(forBob.status()).isEqualTo(201);
        assertThat(forBob.json().path("owner").asText()).isEqualTo("bob");
    }

    @Test
    void onlyTheOwnerOrAnAdminCancelsARun() {
        Path gate = dir.resolve("gate-cancel");
        String id = alice.post("/api/v1/runs", Map.of("script", "count.py", "parameters", Map.of("n", 5, "gate", gate.toString(),
                "gate_at", 3))).json().path("id").asText();
        awaitState(alice, id, "RUNNING");
        Http.Answer refused = bob.post("/api/v1/runs/" + id + "/cancel", Map.of());
        assertThat(refused.status()).isEqualTo(403);
        assertThat(refused.code()).isEqualTo("FORBIDDEN");
        assertThat(alice.get("/api/v1/runs/" + id).json().path("state").asText()).isEqualTo("RUNNING");
        Http.Answer cancelled = alice.post("/api/v1/runs/" + id + "/cancel", Map.of());
        assertThat(cancelled.status()).isEqualTo(200);
        assertThat(cancelled.json().path("cancelled").asBoolean()).isTrue();
        awaitState(alice, id, "CANCELLED");
        assertThat(alice.post("/api/v1/runs/no-such/cancel", Map.of()).status()).isEqualTo(404);
    }

    @Test
    void tokensAreMadeListedAndRevokedAndARevokedOneIsRefused() {
        Http.Answer own = alice.post("/api/v1/tokens", Map.of());
        assertThat(own.status()).isEqualTo(201);
        assertThat(own.json().path("token").asText()).startsWith("rls_");
        assertThat(own.json().path("user").asText()).isEqualTo("alice");
        Http second = alice.as(own.json().path("token").asText());
        assertThat(second.get("/api/v1/me").json().path("user").asText()).isEqualTo("alice");
        assertThat(alice.post("/api/v1/tokens", Map.of("user", "bob")).status()).isEqualTo(403);
        assertThat(alice.post("/api/v1/tokens", Map.of("admin", true)).status()).isEqualTo(403);
        Http.Answer forCarol = admin.post("/api/v1/tokens", Map.of("user", "carol"));
        assertThat(forCarol.status()).isEqualTo(201);
        List<String> mine = new ArrayList<>();
        alice.get("/api/v1/tokens").json().path("tokens").forEach(t -> mine.add(t.path("user").asText()));
        assertThat(mine).hasSize(2).containsOnly("alice");
        assertThat(admin.get("/api/v1/tokens").json().path("tokens").size()).isGreaterThanOrEqualTo(5);
        // Redis holds no secret.
        assertThat(lab.master().apiTokens().list().toString()).doesNotContain(own.json().path("token").asText());
        assertThat(bob.delete("/api/v1/tokens/" + own.json().path("id").asText()).status()).isEqualTo(403);
        assertThat(alice.delete("/api/v1/tokens/" + own.json().path("id").asText()).status()).isEqualTo(204);
        Http.Answer revoked = second.get("/api/v1/me");
        assertThat(revoked.status()).isEqualTo(401);
        assertThat(revoked.json().path("error").path("message").asText()).contains("revoked");
        assertThat(alice.delete("/api/v1/tokens/tk-none").status()).isEqualTo(404);
    }

    @Test
    void theLabsViewsAnswer() {
        JsonNode workers = alice.get("/api/v1/workers").json().path("workers");
        assertThat(workers.size()).isEqualTo(2);
        assertThat(workers.get(0).path("gpus").size()).isEqualTo(2);
        Path gate = dir.resolve("gate-views");
        String id = alice.post("/api/v1/runs", Map.of("script", "count.py", "gpus", 1, "parameters", Map.of("n", 5,
                "gate", gate.toString(), "gate_at", 2))).json().path("id").asText();
        awaitState(alice, id, "RUNNING");
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<String> held = new ArrayList<>();
            alice.get("/api/v1/workers").json().path("workers").forEach(w -> w.path("gpus")
                    .forEach(g -> held.add(g.path("run").asText(""))));
            return held.contains(id);
        });
        // Every GPU is taken: a 4-GPU run waits and says why.
        String big = alice.post("/api/v1/runs", Map.of("script", "count.py", "gpus", 2)).json().path("id").asText();
        String huge = alice.post("/api/v1/runs", Map.of("script", "count.py", "gpus", 8)).json().path("id").asText();
        JsonNode queue = alice.get("/api/v1/queue").json();
        List<String> queued = new ArrayList<>();
        queue.path("runs").forEach(r -> queued.add(r.path("id").asText()));
        assertThat(queued).contains(huge);
        queue.path("runs").forEach(r -> assertThat(r.path("why").path("reasons").size()).isPositive());
        assertThat(alice.get("/api/v1/runs/" + huge + "/why").json().path("code").asText()).isNotEqualTo("NOT_QUEUED");
        JsonNode owners = alice.get("/api/v1/owners").json();
        assertThat(owners.path("owners").toString()).contains("alice");
        assertThat(owners.path("halfLifeSeconds").asLong()).isPositive();
        JsonNode health = alice.get("/api/v1/health").json();
        assertThat(health.path("leader").asBoolean()).isTrue();
        Http.Answer prometheus = alice.get("/api/v1/metrics");
        assertThat(prometheus.status()).isEqualTo(200);
        assertThat(prometheus.body()).contains("rls_queue_depth").contains("rls_http_requests_seconds_count")
                .contains("jvm_memory_used_bytes");
        try {
            Files.writeString(gate, "go");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        awaitState(alice, id, "SUCCEEDED");
        awaitState(alice, big, "SUCCEEDED");
        alice.post("/api/v1/runs/" + huge + "/cancel", Map.of());
    }

    @Test
    void aLogFollowThatReconnectsWithLastEventIdMissesNoLineAndRepeatsNone() throws Exception {
        Path gate = dir.resolve("gate-sse");
        String id = alice.post("/api/v1/runs", Map.of("script", "count.py", "parameters", Map.of("n", 200, "gate", gate.toString(),
                "gate_at", 101))).json().path("id").asText();
        List<String> seen = new ArrayList<>();
        String lastId = null;
        try (Http.Stream first = alice.stream("/api/v1/runs/" + id + "/log/stream", Map.of())) {
            assertThat(first.status).isEqualTo(200);
            while (seen.size() < 50) {
                Http.Event e = first.next();
                assertThat(e).isNotNull();
                assertThat(e.event()).isEqualTo("line");
                seen.add(e.json().path("text").asText());
                lastId = e.id();
            }
        }
        // Disconnected: the rest of the run is written while no one follows.
        Files.writeString(gate, "go");
        awaitState(alice, id, "SUCCEEDED");
        List<Http.Event> rest;
        try (Http.Stream second = alice.stream("/api/v1/runs/" + id + "/log/stream", Map.of("Last-Event-ID", lastId))) {
            rest = second.rest();
        }
        Http.Event end = rest.get(rest.size() - 1);
        assertThat(end.event()).isEqualTo("end");
        assertThat(end.json().path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(end.json().path("complete").asBoolean()).isTrue();
        rest.subList(0, rest.size() - 1).forEach(e -> seen.add(e.json().path("text").asText()));
        List<String> expected = new ArrayList<>();
        for (int i = 1; i <= 200; i++) {
            expected.add("line " + i);
        }
        assertThat(seen.stream().filter(t -> t.startsWith("line ")).toList()).isEqualTo(expected);
        // ?after= does the same for clients that cannot set the header, and the query token works for EventSource.
        Http anonymous = alice.as(null);
        String aliceToken = lab.token("alice");
        try (Http.Stream third = anonymous.stream("/api/v1/runs/" + id + "/log/stream?after=" + lastId + "&access_token="
                + aliceToken, Map.of())) {
            assertThat(third.rest().size()).isEqualTo(rest.size());
        }
        // The metric points live, then the end.
        try (Http.Stream metrics = alice.stream("/api/v1/runs/" + id + "/metrics/stream", Map.of())) {
            List<Http.Event> points = metrics.rest();
            assertThat(points.stream().filter(e -> e.event().equals("metric")).count()).isEqualTo(21);
            assertThat(points.get(points.size() - 1).event()).isEqualTo("end");
        }
        try (Http.Stream missing = alice.stream("/api/v1/runs/nope/log/stream", Map.of())) {
            assertThat(missing.status).isEqualTo(404);
        }
    }

    @Test
    void theEventStreamCarriesEveryStateChangeOfARun() throws Exception {
        try (Http.Stream events = alice.stream("/api/v1/events", Map.of())) {
            assertThat(events.status).isEqualTo(200);
            String id = alice.post("/api/v1/runs", Map.of("script", "count.py")).json().path("id").asText();
            List<String> states = new ArrayList<>();
            while (!states.contains("SUCCEEDED")) {
                Http.Event e = events.next();
                assertThat(e).isNotNull();
                if (e.event().equals("task") && e.json().path("id").asText().equals(id)) {
                    states.add(e.json().path("to").asText());
                }
            }
            assertThat(states).startsWith("QUEUED").contains("RUNNING").endsWith("SUCCEEDED");
        }
    }

    @Test
    void aSweepIsSubmittedInOneCallListedAndComparedByItsId() {
        Http.Answer sweep = alice.post("/api/v1/sweeps", Map.of("base", Map.of("script", "count.py", "parameters", Map.of("n", 3)),
                "grid", Map.of("lr", List.of(0.1, 0.2, 0.3)), "seeds", List.of(1, 2), "name", "lr scan"));
        assertThat(sweep.status()).as(sweep.body()).isEqualTo(201);
        String sweepId = sweep.json().path("id").asText();
        assertThat(sweep.json().path("runIds").size()).isEqualTo(6);
        for (JsonNode run : sweep.json().path("runIds")) {
            awaitState(alice, run.asText(), "SUCCEEDED");
        }
        JsonNode listed = alice.get("/api/v1/runs?sweep=" + sweepId).json();
        assertThat(listed.path("total").asInt()).isEqualTo(6);
        listed.path("runs").forEach(r -> assertThat(r.path("sweep").asText()).isEqualTo(sweepId));
        JsonNode whole = alice.get("/api/v1/sweeps/" + sweepId).json();
        assertThat(whole.path("name").asText()).isEqualTo("lr scan");
        assertThat(whole.path("runs").size()).isEqualTo(6);
        assertThat(alice.get("/api/v1/sweeps?mine=true").json().path("sweeps").get(0).path("id").asText()).isEqualTo(sweepId);
        JsonNode compared = alice.get("/api/v1/sweeps/" + sweepId + "/compare?metric=final_reward").json();
        assertThat(compared.path("varying").toString()).contains("lr").contains("seed");
        assertThat(compared.path("runs").size()).isEqualTo(6);
        // The best: lr 0.3 with seed 2 (final_reward = 100 lr + seed).
        assertThat(compared.path("best").asText()).isEqualTo(sweepId + "-005");
        JsonNode lower = alice.get("/api/v1/sweeps/" + sweepId + "/compare?metric=final_reward&higher=false").json();
        assertThat(lower.path("best").asText()).isEqualTo(sweepId + "-000");
        JsonNode byIds = alice.get("/api/v1/compare?ids=" + sweepId + "-000," + sweepId + "-001&metric=final_reward").json();
        assertThat(byIds.path("varying").toString()).contains("seed").doesNotContain("lr");
        assertThat(alice.post("/api/v1/sweeps", Map.of("base", Map.of("script", "count.py"))).code()).isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/sweeps", Map.of("base", Map.of("script", "count.py"), "grid", Map.of("lr", List.of()))).code())
                .isEqualTo("INVALID_SPEC");
        assertThat(alice.post("/api/v1/sweeps", Map.of("base", Map.of("script", "count.py"), "seeds",
                java.util.stream.LongStream.range(0, 1001).boxed().toList())).code()).isEqualTo("INVALID_SPEC");
        assertThat(alice.get("/api/v1/sweeps/nope").status()).isEqualTo(404);
        // Submitting a sweep of a given id again gets the same sweep.
        Map<String, Object> named = Map.of("id", "alice-sweep", "base", Map.of("script", "count.py"), "seeds", List.of(7));
        assertThat(alice.post("/api/v1/sweeps", named).status()).isEqualTo(201);
        assertThat(alice.post("/api/v1/sweeps", named).json().path("runIds").size()).isEqualTo(1);
        assertThat(alice.post("/api/v1/sweeps", Map.of("id", "alice-sweep", "base", Map.of("script", "count.py"), "seeds",
                List.of(8))).code()).isEqualTo("CONFLICT");
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrderOneAtATime() throws Exception {
        java.net.URI uri = java.net.URI.create(lab.url());
        try (java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort())) {
            String auth = "Authorization: Bearer " + lab.adminToken() + "\r\n";
            // Three requests in one write: the first is slow (a Redis read), the others fast.
            String requests = "GET /api/v1/workers HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n"
                    + "GET /api/v1/me HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n"
                    + "GET /api/v1/nothing HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n";
            socket.getOutputStream().write(requests.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            java.io.BufferedInputStream in = new java.io.BufferedInputStream(socket.getInputStream());
            List<String> bodies = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                int length = -1;
                String status = readLine(in);
                for (String h; !(h = readLine(in)).isEmpty(); ) {
                    if (h.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                        length = Integer.parseInt(h.substring(15).trim());
                    }
                }
                bodies.add(status + " " + new String(in.readNBytes(length), java.nio.charset.StandardCharsets.UTF_8));
            }
            assertThat(bodies.get(0)).startsWith("HTTP/1.1 200").contains("\"workers\"");
            assertThat(bodies.get(1)).startsWith("HTTP/1.1 200").contains("\"user\":\"admin\"");
            assertThat(bodies.get(2)).startsWith("HTTP/1.1 404").contains("NOT_FOUND");
        }
    }

    private static String readLine(java.io.InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c; (c = in.read()) != -1 && c != '\n'; ) {
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    @Test
    void aRunsEnvironmentValuesAreShownToItsOwnerAndAdminsOnly() {
        String id = alice.post("/api/v1/runs", Map.of("script", "count.py", "env", Map.of("WANDB_API_KEY", "secret-key")))
                .json().path("id").asText();
        assertThat(alice.get("/api/v1/runs/" + id).json().path("env").path("WANDB_API_KEY").asText()).isEqualTo("secret-key");
        assertThat(admin.get("/api/v1/runs/" + id).json().path("env").path("WANDB_API_KEY").asText()).isEqualTo("secret-key");
        JsonNode seenByBob = bob.get("/api/v1/runs/" + id).json();
        assertThat(seenByBob.path("env").has("WANDB_API_KEY")).isTrue();
        assertThat(seenByBob.path("env").path("WANDB_API_KEY").isNull()).isTrue();
        assertThat(seenByBob.path("envHidden").asBoolean()).isTrue();
        assertThat(bob.get("/api/v1/runs?owner=alice").body()).doesNotContain("secret-key");
    }

    @Test
    void aSweepCannotTakeTheIdOfARunOutsideItAndHeadIsNotServed() {
        assertThat(alice.post("/api/v1/runs", Map.of("script", "count.py", "taskId", "exp-000")).status()).isEqualTo(201);
        Http.Answer taken = bob.post("/api/v1/sweeps", Map.of("id", "exp", "base", Map.of("script", "count.py"), "seeds", List.of(1)));
        assertThat(taken.status()).isEqualTo(409);
        assertThat(taken.message()).contains("exp-000");
        assertThat(alice.get("/api/v1/runs/exp-000").json().path("sweep").isNull()).isTrue();
        assertThat(bob.get("/api/v1/sweeps/exp").status()).isEqualTo(404);
        Http.Answer head = alice.send(alice.request("/api/v1/runs").method("HEAD", java.net.http.HttpRequest.BodyPublishers.noBody())
                .build());
        assertThat(head.status()).isEqualTo(405);
        assertThat(admin.as(null).get("/api/v1/sweeps?mine=true").status()).isEqualTo(401);
    }

    @Test
    void aUserMakesAtMostTwentyTokensAloneAndAnAdminMore() {
        for (int i = 0; i < 19; i++) { // alice has one already
            assertThat(alice.post("/api/v1/tokens", Map.of()).status()).isEqualTo(201);
        }
        Http.Answer refused = alice.post("/api/v1/tokens", Map.of());
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.message()).contains("revoke one");
        assertThat(admin.post("/api/v1/tokens", Map.of("user", "alice")).status()).isEqualTo(201);
    }

    private static List<String> ids(Http.Answer answer) {
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        List<String> ids = new ArrayList<>();
        answer.json().path("runs").forEach(r -> ids.add(r.path("id").asText()));
        return ids;
    }
}
