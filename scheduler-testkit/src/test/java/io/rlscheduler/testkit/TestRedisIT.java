package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.redis.embedded.RedisServerBinary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class TestRedisIT {

    private static final Logger log = LoggerFactory.getLogger(TestRedisIT.class);
    private static final int KEYS = 500;

    @Test
    void servesSetAndGet() {
        try (TestRedis redis = TestRedis.fromEnvironment()) {
            RedisNamespace ns = RedisNamespace.random();
            withCommands(redis, commands -> {
                assertThat(commands.set(ns.key("k"), "v")).isEqualTo("OK");
                assertThat(commands.get(ns.key("k"))).isEqualTo("v");
                assertThat(commands.del(ns.key("k"))).isEqualTo(1);
            });
        }
    }

    @Test
    void startedServerIsOnLoopbackWithAofAlwaysAndNoEviction() throws IOException {
        try (TestRedis redis = TestRedis.fromEnvironment()) {
            redis.assumeControllable();
            log.info("redis-server binary: {}", RedisServerBinary.version());

            assertThat(redis.isExternal()).isFalse();
            String dir = redis.getDataDir().toRealPath().toString();
            assertThat(redis.getUri().getHost()).isEqualTo("127.0.0.1");
            assertThat(redis.getUri().getPort()).isEqualTo(redis.getPort());
            withCommands(redis, commands -> {
                assertThat(commands.configGet("appendonly")).containsEntry("appendonly", "yes");
                assertThat(commands.configGet("appendfsync")).containsEntry("appendfsync", "always");
                assertThat(commands.configGet("save")).containsEntry("save", "");
                assertThat(commands.configGet("maxmemory-policy"))
                        .containsEntry("maxmemory-policy", "noeviction");
                assertThat(commands.configGet("dir"))
                        .containsEntry("dir", dir);
            });
        }
    }

    @Test
    void acknowledgedWritesSurviveKillMinus9AndRestart() {
        try (TestRedis redis = TestRedis.fromEnvironment()) {
            redis.assumeControllable();
            RedisNamespace ns = RedisNamespace.random();
            withCommands(redis, commands -> {
                for (int i = 0; i < KEYS; i++) {
                    commands.set(ns.key(Integer.toString(i)), "value-" + i);
                }
            });
            long pidBefore = redis.pid();
            int portBefore = redis.getPort();

            redis.kill();

            assertThat(redis.isRunning()).isFalse();
            assertThat(ProcessHandle.of(pidBefore).map(ProcessHandle::isAlive)).isNotEqualTo(
                    Optional.of(true));
            assertThat(acceptsConnections(portBefore)).as("nothing listens on the port after kill -9").isFalse();
            assertThat(log(redis)).doesNotContain("ready to exit");
            assertThat(redis.getDataDir().resolve("appendonly.aof")).isNotEmptyFile();

            redis.restart();

            assertThat(redis.isRunning()).isTrue();
            assertThat(redis.pid()).isNotEqualTo(pidBefore);
            assertThat(redis.getPort()).isEqualTo(portBefore);
            withCommands(redis, commands -> {
                assertThat(commands.dbsize()).isEqualTo(KEYS);
                for (int i = 0; i < KEYS; i++) {
                    assertThat(commands.get(ns.key(Integer.toString(i)))).isEqualTo("value-" + i);
                }
            });
        }
    }

    @Test
    void stopIsGracefulAndRestartKeepsTheData() {
        try (TestRedis redis = TestRedis.fromEnvironment()) {
            redis.assumeControllable();
            RedisNamespace ns = RedisNamespace.random();
            withCommands(redis, commands -> commands.set(ns.key("k"), "before-stop"));

            redis.stop();

            assertThat(redis.isRunning()).isFalse();
            assertThat(log(redis)).contains("Received SIGTERM").contains("ready to exit");
            redis.stop(); // already stopped: nothing to do
            redis.kill(); // likewise

            redis.restart();

            withCommands(redis, commands -> {
                assertThat(commands.get(ns.key("k"))).isEqualTo("before-stop");
                commands.set(ns.key("k"), "before-restart");
            });

            long pid = redis.pid();
            redis.restart(); // of a running server: stop, then start

            assertThat(redis.pid()).isNotEqualTo(pid);
            withCommands(redis, commands ->
                    assertThat(commands.get(ns.key("k"))).isEqualTo("before-restart"));
        }
    }

    @Test
    void twoServersRunAtOnceOnDifferentPortsWithSeparateData() {
        try (TestRedis a = TestRedis.fromEnvironment(); TestRedis b = TestRedis.fromEnvironment()) {
            a.assumeControllable();

            assertThat(a.getPort()).isNotEqualTo(b.getPort());
            assertThat(a.pid()).isNotEqualTo(b.pid());
            assertThat(a.getDataDir()).isNotEqualTo(b.getDataDir());
            withCommands(a, commands -> commands.set("only-on-a", "a"));
            withCommands(b, commands -> {
                assertThat(commands.exists("only-on-a")).isZero();
                commands.set("only-on-b", "b");
            });
            withCommands(a, commands -> {
                assertThat(commands.get("only-on-a")).isEqualTo("a");
                assertThat(commands.exists("only-on-b")).isZero();
            });

            a.kill();

            assertThat(b.isRunning()).isTrue();
            withCommands(b, commands -> assertThat(commands.get("only-on-b")).isEqualTo("b"));
        }
    }

    @Test
    void closeKillsTheServerAndDeletesItsDataDirectory() {
        TestRedis redis = TestRedis.fromEnvironment();
        try {
            redis.assumeControllable();
        } catch (RuntimeException e) {
            redis.close();
            throw e;
        }
        long pid = redis.pid();
        Path dir = redis.getDataDir();
        withCommands(redis, commands -> commands.set("k", "v"));

        redis.close();
        redis.close();

        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(
                Optional.of(true));
        assertThat(dir).doesNotExist();
        assertThat(redis.isRunning()).isFalse();
        assertThatThrownBy(redis::restart).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    private static String log(TestRedis redis) {
        try {
            return Files.readString(redis.getDataDir().resolve("redis.log"),
                    StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean acceptsConnections(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void withCommands(TestRedis redis, Consumer<RedisCommands<String, String>> body) {
        RedisClient client = RedisClient.create(redis.getUri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            body.accept(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
