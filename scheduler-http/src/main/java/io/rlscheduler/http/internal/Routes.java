package io.rlscheduler.http.internal;

import static io.netty.handler.codec.http.HttpMethod.DELETE;
import static io.netty.handler.codec.http.HttpMethod.GET;
import static io.netty.handler.codec.http.HttpMethod.POST;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.rlscheduler.core.IllegalTaskStateException;
import io.rlscheduler.core.OwnerLimitExceededException;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskIdConflictException;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.http.internal.Router.Access;
import io.rlscheduler.master.Artifact;
import io.rlscheduler.master.RunArtifacts;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.Sweep;
import io.rlscheduler.master.SweepSpec;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.store.ArtifactNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API's route table and how every request is taken (docs/http.md): on a request thread, its
 * route, its caller's token, its handler, its typed error, its timer. The handlers of runs, sweeps
 * and compare are here; those of logs and live streams are {@link LogRoutes}, those of the lab's
 * views and the tokens {@link LabRoutes}.
 */
final class Routes {

    private static final Logger log = LoggerFactory.getLogger(Routes.class);
    private static final int MAX_LIST = 500;
    private static final int DOWNLOAD_CHUNK = 64 * 1024;

    private final SchedulerMaster master;
    private final Settings settings;
    private final PrometheusMeterRegistry registry;
    private final Streams streams;
    private final Router router = new Router();
    private final StaticFiles files = new StaticFiles();
    private final ApiMetrics metrics;
    private final TokenCache tokens;
    /** Downloads at once: each holds a request thread while the client reads. */
    private final java.util.concurrent.Semaphore downloads;
    /** The request threads: answers to asynchronous calls are written from here, not from Redis's I/O thread. */
    private final java.util.concurrent.Executor requests;

    Routes(SchedulerMaster master, Settings settings, PrometheusMeterRegistry registry, Streams streams,
           java.util.concurrent.Executor requests) {
        this.master = master;
        this.requests = requests;
        this.settings = settings;
        this.registry = registry;
        this.streams = streams;
        this.metrics = new ApiMetrics(master, registry, streams);
        this.downloads = new java.util.concurrent.Semaphore(Math.max(1, settings.requestThreads() / 4));
        this.tokens = new TokenCache(master == null ? null : master.apiTokens(), settings.tokenCacheTtl().toNanos());
        LogRoutes logs = new LogRoutes(master, streams);
        LabRoutes lab = new LabRoutes(master, tokens);
        add(GET, "/api/v1/openapi.json", Access.PUBLIC, this::openApi);
        add(GET, "/api/v1/me", Access.USER, lab::me);
        add(GET, "/api/v1/health", Access.READ, ex -> ex.ok(Views.health(master.health())));
        add(GET, "/api/v1/metrics", Access.READ, this::prometheus);
        add(POST, "/api/v1/runs", Access.USER, this::submit);
        add(GET, "/api/v1/runs", Access.READ, this::listRuns);
        add(GET, "/api/v1/runs/{id}", Access.READ, this::run);
        add(GET, "/api/v1/runs/{id}/attempts", Access.READ, this::attempts);
        add(GET, "/api/v1/runs/{id}/why", Access.READ, ex -> ex.ok(Views.why(master.whyPending(id(ex)))));
        add(GET, "/api/v1/runs/{id}/artifacts", Access.READ, this::artifacts);
        add(GET, "/api/v1/runs/{id}/artifacts/file", Access.READ, this::artifactFile);
        add(POST, "/api/v1/runs/{id}/cancel", Access.USER, this::cancel);
        add(GET, "/api/v1/runs/{id}/log", Access.READ, logs::log);
        add(GET, "/api/v1/runs/{id}/log/stream", Access.READ, ex -> logs.follow(ex, false));
        add(GET, "/api/v1/runs/{id}/metrics", Access.READ, logs::metricPoints);
        add(GET, "/api/v1/runs/{id}/metrics/stream", Access.READ, ex -> logs.follow(ex, true));
        add(POST, "/api/v1/sweeps", Access.USER, this::submitSweep);
        add(GET, "/api/v1/sweeps", Access.READ, this::listSweeps);
        add(GET, "/api/v1/sweeps/{id}", Access.READ, this::sweep);
        add(GET, "/api/v1/sweeps/{id}/compare", Access.READ, this::compareSweep);
        add(GET, "/api/v1/compare", Access.READ, this::compare);
        add(GET, "/api/v1/workers", Access.READ, lab::workers);
        add(GET, "/api/v1/queue", Access.READ, lab::queue);
        add(GET, "/api/v1/owners", Access.READ, lab::owners);
        add(GET, "/api/v1/events", Access.READ, logs::events);
        add(POST, "/api/v1/tokens", Access.USER, lab::createToken);
        add(GET, "/api/v1/tokens", Access.USER, lab::listTokens);
        add(DELETE, "/api/v1/tokens/{id}", Access.USER, lab::revokeToken);
    }

