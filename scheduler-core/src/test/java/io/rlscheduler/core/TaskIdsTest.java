package io.rlscheduler.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** TaskIds.isValid is the rule its pattern states, and LeaseCore's spec check takes one JSON object only. */
class TaskIdsTest {

    @Test
    void theHandWrittenCheckAgreesWithThePatternOnEdgeCases() {
        List<String> cases = List.of("a", "A", "0", "t-1", "t_1.x", "run.2026-12-01", ".hidden", "_a", "-a", "..", ".",
                "a/b", "a b", "a\\b", "é", "a\u0000", "ａ", "a:b", "a{b}", "", "x".repeat(128), "x".repeat(129),
                "9" + "-".repeat(127), "Z".repeat(127) + ".");
        for (String id : cases) {
            assertThat(TaskIds.isValid(id)).as("'%s'", id).isEqualTo(TaskIds.matchesPattern(id));
        }
        assertThat(TaskIds.isValid(null)).isFalse();
        assertThat(TaskIds.isValid("t-0b8f6a8e-1f1e-4f5e-9d7a-3c1f7b1a2e44")).isTrue();
        assertThat(TaskIds.isValid("x".repeat(129))).isFalse();
    }

    @Test
    void theHandWrittenCheckAgreesWithThePatternOnRandomStrings() {
        String alphabet = "aZ09._-/ \u00e9\u0000:{}#\t";
        Random random = new Random(20261201);
        for (int n = 0; n < 20_000; n++) {
            int length = random.nextInt(135);
            StringBuilder id = new StringBuilder(length);
            for (int i = 0; i < length; i++) {
                // Mostly valid characters, so that long valid ids occur too.
                id.append(random.nextInt(10) < 8 ? alphabet.charAt(random.nextInt(6)) : alphabet.charAt(random.nextInt(alphabet.length())));
            }
            assertThat(TaskIds.isValid(id.toString())).as("'%s'", id).isEqualTo(TaskIds.matchesPattern(id.toString()));
        }
    }

    @Test
    void aSpecMustBeOneJsonObject() {
        for (String ok : List.of("{}", " { } ", "{\"a\":[1,{\"b\":null}],\"c\":\"}\"}", "{\"lr\":0.123456789012345678}\n")) {
            LeaseCore.requireJsonObject(ok, "spec");
        }
        for (String notObject : List.of("", "   ", "[]", "1", "\"x\"", "null", "true")) {
            assertThatThrownBy(() -> LeaseCore.requireJsonObject(notObject, "spec")).as("'%s'", notObject)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spec must be a JSON object");
        }
        for (String trailing : List.of("{} {}", "{}x", "{}]", "{} 1")) {
            assertThatThrownBy(() -> LeaseCore.requireJsonObject(trailing, "spec")).as("'%s'", trailing)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spec");
        }
        assertThatThrownBy(() -> LeaseCore.requireJsonObject(null, "spec"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spec must be a JSON object, was null");
        // A string over Jackson's limit is refused here, as every later reader of the spec would refuse it.
        int limit = Replies.JSON.getFactory().streamReadConstraints().getMaxStringLength();
        String huge = "{\"pad\":\"" + "x".repeat(limit + 1) + "\"}";
        assertThatThrownBy(() -> LeaseCore.requireJsonObject(huge, "spec"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spec is not valid JSON");
        for (String malformed : List.of("{", "{\"a\":}", "{\"a\":[1,}", "{a:1}", "{\"a\":1,}", "{\"a\":tru}", "{\"a\":\"x}")) {
            assertThatThrownBy(() -> LeaseCore.requireJsonObject(malformed, "spec")).as("'%s'", malformed)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spec is not valid JSON");
        }
    }
}
