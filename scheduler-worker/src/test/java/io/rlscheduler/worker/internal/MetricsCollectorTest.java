package io.rlscheduler.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MetricsCollectorTest {

    @Test
    void latestJsonFollowsEveryMetricLine() {
        MetricsCollector metrics = new MetricsCollector(10);
        assertThat(metrics.latestJson()).isEqualTo("{}");
        assertThat(metrics.offer("RLS_METRIC {\"loss\": 0.5, \"step\": 1}")).isTrue();
        assertThat(metrics.latestJson()).isEqualTo("{\"loss\":0.5,\"step\":1}");
        assertThat(metrics.latestJson()).isEqualTo("{\"loss\":0.5,\"step\":1}");
        assertThat(metrics.offer("plain output")).isFalse();
        assertThat(metrics.offer("RLS_METRIC not json")).isFalse();
        assertThat(metrics.offer("RLS_METRIC {\"step\": 2, \"reward\": 1.25}")).isTrue();
        assertThat(metrics.latestJson()).isEqualTo("{\"loss\":0.5,\"step\":2,\"reward\":1.25}");
        assertThat(metrics.count()).isEqualTo(2);
        assertThat(metrics.series()).hasSize(2);
    }
}
