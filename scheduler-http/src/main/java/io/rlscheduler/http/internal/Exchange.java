package io.rlscheduler.http.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.rlscheduler.master.ApiTokenInfo;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** One request being handled: its parts, the route's path parameters, the caller, and the answer. */
final class Exchange {

    final Channel channel;
    final FullHttpRequest request;
    final boolean keepAlive;
    private final QueryStringDecoder uri;
    private Map<String, String> pathParams = Map.of();
    /** The caller's token, or null for an anonymous read. */
    ApiTokenInfo caller;
    /** The route's pattern, for the request metrics (bounded, unlike paths). */
    String routePattern = "unmatched";
    HttpResponseStatus answered;
    /** When the request was taken up, for its timer. */
    final long startNanos = System.nanoTime();
    /** Set by a handler that answers later, from a callback: the connection reads on only once it has. */
    boolean deferred;
    /** Set by a handler that answered with a stream. */
    boolean streaming;
    private final java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
    Runnable onFinish = () -> { };

    Exchange(Channel channel, FullHttpRequest request, boolean keepAlive) {
        this.channel = channel;
        this.request = request;
        this.keepAlive = keepAlive;
        this.uri = new QueryStringDecoder(request.uri(), StandardCharsets.UTF_8, true, 64);
    }

    /** Ends the exchange once answered: frees the request and lets the connection read its next one. Idempotent. */
    void finish() {
        if (finished.compareAndSet(false, true)) {
            onFinish.run();
        }
    }

    HttpMethod method() {
        return request.method();
    }

    String path() {
        return uri.path();
    }

    void pathParams(Map<String, String> params) {
        this.pathParams = params;
    }

    String pathParam(String name) {
        return pathParams.get(name);
    }

    String header(CharSequence name) {
        return request.headers().get(name);
    }

    /** Returns a query parameter's (last) value, or null. */
    String query(String name) {
        List<String> values = uri.parameters().get(name);
        return values == null || values.isEmpty() ? null : values.get(values.size() - 1);
    }

    int intQuery(String name, int defaultValue, int min, int max) {
        String v = query(name);
        if (v == null || v.isEmpty()) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw ApiException.badRequest(name + " must be " + min + " to " + max + ", was " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a whole number, was '" + v + "'");
        }
    }

    long longQuery(String name, long defaultValue) {
        String v = query(name);
        if (v == null || v.isEmpty()) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a whole number, was '" + v + "'");
        }
    }

    boolean boolQuery(String name) {
        String v = query(name);
        if (v == null || v.isEmpty() || v.equals("false") || v.equals("0")) {
            return false;
        }
        if (v.equals("true") || v.equals("1")) {
            return true;
        }
        throw ApiException.badRequest(name + " must be true or false, was '" + v + "'");
    }

    /** Returns the body as a JSON object. */
    JsonNode jsonBody() {
        if (request.content().readableBytes() == 0) {
            throw ApiException.badRequest("the request needs a JSON body");
        }
        try {
            JsonNode node = Responses.JSON.readTree(request.content().toString(StandardCharsets.UTF_8));
            if (node == null || !node.isObject()) {
                throw ApiException.badRequest("the body must be a JSON object");
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw ApiException.badRequest("the body is not valid JSON: " + e.getOriginalMessage());
        }
    }

    /** The caller's user name (null for an anonymous read). */
    String user() {
        return caller == null ? null : caller.user();
    }

    boolean isAdmin() {
        return caller != null && caller.admin();
    }

    void json(HttpResponseStatus status, JsonNode body) {
        answered = status;
        Responses.json(channel, keepAlive, status, body, null);
    }

    void ok(JsonNode body) {
        json(HttpResponseStatus.OK, body);
    }

    void error(ApiException e, Map<String, String> headers) {
        answered = e.status();
        Responses.error(channel, keepAlive, e, headers);
    }
}
