package io.rlscheduler.worker.internal.provenance;

import io.rlscheduler.worker.TaskExecutor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The recorder stands in for the worker's executor, so it must pass on everything the executor says. */
class ProvenanceRecorderTest {

    @Test
    void everyMethodOfTheExecutorInterfaceIsForwardedNotLeftToItsDefault() throws Exception {
        for (Method method : TaskExecutor.class.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            Method own = ProvenanceRecorder.class.getMethod(method.getName(), method.getParameterTypes());
            assertThat(own.getDeclaringClass()).as("%s must be overridden to ask the wrapped executor", method)
                    .isEqualTo(ProvenanceRecorder.class);
        }
    }
}
