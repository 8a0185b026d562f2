package io.rlscheduler.http.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Writes whole responses: JSON bodies, errors as {@code {"error": {"code", "message"}}}, bytes. */
final class Responses {

    static final ObjectMapper JSON = new ObjectMapper();

    private Responses() {
    }

    static void json(Channel channel, boolean keepAlive, HttpResponseStatus status, JsonNode body, Map<String, String> headers) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a response could not be written as JSON", e);
        }
        bytes(channel, keepAlive, status, "application/json; charset=utf-8", Unpooled.wrappedBuffer(bytes), headers);
    }

    static void error(Channel channel, boolean keepAlive, ApiException e, Map<String, String> headers) {
        json(channel, keepAlive, e.status(), errorBody(e), headers);
    }

    private static ObjectNode errorBody(ApiException e) {
        ObjectNode body = JSON.createObjectNode();
        ObjectNode error = body.putObject("error");
        error.put("code", e.code());
        error.put("message", e.getMessage());
        return body;
    }

    /**
     * Answers an error with {@code Connection: close} and leaves the closing to the caller (who
     * closes once the client has finished sending).
     */
    static void errorThenClose(Channel channel, ApiException e) {
        json(channel, true, e.status(), errorBody(e), Map.of(HttpHeaderNames.CONNECTION.toString(), HttpHeaderValues.CLOSE.toString()));
    }

    static void text(Channel channel, boolean keepAlive, HttpResponseStatus status, String contentType, String body) {
        bytes(channel, keepAlive, status, contentType, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), null);
    }

    static void bytes(Channel channel, boolean keepAlive, HttpResponseStatus status, String contentType, ByteBuf body,
                      Map<String, String> headers) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        response.headers().set("X-Content-Type-Options", "nosniff");
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        if (headers != null) {
            headers.forEach(response.headers()::set);
        }
        if (keepAlive) {
            if (!response.headers().contains(HttpHeaderNames.CONNECTION)) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
            channel.writeAndFlush(response);
        } else {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            channel.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