    private void add(HttpMethod method, String pattern, Access access, Consumer<Exchange> handler) {
        router.add(method, pattern, access, handler);
    }

    /** The routes, for the OpenAPI document's test. */
    List<Router.Route> routes() {
        return router.routes();
    }

    void handle(Exchange ex) {
        try {
            dispatch(ex);
        } catch (RuntimeException e) {
            fail(ex, e);
        }
        if (!ex.deferred) {
            measured(ex);
        }
    }

    private void measured(Exchange ex) {
        metrics.request(ex.method().name(), ex.routePattern, ex.answered == null ? 200 : ex.answered.code(),
                System.nanoTime() - ex.startNanos);
    }

    /** Answers a failure with its typed error; only the unexpected ones are logged, with their stack. */
    private void fail(Exchange ex, Throwable failure) {
        Throwable e = failure;
        while ((e instanceof java.util.concurrent.CompletionException || e instanceof java.util.concurrent.ExecutionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof ApiException a) {
            ex.error(a, a.status() == HttpResponseStatus.UNAUTHORIZED ? Map.of("WWW-Authenticate", "Bearer") : null);
        } else if (e instanceof TaskNotFoundException || e instanceof ArtifactNotFoundException) {
            ex.error(ApiException.notFound(e.getMessage()), null);
        } else if (e instanceof TaskIdConflictException || e instanceof IllegalTaskStateException) {
            ex.error(new ApiException(HttpResponseStatus.CONFLICT, "CONFLICT", e.getMessage()), null);
        } else if (e instanceof OwnerLimitExceededException o) {
            Map<String, String> headers = o.getRetryAfter()
                    .map(d -> Map.of("Retry-After", Long.toString(Math.max(1, (d.toMillis() + 999) / 1000)))).orElse(null);
            ex.error(new ApiException(HttpResponseStatus.TOO_MANY_REQUESTS, "OWNER_LIMIT", o.getMessage()), headers);
        } else if (e instanceof IllegalArgumentException) {
            ex.error(ApiException.badRequest(e.getMessage()), null);
        } else if (e instanceof SchedulerException s && s.isRetryable()) {
            log.warn("{} {} answered 503: {}", ex.method(), ex.path(), s.toString());
            ex.error(new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE",
                    "Redis or the artifact store did not answer in time; retry"), Map.of("Retry-After", "1"));
        } else if (e instanceof IllegalStateException && master != null && !isRunning()) {
            ex.error(new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE", "the master is not running"),
                    Map.of("Retry-After", "1"));
        } else if (e instanceof SchedulerException s) {
            log.warn("{} {} failed", ex.method(), ex.path(), s);
            ex.error(new ApiException(HttpResponseStatus.INTERNAL_SERVER_ERROR, "INTERNAL",
                    "the server failed to answer; its log says why"), null);
        } else {
            log.error("{} {} failed", ex.method(), ex.path(), e);
            ex.error(new ApiException(HttpResponseStatus.INTERNAL_SERVER_ERROR, "INTERNAL",
                    "the server failed to answer; its log says why"), null);
        }
    }

    private boolean isRunning() {
        return !master.isShutdown();
    }

    private void dispatch(Exchange ex) {
        if (!ex.path().startsWith("/api/") && (ex.method().equals(GET) || ex.method().equals(HttpMethod.HEAD))
                && files.serve(ex)) {
            ex.routePattern = "static";
            return;
        }
        if (ex.method().equals(HttpMethod.HEAD)) {
            throw new ApiException(HttpResponseStatus.METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "HEAD is not served on "
                    + ex.path() + "; use GET");
        }
        Router.Match match = router.match(ex.method(), ex.path());
        if (match == null) {
            throw ApiException.notFound("no route " + ex.method() + " " + ex.path());
        }
        if (match.route() == null) {
            ex.error(new ApiException(HttpResponseStatus.METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED",
                    ex.method() + " is not allowed on " + ex.path() + "; allowed: " + match.allow()), Map.of("Allow", match.allow()));
            return;
        }
        ex.routePattern = match.route().pattern();
        ex.pathParams(match.params());
        authenticate(ex, match.route().access());
        match.route().handler().accept(ex);
    }

