package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One set of Lettuce threads (I/O event loops, computation pool, timer) per JVM for the Redis
 * clients that masters and workers create themselves, shared by reference count: the first
 * {@link #acquire()} creates it, the last {@link #release} shuts it down. Lettuce recommends one
 * {@link ClientResources} per JVM; without it every embedded master or worker brings its own
 * event loops (two per core), so several workers in one process wake more threads per Redis
 * answer than there are cores to run them. A client passed in by the user is the user's to
 * configure and is not involved. Thread-safe.
 */
public final class SharedClientResources {

    private static final Logger log = LoggerFactory.getLogger(SharedClientResources.class);

    private static ClientResources resources;
    private static int users;

    private SharedClientResources() {
    }

    /** Returns the JVM's shared resources, creating them for the first user; pair with {@link #release}. */
    public static synchronized ClientResources acquire() {
        if (users == 0) {
            resources = DefaultClientResources.create();
        }
        users++;
        return resources;
    }

    /**
     * Gives back what {@link #acquire()} returned; the last user's release shuts the threads down
     * (waiting up to 2 s for them). Call it after the clients made with them were shut down.
     *
     * @throws IllegalArgumentException if {@code acquired} are not the current shared resources
     */
    public static void release(ClientResources acquired) {
        Objects.requireNonNull(acquired, "acquired");
        ClientResources last;
        synchronized (SharedClientResources.class) {
            if (acquired != resources || users == 0) {
                throw new IllegalArgumentException("these client resources are not the shared ones, or were released");
            }
            users--;
            if (users > 0) {
                return;
            }
            last = resources;
            resources = null;
        }
        try {
            last.shutdown(0, 2, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("shared Redis client threads did not stop cleanly: {}", e.toString());
        }
    }

    /**
     * Creates a Redis client on the shared resources, for an owner that closes it once: what a
     * master or worker does when it is given a Redis address rather than a client.
     */
    public static OwnedClient newClient(RedisURI uri) {
        Objects.requireNonNull(uri, "uri");
        ClientResources acquired = acquire();
        try {
            return new OwnedClient(RedisClient.create(acquired, uri), acquired);
        } catch (RuntimeException e) {
            release(acquired);
            throw e;
        }
    }

    /** A Redis client made on the shared resources ({@link #newClient}); {@link #close()} gives them back. */
    public static final class OwnedClient implements AutoCloseable {
        private final RedisClient client;
        private final ClientResources resources;
        private final AtomicBoolean closed = new AtomicBoolean();

        private OwnedClient(RedisClient client, ClientResources resources) {
            this.client = client;
            this.resources = resources;
        }

        /** Returns the client. */
        public RedisClient client() {
            return client;
        }

        /** Shuts the client down (up to 2 s) and releases the shared resources; later calls do nothing. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                try {
                    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                } finally {
                    release(resources);
                }
            }
        }
    }

    /** Returns how many users hold the shared resources now (for tests). */
    public static synchronized int users() {
        return users;
    }
}
