package io.rlscheduler.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** TaskIds.isValid is the rule its pattern states. */
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
}
