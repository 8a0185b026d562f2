package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The rules the master and the worker share: metric lines, reserved environment names, JSON numbers. */
class SharedRulesTest {

    @Test
    void aMetricLineIsAJsonObjectAfterThePrefixAndNothingElse() {
        ObjectNode exact = MetricLines.parse("RLS_METRIC {\"reward\": 0.10, \"episode\": 3}");
        assertThat(exact).isNotNull();
        assertThat(exact.get("reward").decimalValue()).isEqualTo(new BigDecimal("0.10"));
        assertThat(exact.toString()).isEqualTo("{\"reward\":0.10,\"episode\":3}");
        Map<String, Object> values = MetricLines.parseValues("RLS_METRIC {\"reward\": 0.5, \"episode\": 3}");
        assertThat(values).containsExactly(Map.entry("reward", 0.5), Map.entry("episode", 3));
        for (String notOne : new String[] {"RLS_METRIC [1, 2]", "RLS_METRIC {\"r\": NaN}", "RLS_METRIC null",
                "RLS_METRIC {", "rls_metric {\"r\": 1}", "RLS_METRIC{\"r\": 1}", "episode 3"}) {
            assertThat(MetricLines.parse(notOne)).as(notOne).isNull();
            assertThat(MetricLines.parseValues(notOne)).as(notOne).isNull();
        }
    }

    @Test
    void theSchedulersOwnVariablesAreReserved() {
        assertThat(ReservedEnvironment.isReserved("CUDA_VISIBLE_DEVICES")).isTrue();
        assertThat(ReservedEnvironment.isReserved("CUDA_DEVICE_ORDER")).isTrue();
        assertThat(ReservedEnvironment.isReserved("RLS_RUN_DIR")).isTrue();
        assertThat(ReservedEnvironment.isReserved("RLS_")).isTrue();
        assertThat(ReservedEnvironment.isReserved("CUDA_HOME")).isFalse();
        assertThat(ReservedEnvironment.isReserved("rls_run_dir")).isFalse();
        assertThat(ReservedEnvironment.isReserved("OMP_NUM_THREADS")).isFalse();
    }

    @Test
    void exactReadingKeepsAFractionAsWrittenAndPlainReadingMakesItADouble() throws Exception {
        assertThat(Json.exactTree("{\"lr\": 300.0}").get("lr").decimalValue()).isEqualTo(new BigDecimal("300.0"));
        assertThat(Json.exactMap("{\"lr\": 0.1}").get("lr")).isEqualTo(new BigDecimal("0.1"));
        assertThat(Json.map("{\"lr\": 0.1}").get("lr")).isEqualTo(0.1);
        assertThat(Json.tree("{\"lr\": 0.1}").get("lr").isDouble()).isTrue();
    }
}
