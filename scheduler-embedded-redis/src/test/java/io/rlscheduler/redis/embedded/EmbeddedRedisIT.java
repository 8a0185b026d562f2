package io.rlscheduler.redis.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedRedisIT {

    @TempDir
    Path tmp;

    @Test
    void startsOnALoopbackPortWithAofAlwaysAndNoEviction() throws IOException {
        try (EmbeddedRedis redis = EmbeddedRedis.start()) {
            assertThat(redis.getHost()).isEqualTo("127.0.0.1");
            assertThat(redis.getUrl()).isEqualTo("redis://127.0.0.1:" + redis.getPort());
            assertThat(redis.isRunning()).isTrue();
            String dir = redis.getDataDirectory().toRealPath().toString();
            withCommands(redis, commands -> {
                assertThat(commands.configGet("bind")).containsEntry("bind", "127.0.0.1");
                assertThat(commands.configGet("appendonly")).containsEntry("appendonly", "yes");
                assertThat(commands.configGet("appendfsync")).containsEntry("appendfsync", "always");
                assertThat(commands.configGet("save")).containsEntry("save", "");
                assertThat(commands.configGet("maxmemory-policy")).containsEntry("maxmemory-policy", "noeviction");
                assertThat(commands.configGet("dir")).containsEntry("dir", dir);
            });
        }
    }

    @Test
    void closeKillsTheServerAndDeletesATemporaryDataDirectory() {
        EmbeddedRedis redis = EmbeddedRedis.start();
        long pid = redis.pid();
        Path dir = redis.getDataDirectory();
        withCommands(redis, commands -> commands.set("k", "v"));

        redis.close();
        redis.close();

        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
        assertThat(dir).doesNotExist();
        assertThat(redis.isRunning()).isFalse();
        assertThatThrownBy(redis::pid).isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
        assertThatThrownBy(redis::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void aGivenDataDirectoryIsKeptAndReloadedByTheNextServer() {
        Path dir = tmp.resolve("redis-data");
        try (EmbeddedRedis first = EmbeddedRedis.builder().dataDirectory(dir).start()) {
            assertThat(first.getDataDirectory()).isEqualTo(dir);
            withCommands(first, commands -> commands.set("k", "kept"));
        }

        assertThat(dir.resolve("appendonly.aof")).isNotEmptyFile();
        assertThat(log(dir)).as("a given directory's server is stopped gracefully").contains("ready to exit");
        try (EmbeddedRedis second = EmbeddedRedis.builder().dataDirectory(dir).start()) {
            withCommands(second, commands -> assertThat(commands.get("k")).isEqualTo("kept"));
        }
        assertThat(dir).exists();
    }

    @Test
    void stopIsGracefulAndRestartKeepsThePortAndTheData() {
        try (EmbeddedRedis redis = EmbeddedRedis.start()) {
            withCommands(redis, commands -> commands.set("k", "before-stop"));
            int port = redis.getPort();

            redis.stop();

            assertThat(redis.isRunning()).isFalse();
            assertThat(log(redis.getDataDirectory())).contains("Received SIGTERM").contains("ready to exit");
            redis.stop(); // already stopped: nothing to do

            redis.restart();

            assertThat(redis.getPort()).isEqualTo(port);
            withCommands(redis, commands -> assertThat(commands.get("k")).isEqualTo("before-stop"));
            long pid = redis.pid();

            redis.restart(); // of a running server: stop, then start

            assertThat(redis.pid()).isNotEqualTo(pid);
            withCommands(redis, commands -> assertThat(commands.get("k")).isEqualTo("before-stop"));
        }
    }

    @Test
    void aGivenPortIsUsed() throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        try (EmbeddedRedis redis = EmbeddedRedis.builder().port(port).start()) {
            assertThat(redis.getPort()).isEqualTo(port);
            withCommands(redis, commands -> assertThat(commands.ping()).isEqualTo("PONG"));
        }
    }

    @Test
    void aGivenPortThatIsTakenFailsTheStartWithTheServersLog() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            EmbeddedRedis.Builder builder = EmbeddedRedis.builder().port(taken.getLocalPort())
                    .dataDirectory(tmp.resolve("taken"));

            assertThatThrownBy(builder::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited")
                    .hasMessageContaining("Address already in use");
        }
    }

    private static String log(Path dir) {
        try {
            return Files.readString(dir.resolve(EmbeddedRedis.LOG_FILE), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void withCommands(EmbeddedRedis redis, Consumer<RedisCommands<String, String>> body) {
        RedisClient client = RedisClient.create(RedisURI.create(redis.getUrl()));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            body.accept(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
