package io.rlscheduler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rls in-process against a scripted HTTP server (the JDK's), for what a real master does not do on
 * demand: a log stream that drops mid-way and repeats a line, odd error bodies.
 */
class RlsFakeServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    private HttpServer server;
    private final List<String> lastEventIds = new CopyOnWriteArrayList<>();
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    private final AtomicInteger runReads = new AtomicInteger();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", this::handle);
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        authorizations.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
        String path = ex.getRequestURI().getPath();
        String query = ex.getRequestURI().getRawQuery();
        bodies.add(ex.getRequestMethod() + " " + ex.getRequestURI() + " "
                + new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
        switch (path) {
            case "/api/v1/runs/r1/log/stream":
                followLog(ex);
                return;
            case "/api/v1/runs/w1":
                // RUNNING for the first read, FAILED afterwards; the event stream says when.
                String state = runReads.incrementAndGet() == 1 ? "RUNNING" : "FAILED";
                json(ex, 200, "{\"id\":\"w1\",\"state\":\"" + state + "\",\"attempt\":1,\"maxAttempts\":1,"
                        + "\"exitCode\":" + ("FAILED".equals(state) ? "3" : "null") + ",\"error\":"
                        + ("FAILED".equals(state) ? "\"exit code 3\"" : "null") + "}");
                return;
            case "/api/v1/runs/slow":
                json(ex, 200, "{\"id\":\"slow\",\"state\":\"QUEUED\",\"attempt\":0,\"maxAttempts\":3}");
                return;
            case "/api/v1/runs/slow/why":
                json(ex, 200, "{\"code\":\"NO_CAPACITY\",\"message\":\"no worker has 8 free GPUs\",\"position\":0}");
                return;
            case "/api/v1/events":
                events(ex);
                return;
            case "/api/v1/runs":
                if ("POST".equals(ex.getRequestMethod())) {
                    json(ex, 201, "{\"id\":\"r-1\",\"state\":\"QUEUED\"}");
                } else {
                    json(ex, 200, "{\"runs\":[{\"id\":\"a\",\"state\":\"RUNNING\",\"owner\":\"alice\",\"script\":\"train.py\","
                            + "\"parameters\":{\"lr\":0.1},\"gpus\":1,\"attempt\":1,\"maxAttempts\":3,\"createdAt\":1},"
                            + "{\"id\":\"long-run-id\",\"state\":\"QUEUED\",\"owner\":\"bob\",\"script\":\"t.py\","
                            + "\"parameters\":{},\"gpus\":0,\"attempt\":0,\"maxAttempts\":3,\"createdAt\":1}],"
                            + "\"total\":5,\"offset\":0,\"limit\":2}");
                }
                return;
            case "/api/v1/runs/html":
                byte[] b = "<html>oops</html>".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(502, b.length);
                ex.getResponseBody().write(b);
                ex.close();
                return;
            default:
                json(ex, 404, "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no such run: " + path + "\"}}");
        }
        if (query != null) {
            throw new IllegalStateException();
        }
    }

    /** The first connection sends lines 1..3 and drops; the next resends line 3, then 4, 5 and the end. */
    private void followLog(HttpExchange ex) throws IOException {
        String lastId = ex.getRequestHeaders().getFirst("Last-Event-ID");
        lastEventIds.add(String.valueOf(lastId));
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream out = ex.getResponseBody()) {
            if (lastId == null) {
                out.write(": hello\n\n".getBytes(StandardCharsets.UTF_8));
                for (int i = 1; i <= 3; i++) {
                    out.write(line(1, i).getBytes(StandardCharsets.UTF_8));
                }
            } else {
                StringBuilder s = new StringBuilder(line(1, 3)).append(line(1, 4)).append(line(2, 1));
                s.append("event: end\ndata: {\"state\":\"SUCCEEDED\",\"complete\":true,\"note\":null}\n\n");
                out.write(s.toString().getBytes(StandardCharsets.UTF_8));
            }
            out.flush();
        }
    }

    private static String line(int attempt, int seq) {
        return "id: " + attempt + ":" + seq + "\nevent: line\ndata: {\"attempt\":" + attempt + ",\"seq\":" + seq
                + ",\"stream\":\"STDOUT\",\"text\":\"line " + attempt + "." + seq + "\"}\n\n";
    }

    private void events(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream out = ex.getResponseBody()) {
            out.write("event: task\ndata: {\"id\":\"other\",\"from\":\"QUEUED\",\"to\":\"ASSIGNED\"}\n\n"
                    .getBytes(StandardCharsets.UTF_8));
            out.write("event: task\ndata: {\"id\":\"w1\",\"from\":\"RUNNING\",\"to\":\"FAILED\"}\n\n"
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            // hold the stream open a little, as a live server would; the client closes it
            for (int i = 0; i < 20; i++) {
                out.write(": keep-alive\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                Thread.sleep(100);
            }
        } catch (IOException | InterruptedException e) {
            // the client went away
        }
    }

    private static void json(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        ex.getResponseBody().write(b);
        ex.close();
    }

    private record Result(int code, String out, String err) {
    }

    private Result rls(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Rls.run(args, new PrintWriter(out, true), new PrintWriter(err, true),
                Map.of("RLS_SERVER", url(), "RLS_TOKEN", "rls_test"), home, false);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void logsFollowReconnectsWithLastEventIdAndNeitherRepeatsNorMisses() {
        Result r = rls("logs", "-f", "r1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines()).containsExactly("line 1.1", "line 1.2", "line 1.3", "line 1.4",
                "--- attempt 2 ---", "line 2.1");
        assertThat(lastEventIds).containsExactly("null", "1:3");
        assertThat(authorizations).allMatch("Bearer rls_test"::equals);
    }

    @Test
    void logsFollowJsonIsOneDocumentPerLine() throws Exception {
        Result r = rls("logs", "-f", "--json", "r1");
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines).hasSize(6);
        assertThat(JSON.readTree(lines.get(0)).path("id").asText()).isEqualTo("1:1");
        assertThat(JSON.readTree(lines.get(4)).path("text").asText()).isEqualTo("line 2.1");
        assertThat(JSON.readTree(lines.get(5)).path("end").path("state").asText()).isEqualTo("SUCCEEDED");
    }

    @Test
    void waitFollowsTheEventsAndExitsWithTheRunsState() {
        Result r = rls("wait", "w1");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.out()).contains("w1 FAILED (exit code 3): exit code 3");
    }

    @Test
    void waitGivesUpAfterItsTimeoutWithExit5() {
        Result r = rls("wait", "--timeout", "1s", "--progress", "slow");
        assertThat(r.code()).isEqualTo(ExitCodes.WAIT_TIMEOUT);
        assertThat(r.err()).contains("rls: gave up waiting for slow").contains("QUEUED");
        assertThat(r.err()).contains("slow QUEUED (NO_CAPACITY #1)");
    }

    @Test
    void serverErrorsAreOneLineWithExit6() {
        Result r = rls("show", "nope");
        assertThat(r.code()).isEqualTo(ExitCodes.ERROR);
        assertThat(r.err()).isEqualTo("rls: no such run: /api/v1/runs/nope" + System.lineSeparator());
        Result html = rls("show", "html");
        assertThat(html.code()).isEqualTo(ExitCodes.ERROR);
        assertThat(html.err()).startsWith("rls: HTTP 502 from ").contains("<html>oops</html>").doesNotContain("Exception");
    }

    @Test
    void anUnreachableServerIsExit6WithoutAStackTrace() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Rls.run(new String[] {"ls"}, new PrintWriter(out), new PrintWriter(err),
                Map.of("RLS_SERVER", "http://127.0.0.1:1"), home, false);
        assertThat(code).isEqualTo(ExitCodes.ERROR);
        assertThat(err.toString()).startsWith("rls: cannot reach the server at http://127.0.0.1:1").doesNotContain("\tat ");
    }

    @Test
    void submitSendsTheTypedSpec() throws Exception {
        Result r = rls("submit", "train.py", "-p", "lr=0.1", "-p", "episodes=500", "-p", "algo=ppo", "--gpus", "1",
                "--priority", "5", "--timeout", "2h", "--selector", "gpu=a100", "--id", "my-1", "--env", "A=b",
                "--max-attempts", "2", "--", "--verbose");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("submitted r-1 (QUEUED)" + System.lineSeparator());
        String post = bodies.stream().filter(b -> b.startsWith("POST /api/v1/runs ")).findFirst().orElseThrow();
        JsonNode spec = JSON.readTree(post.substring("POST /api/v1/runs ".length()));
        assertThat(spec.toString()).isEqualTo("{\"script\":\"train.py\",\"parameters\":{\"lr\":0.1,\"episodes\":500,"
                + "\"algo\":\"ppo\"},\"args\":[\"--verbose\"],\"env\":{\"A\":\"b\"},\"gpus\":1,\"priority\":5,"
                + "\"timeoutSeconds\":7200,\"maxAttempts\":2,\"selector\":{\"gpu\":\"a100\"},\"taskId\":\"my-1\"}");
    }

    @Test
    void lsPrintsAlignedColumnsAndJsonPrintsTheServersDocument() throws Exception {
        Result r = rls("ls", "--state", "running", "--mine", "--limit", "2");
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).startsWith("ID           STATE    OWNER  SCRIPT    GPUS  ATTEMPT");
        assertThat(lines.get(1)).startsWith("a            RUNNING  alice  train.py  1     1/3");
        assertThat(lines.get(1)).endsWith("lr=0.1");
        assertThat(lines.get(3)).isEqualTo("(1-2 of 5; --offset 2 for more)");
        assertThat(bodies).anyMatch(b -> b.startsWith("GET /api/v1/runs?state=RUNNING&mine=true&limit=2 "));

        Result j = rls("--json", "ls");
        assertThat(JSON.readTree(j.out()).path("total").asInt()).isEqualTo(5);
    }

    @Test
    void usageErrorsExit2() {
        assertThat(rls("submit").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(rls("submit", "t.py", "-p", "novalue").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(rls("wait", "x", "--timeout", "soon").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(rls("compare").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(rls("frobnicate").code()).isEqualTo(ExitCodes.USAGE);
        Result none = rls();
        assertThat(none.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(none.err()).startsWith("rls: ");
    }
}
