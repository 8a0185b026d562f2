package io.rlscheduler.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A small real HTTP client for the tests: the JDK's, JSON through Jackson, and an SSE reader. */
public final class Http {

    public static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final String token;

    public Http(String base, String token) {
        this.base = base;
        this.token = token;
    }

    public Http as(String otherToken) {
        return new Http(base, otherToken);
    }

    public record Answer(int status, JsonNode json, String body, java.net.http.HttpHeaders headers) {
        public String code() {
            return json == null ? null : json.path("error").path("code").asText(null);
        }

        public String message() {
            return json == null ? null : json.path("error").path("message").asText(null);
        }
    }

    public Answer get(String path) {
        return send(request(path).GET().build());
    }

    public Answer delete(String path) {
        return send(request(path).DELETE().build());
    }

    public Answer post(String path, Object body) {
        String text;
        try {
            text = body instanceof String s ? s : JSON.writeValueAsString(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return send(request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(text)).build());
    }

    public HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    public Answer send(HttpRequest request) {
        try {
            HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            String type = r.headers().firstValue("Content-Type").orElse("");
            if (type.startsWith("application/json") && !r.body().isEmpty()) {
                json = JSON.readTree(r.body());
            }
            return new Answer(r.statusCode(), json, r.body(), r.headers());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** One Server-Sent Event. */
    public record Event(String id, String event, String data) {
        public JsonNode json() {
            try {
                return JSON.readTree(data);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** An open SSE stream: read events one by one; close to disconnect. */
    public final class Stream implements AutoCloseable {
        private final InputStream body;
        private final BufferedReader reader;
        public final int status;

        Stream(HttpResponse<InputStream> r) {
            this.status = r.statusCode();
            this.body = r.body();
            this.reader = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        }

        /** The next event, or null at the end of the stream. Comments are skipped. */
        public Event next() throws IOException {
            String id = null;
            String event = "message";
            StringBuilder data = null;
            for (String line; (line = reader.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (data != null) {
                        return new Event(id, event, data.toString());
                    }
                    id = null;
                    event = "message";
                    continue;
                }
                if (line.startsWith(":") || line.startsWith("retry:")) {
                    continue;
                }
                int colon = line.indexOf(':');
                String field = colon < 0 ? line : line.substring(0, colon);
                String value = colon < 0 ? "" : line.substring(colon + 1).stripLeading();
                switch (field) {
                    case "id" -> id = value;
                    case "event" -> event = value;
                    case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                    default -> { }
                }
            }
            return null;
        }

        /** Reads events to the end of the stream. */
        public List<Event> rest() throws IOException {
            List<Event> events = new ArrayList<>();
            for (Event e; (e = next()) != null; ) {
                events.add(e);
            }
            return events;
        }

        @Override
        public void close() throws IOException {
            body.close();
        }
    }

    public Stream stream(String path, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        headers.forEach(b::header);
        try {
            return new Stream(client.send(b.GET().build(), HttpResponse.BodyHandlers.ofInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
