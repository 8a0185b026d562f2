package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

/** An external server is only pointed at, never controlled; none needs to exist for this test. */
class TestRedisExternalTest {

    private final TestRedis redis = TestRedis.external("redis://127.0.0.1:6390/2");

    @Test
    void takesHostPortAndDatabaseFromTheUrl() {
        RedisURI uri = redis.getUri();

        assertThat(redis.isExternal()).isTrue();
        assertThat(redis.getHost()).isEqualTo("127.0.0.1");
        assertThat(redis.getPort()).isEqualTo(6390);
        assertThat(uri.getDatabase()).isEqualTo(2);
        assertThat(redis.getUri()).isNotSameAs(uri);
    }

    @Test
    void assumeControllableSkipsTheTestWithAReason() {
        assertThatThrownBy(redis::assumeControllable)
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("redis://127.0.0.1:6390/2")
                .hasMessageContaining("REDIS_URL");
    }

    @Test
    void refusesToStopKillOrRestart() {
        assertThatThrownBy(redis::kill).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("assumeControllable");
        assertThatThrownBy(redis::stop).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(redis::restart).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(redis::pid).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(redis::getDataDir).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void closingDoesNothingToTheServer() {
        redis.close();
        redis.close();

        assertThat(redis.isRunning()).isTrue();
    }

    @Test
    void rejectsAnInvalidUrl() {
        assertThatThrownBy(() -> TestRedis.external("not a url"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
