package io.rlscheduler.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** -p, -g, --seeds, --timeout and --memory values, without a server. */
class RlsValuesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String json(Object o) throws Exception {
        return JSON.writeValueAsString(o);
    }

    @Test
    void parameterValuesAreTypedLikeJson() throws Exception {
        Map<String, Object> p = Values.parameters(List.of("lr=0.1", "episodes=500", "big=12345678901234567890",
                "neg=-3", "exp=1e-3", "half=.5", "on=true", "off=false", "name=ppo", "zero=0", "padded=007",
                "quoted=\"42\"", "list=[64,64]", "obj={\"a\":1}", "url=a=b", "empty=", "True=True", "nan=NaN"));
        assertThat(json(p)).isEqualTo("{\"lr\":0.1,\"episodes\":500,\"big\":12345678901234567890,\"neg\":-3,"
                + "\"exp\":0.001,\"half\":0.5,\"on\":true,\"off\":false,\"name\":\"ppo\",\"zero\":0,\"padded\":\"007\","
                + "\"quoted\":\"42\",\"list\":[64,64],\"obj\":{\"a\":1},\"url\":\"a=b\",\"empty\":\"\",\"True\":\"True\","
                + "\"nan\":\"NaN\"}");
    }

    @Test
    void aLaterParameterOverridesAnEarlierOne() throws Exception {
        assertThat(json(Values.parameters(List.of("lr=1", "lr=2")))).isEqualTo("{\"lr\":2}");
    }

    @Test
    void aParameterWithoutNameOrEqualsIsAUsageError() {
        assertThatThrownBy(() -> Values.parameters(List.of("lr")))
                .isInstanceOf(RlsException.class).hasMessageContaining("-p wants name=value")
                .extracting(e -> ((RlsException) e).exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThatThrownBy(() -> Values.parameters(List.of("=1"))).isInstanceOf(RlsException.class);
    }

    @Test
    void gridKeepsTheOrderGivenAndTypesEachValue() throws Exception {
        Map<String, List<Object>> g = Values.grid(List.of("lr=0.01,0.05,0.1", "seed=1,2", "algo=ppo,dqn",
                "layers=[[64],[128,128]]"));
        assertThat(g.keySet()).containsExactly("lr", "seed", "algo", "layers");
        assertThat(json(g)).isEqualTo("{\"lr\":[0.01,0.05,0.1],\"seed\":[1,2],\"algo\":[\"ppo\",\"dqn\"],"
                + "\"layers\":[[64],[128,128]]}");
    }

    @Test
    void gridRefusesEmptyValuesAndRepeatedNames() {
        assertThatThrownBy(() -> Values.grid(List.of("lr=0.1,,0.2"))).hasMessageContaining("empty value");
        assertThatThrownBy(() -> Values.grid(List.of("lr=1", "lr=2"))).hasMessageContaining("given twice");
        assertThatThrownBy(() -> Values.grid(List.of("lr"))).hasMessageContaining("-g wants name=value");
    }

    @Test
    void seedsAreAList() throws Exception {
        assertThat(json(Values.list("1,2,3", "--seeds"))).isEqualTo("[1,2,3]");
    }

    @Test
    void durations() {
        assertThat(Values.seconds("90")).isEqualTo(90);
        assertThat(Values.seconds("90s")).isEqualTo(90);
        assertThat(Values.seconds("30m")).isEqualTo(1800);
        assertThat(Values.seconds("2h")).isEqualTo(7200);
        assertThat(Values.seconds("1h30m")).isEqualTo(5400);
        assertThat(Values.seconds("1d")).isEqualTo(86400);
        assertThat(Values.seconds("1.5h")).isEqualTo(5400);
        assertThat(Values.seconds("PT2H")).isEqualTo(7200);
        assertThat(Values.seconds("500ms")).isEqualTo(1);
        for (String bad : new String[] {"", "h", "2x", "1h 30m", "-5s", "P"}) {
            assertThatThrownBy(() -> Values.seconds(bad)).as(bad).isInstanceOf(RlsException.class);
        }
    }

    @Test
    void sizes() {
        assertThat(SpecOptions.bytes("1024")).isEqualTo(1024);
        assertThat(SpecOptions.bytes("512m")).isEqualTo(512L << 20);
        assertThat(SpecOptions.bytes("16G")).isEqualTo(16L << 30);
        assertThat(SpecOptions.bytes("16GiB")).isEqualTo(16L << 30);
        assertThatThrownBy(() -> SpecOptions.bytes("lots")).isInstanceOf(RlsException.class);
    }

    @Test
    void theSpecHasOnlyTheFieldsGiven() throws Exception {
        SpecOptions o = new SpecOptions();
        o.params = List.of("lr=0.1");
        o.gpus = 1;
        o.timeout = "2h";
        o.selector = List.of("gpu=a100");
        o.env = List.of("WANDB_MODE=offline");
        o.maxAttempts = 2;
        assertThat(json(o.toSpec("train.py", List.of("--verbose"))))
                .isEqualTo("{\"script\":\"train.py\",\"parameters\":{\"lr\":0.1},\"args\":[\"--verbose\"],"
                        + "\"env\":{\"WANDB_MODE\":\"offline\"},\"gpus\":1,\"timeoutSeconds\":7200,\"maxAttempts\":2,"
                        + "\"selector\":{\"gpu\":\"a100\"}}");
        assertThat(json(new SpecOptions().toSpec("t.py", null))).isEqualTo("{\"script\":\"t.py\"}");
    }

    @Test
    void logIdsOrderByAttemptThenSequence() {
        assertThat(Follower.compareIds("1:9", "1:10")).isNegative();
        assertThat(Follower.compareIds("2:1", "1:10")).isPositive();
        assertThat(Follower.compareIds("1:10", "1:10")).isZero();
        assertThat(Follower.compareIds("x", "x")).isZero();
        assertThat(Follower.compareIds("x", "1:1")).isPositive();
    }
}
