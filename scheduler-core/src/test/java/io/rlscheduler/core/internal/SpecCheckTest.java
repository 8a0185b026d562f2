package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** LeaseCore's spec check takes one JSON object only. */
class SpecCheckTest {

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
