package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RedisNamespaceTest {

    @Test
    void randomNamesHaveThePrefixAndDoNotRepeat() {
        Set<String> names = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            String name = RedisNamespace.random().name();
            assertThat(name).matches("rls-test-[0-9a-f]{16}");
            names.add(name);
        }
        assertThat(names).hasSize(10_000);
    }

    @Test
    void keysAreTheHashTagAndPartsJoinedByColons() {
        RedisNamespace ns = RedisNamespace.of("rls-test-abc");

        assertThat(ns.hashTag()).isEqualTo("{rls-test-abc}");
        assertThat(ns.key()).isEqualTo("{rls-test-abc}");
        assertThat(ns.key("lease", "gpu-3")).isEqualTo("{rls-test-abc}:lease:gpu-3");
        assertThat(ns.keyPattern()).isEqualTo("*rls-test-abc*");
        assertThat(ns).hasToString("rls-test-abc");
    }

    @Test
    void allKeysOfANamespaceHashToOneClusterSlot() {
        RedisNamespace ns = RedisNamespace.random();
        int slot = SlotHash.getSlot(ns.name());

        assertThat(SlotHash.getSlot(ns.key("lease", "gpu-0"))).isEqualTo(slot);
        assertThat(SlotHash.getSlot(ns.key("queue"))).isEqualTo(slot);
        assertThat(SlotHash.getSlot("prefix:" + ns.hashTag() + ":x")).isEqualTo(slot);
    }

    @Test
    void equalityIsByName() {
        assertThat(RedisNamespace.of("a-1")).isEqualTo(RedisNamespace.of("a-1"))
                .hasSameHashCodeAs(RedisNamespace.of("a-1"))
                .isNotEqualTo(RedisNamespace.of("a-2"));
    }

    @Test
    void acceptsLettersDigitsAndSeparators() {
        assertThat(RedisNamespace.of("Run_7.lease:x-1").name()).isEqualTo("Run_7.lease:x-1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{x}", "a}b", "a b", "a*", "a?", "a[b]", "a\\b",
            "12345678901234567890123456789012345678901234567890123456789012345"})
    void rejectsNamesThatWouldBreakTheHashTagOrThePattern(String name) {
        assertThatThrownBy(() -> RedisNamespace.of(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Invalid namespace name");
    }
}
