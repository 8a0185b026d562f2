package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registered on an instance field, the extension gives each test a server of its own. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisExtensionPerTestIT {

    @RegisterExtension
    RedisExtension redis = new RedisExtension();

    private static volatile long firstPid;
    private static volatile Path firstDataDir;

    @Test
    @Order(1)
    void firstTestGetsAServer(TestRedis server) {
        server.assumeControllable();
        firstPid = server.pid();
        firstDataDir = server.getDataDir();

        assertThat(server.isRunning()).isTrue();
    }

    @Test
    @Order(2)
    void secondTestGetsAnotherOneAndTheFirstIsGone(TestRedis server) {
        server.assumeControllable();

        assertThat(server.pid()).isNotEqualTo(firstPid);
        assertThat(ProcessHandle.of(firstPid).filter(ProcessHandle::isAlive)).isEmpty();
        assertThat(firstDataDir).doesNotExist();
    }
}
