package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The HTTP API of docs/http.md over the JDK's {@link HttpClient}: JSON requests and answers, error
 * bodies turned into {@link ApiException}, network failures into {@link RlsException} (exit 6), and
 * Server-Sent Event streams.
 */
final class Api {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

    private final String server;
    private final String token;
    private final HttpClient http;

    Api(String server, String token) {
        this.server = server;
        this.token = token;
        this.http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NORMAL)
                .build();
    }

    String server() {
        return server;
    }

    boolean hasToken() {
        return token != null;
    }

    JsonNode get(String path) {
        return send(request(path).GET());
    }

    JsonNode post(String path, Object body) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body == null ? Map.of() : body);
        } catch (IOException e) {
            throw new RlsException(ExitCodes.ERROR, "cannot write the request: " + e.getMessage(), e);
        }
        return send(request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(bytes)));
    }

    JsonNode delete(String path) {
        return send(request(path).DELETE());
    }

    /** Opens a download; the caller closes the stream. */
    InputStream download(String path) {
        HttpResponse<InputStream> response = exchange(request(path).GET(), HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() / 100 != 2) {
            try (InputStream in = response.body()) {
                throw error(response.statusCode(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw error(response.statusCode(), "");
            }
        }
        return response.body();
    }

    /**
     * Opens a Server-Sent Events stream; {@code lastEventId} (or null) is sent as
     * {@code Last-Event-ID}. An error answer throws {@link ApiException}; a failure to connect
     * throws {@link IOException} so that followers can retry.
     */
    EventStream stream(String path, String lastEventId) throws IOException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path))
                .header("Accept", "text/event-stream")
                .header("User-Agent", "rls")
                .GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (lastEventId != null) {
            b.header("Last-Event-ID", lastEventId);
        }
        HttpResponse<InputStream> response;
        try {
            response = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RlsException(ExitCodes.ERROR, "interrupted");
        }
        if (response.statusCode() != 200) {
            String body;
            try (InputStream in = response.body()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            throw error(response.statusCode(), body);
        }
        return new EventStream(response.body());
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path))
                .timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json")
                .header("User-Agent", "rls");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private URI uri(String path) {
        try {
            return URI.create(server + path);
        } catch (IllegalArgumentException e) {
            throw RlsException.usage("not a valid URL: " + server + path);
        }
    }

    private JsonNode send(HttpRequest.Builder b) {
        HttpResponse<String> response = exchange(b, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        String body = response.body();
        if (response.statusCode() / 100 != 2) {
            throw error(response.statusCode(), body);
        }
        if (body == null || body.isBlank()) {
            return JSON.createObjectNode();
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new RlsException(ExitCodes.ERROR, "the server's answer is not JSON (HTTP "
                    + response.statusCode() + "): " + snippet(body));
        }
    }

    private <T> HttpResponse<T> exchange(HttpRequest.Builder b, HttpResponse.BodyHandler<T> handler) {
        HttpRequest request = b.build();
        try {
            return http.send(request, handler);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RlsException(ExitCodes.ERROR, "interrupted");
        } catch (IOException e) {
            throw unreachable(e);
        }
    }

    /** A network failure as an {@link RlsException} that says which server could not be reached. */
    RlsException unreachable(IOException e) {
        String why;
        if (e instanceof ConnectException) {
            why = "connection refused";
        } else if (e instanceof HttpConnectTimeoutException) {
            why = "connection timed out";
        } else if (e instanceof HttpTimeoutException) {
            why = "no answer in time";
        } else {
            why = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        }
        return new RlsException(ExitCodes.ERROR, "cannot reach the server at " + server + ": " + why, e);
    }

    /** An error answer as an {@link ApiException}: the body's {@code error.message}, or the status. */
    ApiException error(int status, String body) {
        String code = "HTTP_" + status;
        String message = null;
        try {
            JsonNode node = body == null || body.isBlank() ? null : JSON.readTree(body);
            JsonNode error = node == null ? null : node.get("error");
            if (error != null && error.isObject()) {
                code = error.path("code").asText(code);
                message = error.path("message").asText(null);
            }
        } catch (IOException e) {
            // not JSON: fall back to the status below
        }
        if (message == null || message.isBlank()) {
            message = "HTTP " + status + " from " + server + (body == null || body.isBlank() ? "" : ": " + snippet(body));
        }
        if (status == 401 && token == null) {
            message += " (no token: give --token, set RLS_TOKEN, or put token= in the config file)";
        }
        return new ApiException(status, code, message);
    }

    private static String snippet(String body) {
        String s = body.strip().replaceAll("\\s+", " ");
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    /** Percent-encodes one path segment (ids are plain, but a user may type anything). */
    static String seg(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A query string builder that skips null values. */
    static final class Query {
        private final Map<String, String> params = new LinkedHashMap<>();

        Query add(String name, Object value) {
            if (value != null) {
                params.put(name, String.valueOf(value));
            }
            return this;
        }

        String of(String path) {
            if (params.isEmpty()) {
                return path;
            }
            StringJoiner j = new StringJoiner("&", path + "?", "");
            params.forEach((k, v) -> j.add(URLEncoder.encode(k, StandardCharsets.UTF_8) + "="
                    + URLEncoder.encode(v, StandardCharsets.UTF_8)));
            return j.toString();
        }
    }
}
