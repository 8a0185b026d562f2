package io.rlscheduler.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.testkit.JvmProcess;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MasterMain with {@code --redis embedded}: a redis-server beside the master, stopped after it, its data kept. */
class MasterMainIT {

    private static final Duration START = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void anEmbeddedRedisStartsWithTheMasterStopsAfterItAndKeepsItsData() throws IOException {
        int redisPort = freePort();
        Path data = dir.resolve("redis-data");

        try (JvmProcess first = master(redisPort, data, 1)) {
            first.awaitOutput("redis-server embedded at redis://127.0.0.1:" + redisPort, START);
            first.awaitOutput("(leader)", START);
            withRedis(redisPort, commands -> commands.set("kept-across-restarts", "yes"));

            assertThat(first.terminate(Duration.ofSeconds(30))).as("exits on SIGTERM").isTrue();
        }
        assertThat(Files.readString(data.resolve("redis.log"), StandardCharsets.ISO_8859_1))
                .as("the server stopped gracefully with the master").contains("Received SIGTERM").contains("ready to exit");

        try (JvmProcess second = master(redisPort, data, 2)) {
            second.awaitOutput("(leader)", START);
            withRedis(redisPort, commands -> assertThat(commands.get("kept-across-restarts")).isEqualTo("yes"));
            assertThat(second.terminate(Duration.ofSeconds(30))).isTrue();
        }
    }

    private JvmProcess master(int redisPort, Path data, int run) throws IOException {
        return JvmProcess.builder(MasterMain.class)
                .args("--redis", MasterMain.EMBEDDED, "--redis-port", Integer.toString(redisPort),
                        "--redis-dir", data.toString(), "--port", Integer.toString(freePort()), "--bind", "127.0.0.1",
                        "--secret", Cluster.SECRET, "--log-dir", dir.resolve("logs").toString())
                .logFile(dir.resolve("master-" + run + ".log")).start();
    }

    private static void withRedis(int port, Consumer<RedisCommands<String, String>> body) {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            body.accept(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
