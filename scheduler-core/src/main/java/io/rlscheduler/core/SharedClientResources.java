package io.rlscheduler.core;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
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

    /** Returns how many users hold the shared resources now (for tests). */
    public static synchronized int users() {
        return users;
    }
}