    private void authenticate(Exchange ex, Access access) {
        if (access == Access.PUBLIC) {
            return;
        }
        String secret = null;
        String authorization = ex.header(HttpHeaderNames.AUTHORIZATION);
        if (authorization != null) {
            if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
                throw ApiException.unauthorized("the Authorization header must be 'Bearer <token>'");
            }
            secret = authorization.substring(7).strip();
        } else if (ex.method().equals(GET)) {
            secret = ex.query("access_token");
        }
        if (secret == null || secret.isEmpty()) {
            if (access == Access.READ && settings.readOnlyAnonymous()) {
                return;
            }
            throw ApiException.unauthorized("this route needs a token: Authorization: Bearer <token>");
        }
        ex.caller = tokens.verify(secret)
                .orElseThrow(() -> ApiException.unauthorized("the token is not known or was revoked"));
        if (access == Access.ADMIN && !ex.caller.admin()) {
            throw ApiException.forbidden("this route is for admins");
        }
    }

    // --- runs

    static String id(Exchange ex) {
        String id = ex.pathParam("id");
        if (!TaskIds.isValid(id)) {
            throw ApiException.badRequest("not a valid id: '" + id + "'");
        }
        return id;
    }

    private TaskRecord record(String id) {
        return record(master, id);
    }

    static TaskRecord record(SchedulerMaster master, String id) {
        return master.getTask(id).orElseThrow(() -> ApiException.notFound("no run " + id));
    }

    private String sweepOf(String taskId) {
        return master.sweepsOf(List.of(taskId)).get(taskId);
    }

    /** A run's view for this caller: its environment's values only for its owner and admins (they may hold keys). */
    static ObjectNode runView(Exchange ex, TaskRecord r, String sweepId) {
        return Views.run(r, sweepId, ex.isAdmin() || r.getOwner().equals(ex.user()));
    }

    private void submit(Exchange ex) {
        JsonNode body = ex.jsonBody();
        TaskSpec spec = Specs.run(body, ex.user(), ex.isAdmin());
        if (!body.hasNonNull("taskId")) {
            // A new id: the run is certainly new, and its record is what the spec says. Answered from
            // the submission's callback, so no request thread waits on Redis and submissions batch.
            CompletableFuture<TaskHandle> submitted = master.submitAsync(spec); // a failure here is answered as any other
            ex.deferred = true;
            submitted.whenComplete((handle, failure) -> {
                Runnable answer = () -> {
                    try {
                        if (failure != null) {
                            fail(ex, failure);
                        } else {
                            ex.json(HttpResponseStatus.CREATED, Views.submitted(spec));
                        }
                    } catch (RuntimeException e) {
                        fail(ex, e);
                    } finally {
                        measured(ex);
                        ex.finish();
                    }
                };
                try {
                    requests.execute(answer);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    answer.run(); // the request threads are gone or full: answered here, short, rather than never
                }
            });
            return;
        }
        boolean existed = master.getTask(spec.getTaskId()).isPresent();
        TaskHandle handle = master.submit(spec);
        ex.json(existed ? HttpResponseStatus.OK : HttpResponseStatus.CREATED,
                runView(ex, handle.getRecord(), sweepOf(handle.getTaskId())));
    }

    private void run(Exchange ex) {
        String id = id(ex);
        ex.ok(runView(ex, record(id), sweepOf(id)));
    }

    private void listRuns(Exchange ex) {
        int offset = ex.intQuery("offset", 0, 0, Integer.MAX_VALUE - MAX_LIST);
        int limit = ex.intQuery("limit", 50, 1, MAX_LIST);
        TaskState state = state(ex.query("state"));
        String owner = ownerFilter(ex);
        String sweepId = ex.query("sweep");
        String script = ex.query("script");
        long since = ex.longQuery("since", Long.MIN_VALUE);
        long until = ex.longQuery("until", Long.MAX_VALUE);
        List<TaskRecord> records;
        long total;
        if (sweepId != null) {
            Sweep sweep = master.sweep(sweepId).orElseThrow(() -> ApiException.notFound("no sweep " + sweepId));
            List<String> ids = sweep.getRunIds();
            records = master.getTasks(ids.subList(Math.min(offset, ids.size()), Math.min(offset + limit, ids.size())));
            total = ids.size();
            String o = owner;
            records = records.stream().filter(r -> (state == null || r.getState() == state)
                    && (o == null || o.equals(r.getOwner()))).toList();
        } else if (state != null && owner != null) {
            TaskPage page = master.listTasksNewest(null, owner, offset, limit);
            records = page.getTasks().stream().filter(r -> r.getState() == state).toList();
            total = page.getTotal();
        } else {
            TaskPage page = master.listTasksNewest(state, owner, offset, limit);
            records = page.getTasks();
            total = page.getTotal();
        }
        List<TaskRecord> shown = new ArrayList<>();
        for (TaskRecord r : records) {
            if ((script == null || script.equals(Views.spec(r).path("script").asText()))
                    && r.getCreatedAtMillis() >= since && r.getCreatedAtMillis() <= until) {
                shown.add(r);
            }
        }
        Map<String, String> sweeps = master.sweepsOf(shown.stream().map(TaskRecord::getTaskId).toList());
        ObjectNode o = Views.object();
        ArrayNode runs = o.putArray("runs");
        shown.forEach(r -> runs.add(runView(ex, r, sweeps.get(r.getTaskId()))));
        o.put("total", total);
        o.put("offset", offset);
        o.put("limit", limit);
        ex.ok(o);
    }

    /** The owner a listing is filtered by: {@code owner}, or the caller's user for {@code mine=true}; null for all. */
    private static String ownerFilter(Exchange ex) {
        String owner = ex.query("owner");
        if (ex.boolQuery("mine")) {
            if (ex.user() == null) {
                throw ApiException.unauthorized("mine=true needs a token");
            }
            owner = ex.user();
        }
        if (owner != null && !TaskIds.isValid(owner)) {
            throw ApiException.badRequest("not a valid owner: '" + owner + "'");
        }
        return owner;
    }

    private static TaskState state(String s) {
        if (s == null || s.isEmpty()) {
            return null;
        }
        try {
            return TaskState.valueOf(s.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("state must be one of " + Arrays.toString(TaskState.values()) + ", was '" + s + "'");
        }
    }

    private void attempts(Exchange ex) {
        String id = id(ex);
        ObjectNode o = Views.object();
        ArrayNode attempts = o.putArray("attempts");
        master.task(id).provenance().forEach(p -> attempts.add(Views.provenance(p)));
        ex.ok(o);
    }

    private void artifacts(Exchange ex) {
        String id = id(ex);
        RunArtifacts artifacts = master.task(id).artifacts();
        ObjectNode o = Views.object();
        ArrayNode list = o.putArray("artifacts");
        artifacts.list().forEach(a -> list.add(Views.artifact(a)));
        ex.ok(o);
    }

    private void artifactFile(Exchange ex) {
        String id = id(ex);
        String key = ex.query("key");
        if (key == null || key.isEmpty()) {
            throw ApiException.badRequest("key is required: an artifact's key from /api/v1/runs/" + id + "/artifacts");
        }
        RunArtifacts artifacts = master.task(id).artifacts();
        Artifact artifact = artifacts.list().stream().filter(a -> a.getKey().equals(key)).findFirst()
                .orElseThrow(() -> ApiException.notFound("run " + id + " has no artifact " + key));
        if (!downloads.tryAcquire()) {
            throw new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE",
                    "too many downloads at once; retry");
        }
        try {
            send(ex, artifacts, artifact, id, key);
        } finally {
            downloads.release();
        }
    }

    private void send(Exchange ex, RunArtifacts artifacts, Artifact artifact, String id, String key) {
        String name = artifact.getPath().substring(artifact.getPath().lastIndexOf('/') + 1).replaceAll("[^A-Za-z0-9._-]", "_");
        try (InputStream in = artifacts.open(artifact)) {
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream");
            head.headers().set(HttpHeaderNames.CONTENT_LENGTH, artifact.getSize());
            head.headers().set(HttpHeaderNames.CONTENT_DISPOSITION, "attachment; filename=\"" + name + "\"");
            head.headers().set("X-Content-Type-Options", "nosniff");
            head.headers().set(HttpHeaderNames.CONNECTION, ex.keepAlive ? HttpHeaderValues.KEEP_ALIVE : HttpHeaderValues.CLOSE);
            ex.answered = HttpResponseStatus.OK;
            ex.channel.write(head);
            byte[] chunk = new byte[DOWNLOAD_CHUNK];
            long sent = 0;
            for (int n; sent < artifact.getSize()
                    && (n = in.read(chunk, 0, (int) Math.min(chunk.length, artifact.getSize() - sent))) > 0; ) {
                sent += n;
                ChannelFuture written = ex.channel.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(chunk, 0, n)));
                if (!ex.channel.isWritable() && !written.awaitUninterruptibly(settings.sseWriteTimeout().toMillis())) {
                    ex.channel.close(); // a client that does not read: given up, as a stuck stream is
                    return;
                }
                if (!ex.channel.isActive()) {
                    return;
                }
            }
            ChannelFuture last = ex.channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            if (!ex.keepAlive || sent != artifact.getSize()) {
                last.addListener(ChannelFutureListener.CLOSE);
            }
        } catch (IOException e) {
            log.warn("artifact {} of run {} could not be sent: {}", key, id, e.toString());
            ex.channel.close(); // the head is out: the client sees a short body and a closed connection
        }
    }

    private void cancel(Exchange ex) {
        String id = id(ex);
        TaskRecord record = record(id);
        if (!record.getOwner().equals(ex.user()) && !ex.isAdmin()) {
            throw ApiException.forbidden("run " + id + " is " + record.getOwner() + "'s; only its owner or an admin may cancel it");
        }
        boolean cancelled = master.task(id).cancel();
        ex.ok(Views.object().put("cancelled", cancelled));
    }

    // --- sweeps and compare

    private void submitSweep(Exchange ex) {
        SweepSpec spec = Specs.sweep(ex.jsonBody(), ex.user(), ex.isAdmin());
        Sweep sweep = master.submitSweep(spec);
        ex.json(HttpResponseStatus.CREATED, Views.sweep(sweep));
    }

    private void listSweeps(Exchange ex) {
        int offset = ex.intQuery("offset", 0, 0, Integer.MAX_VALUE - MAX_LIST);
        int limit = ex.intQuery("limit", 50, 1, MAX_LIST);
        String owner = ownerFilter(ex);
        Sweep.Page page = master.listSweeps(owner, offset, limit);
        ObjectNode o = Views.object();
        ArrayNode list = o.putArray("sweeps");
        page.sweeps().forEach(s -> list.add(Views.sweep(s)));
        o.put("total", page.total());
        ex.ok(o);
    }

    private Sweep sweepOrNotFound(Exchange ex) {
        String id = id(ex);
        return master.sweep(id).orElseThrow(() -> ApiException.notFound("no sweep " + id));
    }

    private void sweep(Exchange ex) {
        Sweep sweep = sweepOrNotFound(ex);
        ObjectNode o = Views.sweep(sweep);
        ArrayNode runs = o.putArray("runs");
        master.getTasks(sweep.getRunIds()).forEach(r -> runs.add(runView(ex, r, sweep.getId())));
        ex.ok(o);
    }

    private void compareSweep(Exchange ex) {
        Sweep sweep = sweepOrNotFound(ex);
        compareRuns(ex, sweep.getRunIds());
    }

    private void compare(Exchange ex) {
        String ids = ex.query("ids");
        if (ids == null || ids.isBlank()) {
            throw ApiException.badRequest("ids is required: run ids separated by commas");
        }
        List<String> list = Arrays.stream(ids.split(",")).map(String::strip).filter(s -> !s.isEmpty()).distinct().toList();
        for (String id : list) {
            if (!TaskIds.isValid(id)) {
                throw ApiException.badRequest("not a valid id: '" + id + "'");
            }
        }
        compareRuns(ex, list);
    }

    private void compareRuns(Exchange ex, List<String> ids) {
        String metric = ex.query("metric");
        String higher = ex.query("higher");
        boolean higherIsBetter = higher == null || ex.boolQuery("higher");
        ex.ok(Views.comparison(master.compare(ids), metric == null || metric.isEmpty() ? null : metric, higherIsBetter));
    }

    private void openApi(Exchange ex) {
        ex.answered = HttpResponseStatus.OK;
        Responses.bytes(ex.channel, ex.keepAlive, HttpResponseStatus.OK, "application/json; charset=utf-8",
                Unpooled.wrappedBuffer(OpenApi.document()), null);
    }

    private void prometheus(Exchange ex) {
        metrics.refresh();
        ex.answered = HttpResponseStatus.OK;
        Responses.text(ex.channel, ex.keepAlive, HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8",
                registry.scrape());
    }
}
