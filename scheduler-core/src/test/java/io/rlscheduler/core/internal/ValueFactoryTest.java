package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.core.TaskPage;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The core installs one value factory, there by the time this package asks for it. */
class ValueFactoryTest {

    @Test
    void theCoreInstallsOneFactoryThatBuildsItsValues() {
        ValueFactory values = ValueFactory.get();
        assertThat(values).isNotNull();
        TaskPage page = values.taskPage(List.of(), 7);
        assertThat(page.getTasks()).isEmpty();
        assertThat(page.getTotal()).isEqualTo(7);
        assertThatThrownBy(() -> ValueFactory.install(values)).isInstanceOf(IllegalStateException.class);
    }
}
