/**
 * A real Redis server, fault injection and test certificates for the tests of the other modules,
 * used at test scope only (and by the benchmarks).
 *
 * <ul>
 *   <li>{@link io.rlscheduler.testkit.TestRedis}: one redis-server process on a free loopback
 *       port with AOF on ({@code appendfsync always}) in its own temporary directory (an
 *       {@code EmbeddedRedis} of scheduler-embedded-redis), which a test can
 *       {@link io.rlscheduler.testkit.TestRedis#stop() stop},
 *       {@link io.rlscheduler.testkit.TestRedis#kill() kill -9} and
 *       {@link io.rlscheduler.testkit.TestRedis#restart() restart} on the same port and data;
 *       or, when the {@code REDIS_URL} environment variable is set, that external server.</li>
 *   <li>{@link io.rlscheduler.testkit.RedisExtension}: a JUnit 5 extension that runs one such
 *       server per test class and injects it, a Lettuce client and connection, and a
 *       per-test {@link io.rlscheduler.testkit.RedisNamespace} into test methods.</li>
 *   <li>{@link io.rlscheduler.testkit.FaultProxy}: a loopback TCP proxy put between a client and
 *       a server that can {@link io.rlscheduler.testkit.FaultProxy#cut() cut} the connections or
 *       {@link io.rlscheduler.testkit.FaultProxy#blackhole() blackhole} them (a partition TCP
 *       does not notice).</li>
 *   <li>{@link io.rlscheduler.testkit.JvmProcess}: a main class in a JVM of its own that a test
 *       can kill (a crash), terminate, and freeze and thaw (SIGSTOP/SIGCONT); and
 *       {@link io.rlscheduler.testkit.ProcessTree}, which finds a process's descendants and tells
 *       live processes from zombies through Linux's {@code /proc}.</li>
 *   <li>{@link io.rlscheduler.testkit.Gate}: holds a thread (an event listener, a callback) at a
 *       point the test picks until the test lets it go.</li>
 *   <li>{@link io.rlscheduler.testkit.TestCertificates}: a throw-away CA and the certificates it
 *       signs, made with {@code keytool} and written as the PEM files the TLS settings read.</li>
 * </ul>
 */
package io.rlscheduler.testkit;
