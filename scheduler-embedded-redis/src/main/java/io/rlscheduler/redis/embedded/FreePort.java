package io.rlscheduler.redis.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Finds a TCP port that is free on the loopback interface right now. Thread-safe. */
final class FreePort {

    private FreePort() {
    }

    /**
     * Returns a port the OS just handed out for 127.0.0.1. Another process may take it before the
     * caller binds it; {@link EmbeddedRedis} retries with a fresh port when that happens.
     */
    static int pick() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("No free loopback port", e);
        }
    }
}
