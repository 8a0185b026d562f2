package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import org.junit.jupiter.api.Test;

/** The JVM's shared Lettuce threads: one set however many users, shut down with the last one. */
class SharedClientResourcesTest {

    @Test
    void usersShareOneSetWhichTheLastReleaseShutsDown() {
        int before = SharedClientResources.users();
        ClientResources first = SharedClientResources.acquire();
        ClientResources second = SharedClientResources.acquire();
        assertThat(second).isSameAs(first);
        assertThat(SharedClientResources.users()).isEqualTo(before + 2);

        SharedClientResources.release(first);
        assertThat(first.eventExecutorGroup().isShuttingDown()).as("still used by the second").isFalse();
        SharedClientResources.release(second);
        if (before == 0) {
            assertThat(first.eventExecutorGroup().isShuttingDown()).as("the last user is gone").isTrue();
            ClientResources fresh = SharedClientResources.acquire();
            assertThat(fresh).as("a later user gets a new set").isNotSameAs(first);
            SharedClientResources.release(fresh);
        }
        assertThat(SharedClientResources.users()).isEqualTo(before);
    }

    @Test
    void releasingResourcesThatAreNotTheSharedOnesIsRefused() {
        ClientResources own = DefaultClientResources.create();
        try {
            ClientResources shared = SharedClientResources.acquire();
            try {
                assertThatThrownBy(() -> SharedClientResources.release(own)).isInstanceOf(IllegalArgumentException.class);
            } finally {
                SharedClientResources.release(shared);
            }
        } finally {
            own.shutdown();
        }
    }

    @Test
    void anOwnedClientHoldsTheSharedResourcesUntilItsFirstClose() {
        int before = SharedClientResources.users();
        SharedClientResources.OwnedClient owned = SharedClientResources.newClient(RedisURI.create("redis://127.0.0.1:1"));
        assertThat(owned.client().getResources()).isNotNull();
        assertThat(SharedClientResources.users()).isEqualTo(before + 1);
        owned.close();
        owned.close(); // a second close releases nothing twice
        assertThat(SharedClientResources.users()).isEqualTo(before);
    }
}
