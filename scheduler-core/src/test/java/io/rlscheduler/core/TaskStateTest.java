package io.rlscheduler.core;

import java.util.EnumSet;
import org.junit.jupiter.api.Test;

import static io.rlscheduler.core.TaskState.ASSIGNED;
import static io.rlscheduler.core.TaskState.CANCELLED;
import static io.rlscheduler.core.TaskState.FAILED;
import static io.rlscheduler.core.TaskState.QUEUED;
import static io.rlscheduler.core.TaskState.RUNNING;
import static io.rlscheduler.core.TaskState.SUCCEEDED;
import static io.rlscheduler.core.TaskState.TIMED_OUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TaskStateTest {

    @Test
    void tableMatchesTheDocumentedMachine() {
        assertThat(QUEUED.getNextStates()).containsExactlyInAnyOrder(ASSIGNED, CANCELLED, FAILED);
        assertThat(ASSIGNED.getNextStates()).containsExactlyInAnyOrder(RUNNING, QUEUED, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT);
        assertThat(RUNNING.getNextStates()).containsExactlyInAnyOrder(QUEUED, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT);
    }

    @Test
    void terminalStatesHaveNoWayOut() {
        for (TaskState s : EnumSet.of(SUCCEEDED, FAILED, CANCELLED, TIMED_OUT)) {
            assertThat(s.isTerminal()).isTrue();
            for (TaskState t : TaskState.values()) {
                assertThat(s.canMoveTo(t)).isFalse();
            }
        }
        assertThat(QUEUED.isTerminal()).isFalse();
    }

    @Test
    void illegalTransitionThrowsTypedException() {
        assertThatThrownBy(() -> SUCCEEDED.requireTransitionTo(RUNNING))
                .isInstanceOfSatisfying(IllegalTaskStateException.class, e -> {
                    assertThat(e.getFrom()).isEqualTo(SUCCEEDED);
                    assertThat(e.getTo()).isEqualTo(RUNNING);
                    assertThat(e.getTaskId()).isNull();
                    assertThat(e.getEpoch()).as("no stored task, no epoch").isEqualTo(-1);
                    assertThat(e.isRetryable()).isFalse();
                });
        assertThatThrownBy(() -> QUEUED.requireTransitionTo(RUNNING)).isInstanceOf(IllegalTaskStateException.class);
        assertThat(QUEUED.requireTransitionTo(ASSIGNED)).isEqualTo(ASSIGNED);
    }

    @Test
    void noStateMovesToItself() {
        for (TaskState s : TaskState.values()) {
            assertThat(s.canMoveTo(s)).isFalse();
        }
    }

    @Test
    void luaTableIsTheSameAsTheJavaTable() throws Exception {
        String lib;
        try (var in = TaskState.class.getResourceAsStream("/io/rlscheduler/core/lua/lib.lua")) {
            lib = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        for (TaskState from : TaskState.values()) {
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("\\b" + from.name() + "\\s*=\\s*\\{([^}]*)\\}").matcher(lib);
            assertThat(m.find()).as("Lua row for %s", from).isTrue();
            EnumSet<TaskState> lua = EnumSet.noneOf(TaskState.class);
            java.util.regex.Matcher entry = java.util.regex.Pattern.compile("([A-Z_]+)\\s*=\\s*true").matcher(m.group(1));
            while (entry.find()) {
                lua.add(TaskState.valueOf(entry.group(1)));
            }
            assertThat(lua).as("Lua transitions from %s", from).isEqualTo(from.getNextStates());
        }
    }
}
