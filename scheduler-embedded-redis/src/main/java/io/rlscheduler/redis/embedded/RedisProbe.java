package io.rlscheduler.redis.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Asks a Redis server whether it serves commands, over a plain socket: cheaper than a Lettuce
 * client for the tight readiness loop. Stateless and thread-safe.
 */
final class RedisProbe {

    private RedisProbe() {
    }

    /**
     * Returns whether {@code PING} on {@code host:port} answers {@code +PONG} within
     * {@code timeout} (for connecting and again for the reply). A server still loading its AOF
     * answers {@code -LOADING} and so is not ready. Never throws for I/O failures.
     */
    static boolean answersPing(String host, int port, Duration timeout) {
        int millis = (int) Math.max(1, timeout.toMillis());
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(
                    new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            return "+PONG".equals(in.readLine());
        } catch (IOException e) {
            return false;
        }
    }
}
