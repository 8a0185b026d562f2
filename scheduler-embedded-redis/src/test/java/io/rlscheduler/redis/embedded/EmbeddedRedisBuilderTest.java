package io.rlscheduler.redis.embedded;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder rejects a bad setting when it is set, before anything is started. */
class EmbeddedRedisBuilderTest {

    @Test
    void rejectsAPortOutOfRange() {
        assertThatThrownBy(() -> EmbeddedRedis.builder().port(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port must be 0 to 65535");
        assertThatThrownBy(() -> EmbeddedRedis.builder().port(65_536))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectsTimeoutsThatAreNotPositive() {
        assertThatThrownBy(() -> EmbeddedRedis.builder().startTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("startTimeout must be positive");
        assertThatThrownBy(() -> EmbeddedRedis.builder().stopTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stopTimeout must be positive");
        assertThatThrownBy(() -> EmbeddedRedis.builder().stopTimeout(null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void rejectsANullDataDirectory() {
        assertThatThrownBy(() -> EmbeddedRedis.builder().dataDirectory(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("dataDirectory");
    }
}
