package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class LifecycleTest {

    @Test
    void movesForwardOnlyAndRefusesASecondStart() {
        Lifecycle life = new Lifecycle("master m-1");
        assertThat(life.getPhase()).isEqualTo(Lifecycle.Phase.NEW);
        assertThatThrownBy(life::requireRunning).isInstanceOf(IllegalStateException.class)
                .hasMessage("master m-1 is new, not running");
        life.start();
        assertThat(life.isRunning()).isTrue();
        assertThatThrownBy(life::start).isInstanceOf(IllegalStateException.class)
                .hasMessage("master m-1 was already started");
        assertThat(life.beginStop()).isEqualTo(Lifecycle.Stop.BEGUN);
        assertThat(life.isShutdown()).isTrue();
        assertThat(life.isTerminated()).isFalse();
        assertThat(life.beginStop()).isEqualTo(Lifecycle.Stop.ALREADY);
        assertThatThrownBy(life::requireRunning).hasMessage("master m-1 is shutdown, not running");
        life.terminated();
        assertThat(life.getPhase()).isEqualTo(Lifecycle.Phase.TERMINATED);
        assertThat(life.beginStop()).isEqualTo(Lifecycle.Stop.ALREADY);
        assertThatThrownBy(life::start).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aStopBeforeTheStartTerminatesAtOnce() throws InterruptedException {
        Lifecycle life = new Lifecycle("worker w");
        assertThat(life.beginStop()).isEqualTo(Lifecycle.Stop.NEVER_STARTED);
        assertThat(life.isTerminated()).isTrue();
        assertThat(life.awaitTermination(Duration.ZERO)).isTrue();
        assertThatThrownBy(life::start).hasMessage("worker w was already started");
    }

    @Test
    void aBackgroundStopTerminatesEvenWhenItThrows() throws InterruptedException {
        Lifecycle life = new Lifecycle("worker w");
        life.start();
        life.beginStop();
        CountDownLatch release = new CountDownLatch(1);
        life.stopInBackground("stopper", () -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("a part failed to stop");
        });
        assertThat(life.awaitTermination(Duration.ofMillis(50))).isFalse();
        release.countDown();
        assertThat(life.awaitTermination(Duration.ofSeconds(10))).isTrue();
        assertThat(life.getPhase()).isEqualTo(Lifecycle.Phase.TERMINATED);
    }
}
