package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The tests run in order: some check what an earlier one left behind. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisExtensionIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final List<RedisNamespace> seen = new CopyOnWriteArrayList<>();
    private static volatile String keyOfFirstTest;
    private static volatile String durableKey;
    private static volatile long pidBeforeKill;

    private RedisNamespace fromBeforeEach;

    @BeforeEach
    void rememberNamespace(RedisNamespace ns) {
        fromBeforeEach = ns;
    }

    @Test
    @Order(1)
    void namespaceIsTheSameInBeforeEachAndTheTest(RedisNamespace ns,
            RedisCommands<String, String> commands, TestRedis server, RedisClient client,
            RedisURI uri) {
        seen.add(ns);
        keyOfFirstTest = ns.key("a");

        assertThat(ns).isEqualTo(fromBeforeEach);
        assertThat(ns.name()).startsWith(RedisNamespace.PREFIX);
        assertThat(server).isSameAs(redis.server());
        assertThat(client).isSameAs(redis.client());
        assertThat(uri.getPort()).isEqualTo(server.getPort());
        assertThat(commands.set(keyOfFirstTest, "1")).isEqualTo("OK");
        assertThat(commands.get(keyOfFirstTest)).isEqualTo("1");
    }

    @Test
    @Order(2)
    void eachTestHasItsOwnNamespaceAndTheLastOnesKeysAreGone(RedisNamespace ns,
            RedisCommands<String, String> commands) {
        seen.add(ns);

        assertThat(seen).hasSize(2).doesNotHaveDuplicates();
        assertThat(commands.exists(keyOfFirstTest)).isZero();
    }

    @Test
    @Order(3)
    void aTestMayKillRedisAndLeaveItDown(TestRedis server, RedisCommands<String, String> commands,
            RedisNamespace ns) {
        server.assumeControllable();
        seen.add(ns);
        // Outside the namespace, so the clean-up after this test keeps it for the next one.
        durableKey = "rls-testkit-durable-" + RedisNamespace.random().name();
        commands.set(durableKey, "acknowledged");
        pidBeforeKill = server.pid();

        server.kill();

        assertThat(server.isRunning()).isFalse();
    }

    @Test
    @Order(4)
    void theNextTestFindsItRunningWithItsData(TestRedis server,
            RedisCommands<String, String> commands) {
        server.assumeControllable();

        assertThat(server.isRunning()).isTrue();
        assertThat(server.pid()).isNotEqualTo(pidBeforeKill);
        assertThat(commands.get(durableKey)).isEqualTo("acknowledged");
        assertThat(commands.del(durableKey)).isEqualTo(1);
    }

    @Test
    @Order(5)
    void theSharedClientReconnectsByItselfAfterARestart(TestRedis server, RedisNamespace ns) {
        server.assumeControllable();
        try (StatefulRedisConnection<String, String> connection = redis.client().connect()) {
            connection.sync().set(ns.key("k"), "v");

            server.restart();

            assertThat(connection.sync().get(ns.key("k"))).isEqualTo("v");
        }
    }

    @Test
    @Order(6)
    void connectionAndCommandsParametersShareOneConnectionPerTest(
            StatefulRedisConnection<String, String> connection,
            RedisCommands<String, String> commands) {
        assertThat(commands).isSameAs(connection.sync());
        assertThat(connection.isOpen()).isTrue();
    }

    @Nested
    class NestedTests {

        @Test
        void shareTheEnclosingClassesServer(TestRedis server, RedisNamespace ns) {
            assertThat(server).isSameAs(redis.server());
            assertThat(ns).isEqualTo(fromBeforeEach);
            assertThat(seen).doesNotContain(ns);
        }
    }
}
