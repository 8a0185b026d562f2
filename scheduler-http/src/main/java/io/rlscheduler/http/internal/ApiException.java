package io.rlscheduler.http.internal;

import io.netty.handler.codec.http.HttpResponseStatus;

/** A request refused with a status, a code and a message for the client (docs/http.md, Errors). */
public final class ApiException extends RuntimeException {

    private final HttpResponseStatus status;
    private final String code;

    public ApiException(HttpResponseStatus status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    public HttpResponseStatus status() { return status; }

    public String code() { return code; }

    public static ApiException badRequest(String message) {
        return new ApiException(HttpResponseStatus.BAD_REQUEST, "BAD_REQUEST", message);
    }

    public static ApiException invalidSpec(String message) {
        return new ApiException(HttpResponseStatus.BAD_REQUEST, "INVALID_SPEC", message);
    }

    public static ApiException notFound(String message) {
        return new ApiException(HttpResponseStatus.NOT_FOUND, "NOT_FOUND", message);
    }

    public static ApiException forbidden(String message) {
        return new ApiException(HttpResponseStatus.FORBIDDEN, "FORBIDDEN", message);
    }

    public static ApiException unauthorized(String message) {
        return new ApiException(HttpResponseStatus.UNAUTHORIZED, "UNAUTHORIZED", message);
    }
}
