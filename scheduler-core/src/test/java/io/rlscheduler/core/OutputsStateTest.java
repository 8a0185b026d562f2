package io.rlscheduler.core;

import static io.rlscheduler.core.OutputsState.COMPLETE;
import static io.rlscheduler.core.OutputsState.INCOMPLETE;
import static io.rlscheduler.core.OutputsState.PENDING;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class OutputsStateTest {

    @Test
    void aPendingRecordMovesToAFinalStateAndAFinalOneNeverMoves() {
        assertThat(PENDING.getNextStates()).containsExactlyInAnyOrder(PENDING, COMPLETE, INCOMPLETE);
        assertThat(PENDING.isFinal()).isFalse();
        for (OutputsState s : EnumSet.of(COMPLETE, INCOMPLETE)) {
            assertThat(s.isFinal()).isTrue();
            for (OutputsState t : OutputsState.values()) {
                assertThat(s.canMoveTo(t)).as("%s -> %s", s, t).isFalse();
            }
        }
    }

    @Test
    void luaTableIsTheSameAsTheJavaTable() throws Exception {
        String script;
        try (var in = OutputsState.class.getResourceAsStream("/io/rlscheduler/core/lua/outputs.lua")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher table = Pattern.compile("OUTPUTS_TRANSITIONS = \\{(.*?)\\n\\}", Pattern.DOTALL).matcher(script);
        assertThat(table.find()).as("the table in outputs.lua").isTrue();
        for (OutputsState from : OutputsState.values()) {
            Matcher m = Pattern.compile("\\b" + from.name() + "\\s*=\\s*\\{([^}]*)\\}").matcher(table.group(1));
            assertThat(m.find()).as("Lua row for %s", from).isTrue();
            EnumSet<OutputsState> lua = EnumSet.noneOf(OutputsState.class);
            Matcher entry = Pattern.compile("([A-Z_]+)\\s*=\\s*true").matcher(m.group(1));
            while (entry.find()) {
                lua.add(OutputsState.valueOf(entry.group(1)));
            }
            assertThat(lua).as("Lua moves from %s", from).isEqualTo(from.getNextStates());
        }
    }
}
