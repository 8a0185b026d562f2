package io.rlscheduler.redis.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A server that its JVM never closed is stopped, and its temporary directory deleted, when that JVM exits. */
class EmbeddedRedisExitIT {

    @Test
    void theJvmsExitStopsAServerThatWasNotClosed() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process jvm = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                ExitWithoutClose.class.getName()).redirectErrorStream(true).start();
        String out;
        try (var in = jvm.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).as("the JVM exits: %s", out).isTrue();
        assertThat(jvm.exitValue()).as(out).isZero();

        List<String> lines = out.lines().toList();
        int port = Integer.parseInt(value(lines, "port "));
        Path dir = Path.of(value(lines, "dir "));
        assertThat(accepts(port)).as("nothing listens on %d after the exit", port).isFalse();
        assertThat(dir).doesNotExist();
    }

    private static String value(List<String> lines, String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no line '" + prefix + "...' in " + lines))
                .substring(prefix.length());
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
