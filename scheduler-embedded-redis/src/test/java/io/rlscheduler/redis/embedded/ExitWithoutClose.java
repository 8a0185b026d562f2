package io.rlscheduler.redis.embedded;

/** Starts a server, prints its port and data directory, and exits without closing it. */
public final class ExitWithoutClose {

    private ExitWithoutClose() {
    }

    public static void main(String[] args) {
        EmbeddedRedis redis = EmbeddedRedis.start();
        System.out.println("port " + redis.getPort());
        System.out.println("dir " + redis.getDataDirectory());
    }
}
