package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Registration by annotation, and parameters of the class-level lifecycle methods. */
@ExtendWith(RedisExtension.class)
class RedisExtendWithIT {

    private static TestRedis classServer;
    private static RedisNamespace classNamespace;

    @BeforeAll
    static void seed(TestRedis server, RedisNamespace ns, RedisCommands<String, String> commands) {
        classServer = server;
        classNamespace = ns;
        commands.set(ns.key("fixture"), "shared by the class");
    }

    @Test
    void testsSeeTheClassServerAndFixtureButHaveTheirOwnNamespace(TestRedis server,
            RedisNamespace ns, RedisCommands<String, String> commands) {
        assertThat(server).isSameAs(classServer);
        assertThat(ns).isNotEqualTo(classNamespace);
        assertThat(commands.get(classNamespace.key("fixture"))).isEqualTo("shared by the class");
    }

    @AfterAll
    static void classNamespaceIsStillThereUntilAfterAll(RedisNamespace ns,
            RedisCommands<String, String> commands) {
        assertThat(ns).isEqualTo(classNamespace);
        assertThat(commands.exists(ns.key("fixture"))).isEqualTo(1);
    }
}
