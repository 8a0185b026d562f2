/**
 * A real redis-server that the application starts itself, for one machine.
 *
 * <ul>
 *   <li>{@link io.rlscheduler.redis.embedded.EmbeddedRedis}: one redis-server process on a free
 *       (or given) loopback port, with AOF on ({@code appendfsync always}) and
 *       {@code maxmemory-policy noeviction}, in a temporary or given data directory; stopped
 *       by {@code close()} or, if forgotten, when the JVM exits.</li>
 *   <li>{@link io.rlscheduler.redis.embedded.RedisServerBinary}: where the redis-server
 *       executable comes from (the one shipped in the embedded-redis jar, unless overridden).</li>
 * </ul>
 *
 * <p>For a lab with several machines, run a Redis of your own (see docs/operations.md, "Redis");
 * this server listens on the loopback interface only.
 */
package io.rlscheduler.redis.embedded;
