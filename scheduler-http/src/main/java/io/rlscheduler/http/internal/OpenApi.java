package io.rlscheduler.http.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The OpenAPI document of the API, {@code openapi.json} beside this class; a test holds it to the routes. */
final class OpenApi {

    private static final byte[] DOCUMENT = load();

    private OpenApi() {
    }

    static byte[] document() {
        return DOCUMENT;
    }

    private static byte[] load() {
        try (InputStream in = OpenApi.class.getResourceAsStream("/io/rlscheduler/http/openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is missing from the scheduler-http jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
