package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TaskParametersTest {

    @Test
    void formatsNumbersAsTheirJsonText() {
        assertThat(TaskParameters.format("p", 0.1)).isEqualTo("0.1");
        assertThat(TaskParameters.format("p", 500)).isEqualTo("500");
        assertThat(TaskParameters.format("p", 500L)).isEqualTo("500");
        assertThat(TaskParameters.format("p", 2.0)).isEqualTo("2.0");
        assertThat(TaskParameters.format("p", -3.5e-7)).isEqualTo("-3.5E-7");
        assertThat(TaskParameters.format("p", 0.25f)).isEqualTo("0.25");
        assertThat(TaskParameters.format("p", new BigDecimal("0.0001"))).isEqualTo("0.0001");
        assertThat(TaskParameters.format("p", new BigInteger("123456789012345678901234567890")))
                .isEqualTo("123456789012345678901234567890");
    }

    @Test
    void formatsBooleansAndStrings() {
        assertThat(TaskParameters.format("p", true)).isEqualTo("true");
        assertThat(TaskParameters.format("p", false)).isEqualTo("false");
        assertThat(TaskParameters.format("p", "CartPole v1 \"q\"")).isEqualTo("CartPole v1 \"q\"");
        assertThat(TaskParameters.format("p", "")).isEmpty();
    }

    @Test
    void refusesValuesThatAreNotJsonScalars() {
        assertThatThrownBy(() -> TaskParameters.format("p", null)).hasMessageContaining("'p'").hasMessageContaining("null");
        assertThatThrownBy(() -> TaskParameters.format("p", List.of(1))).hasMessageContaining("string, number or boolean");
        assertThatThrownBy(() -> TaskParameters.format("p", Double.NaN)).hasMessageContaining("finite");
        assertThatThrownBy(() -> TaskParameters.format("p", Double.POSITIVE_INFINITY)).hasMessageContaining("finite");
        assertThatThrownBy(() -> TaskParameters.format("p", Float.NEGATIVE_INFINITY)).hasMessageContaining("finite");
        assertThatThrownBy(() -> TaskParameters.format("p", "a\0b")).hasMessageContaining("NUL");
    }

    @Test
    void checksNames() {
        assertThat(TaskParameters.checkName("learning_rate")).isEqualTo("learning_rate");
        assertThat(TaskParameters.checkName("env.id-2")).isEqualTo("env.id-2");
        for (String bad : new String[] {"", "-x", "a b", "a=b", "a\tb", "a\0"}) {
            assertThatThrownBy(() -> TaskParameters.checkName(bad)).as("'%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void buildsArgumentsInOrderThenTheExtras() {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("lr", 0.1);
        params.put("steps", 500);
        params.put("render", false);
        params.put("env", "FrozenLake");
        assertThat(TaskParameters.scriptArguments(params, List.of("--seed", "1", "positional")))
                .containsExactly("--lr", "0.1", "--steps", "500", "--render", "false", "--env", "FrozenLake",
                        "--seed", "1", "positional");
    }

    @Test
    void refusesNulInExtraArguments() {
        assertThatThrownBy(() -> TaskParameters.scriptArguments(Map.of(), List.of("a\0")))
                .hasMessageContaining("NUL");
    }

    @Test
    void writesJsonInOrderWithTheSameNumberText() {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("z", 0.1);
        params.put("a", 500);
        params.put("m", true);
        params.put("s", "x");
        String json = new String(TaskParameters.toJson(params), StandardCharsets.UTF_8).replaceAll("\\s", "");
        assertThat(json).isEqualTo("{\"z\":0.1,\"a\":500,\"m\":true,\"s\":\"x\"}");
    }

    @Test
    void writesNoParametersAsAnEmptyObjectEachTimeInAFreshArray() {
        byte[] first = TaskParameters.toJson(Map.of());
        assertThat(new String(first, StandardCharsets.UTF_8).replaceAll("\\s", "")).isEqualTo("{}");
        first[0] = 'x';
        assertThat(new String(TaskParameters.toJson(new LinkedHashMap<>()), StandardCharsets.UTF_8).strip())
                .startsWith("{");
    }

    @Test
    void refusesJsonOfBadParameters() {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("x", Double.NaN);
        assertThatThrownBy(() -> TaskParameters.toJson(params)).hasMessageContaining("finite");
    }
}
