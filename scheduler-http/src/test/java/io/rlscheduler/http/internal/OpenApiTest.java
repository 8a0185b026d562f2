package io.rlscheduler.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.util.concurrent.DefaultEventExecutor;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The OpenAPI document served at /api/v1/openapi.json names exactly the routes the server has. */
class OpenApiTest {

    @Test
    void theDocumentNamesEveryRouteAndNoOther() throws Exception {
        DefaultEventExecutor timer = new DefaultEventExecutor();
        try {
            Settings settings = new Settings("127.0.0.1", 0, 1 << 20, false, Duration.ofSeconds(10), Duration.ofSeconds(15), 1, Duration.ofSeconds(1),
                    null, null);
            Routes routes = new Routes(null, settings, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                    new Streams(timer, settings), Runnable::run);
            Set<String> served = new TreeSet<>();
            routes.routes().forEach(r -> served.add(r.method().name() + " " + r.pattern()));

            JsonNode doc = new ObjectMapper().readTree(OpenApi.document());
            Set<String> documented = new TreeSet<>();
            doc.path("paths").fields().forEachRemaining(path -> path.getValue().fieldNames()
                    .forEachRemaining(method -> documented.add(method.toUpperCase() + " " + path.getKey())));

            assertThat(doc.path("openapi").asText()).startsWith("3.");
            assertThat(documented).isEqualTo(served);
            assertThat(served).hasSizeGreaterThan(25);
            // Every operation but the document itself needs the bearer token.
            doc.path("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(op ->
                    assertThat(op.getValue().has("security"))
                            .as(op.getKey() + " " + path.getKey())
                            .isEqualTo(path.getKey().equals("/api/v1/openapi.json"))));
        } finally {
            timer.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
