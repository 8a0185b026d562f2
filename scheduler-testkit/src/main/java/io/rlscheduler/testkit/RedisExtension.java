package io.rlscheduler.testkit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Arrays;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ExtensionContext.Store;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JUnit 5 extension that gives a test class a real Redis server and each test its own key
 * namespace.
 *
 * <pre>{@code
 * class LeaseIT {
 *     @RegisterExtension
 *     static RedisExtension redis = new RedisExtension();
 *
 *     @Test
 *     void grants(RedisCommands<String, String> commands, RedisNamespace ns) {
 *         commands.set(ns.key("lease", "gpu-0"), "worker-1");
 *     }
 * }
 * }</pre>
 * or {@code @ExtendWith(RedisExtension.class)} on the class.
 *
 * <p><b>One server per test class.</b> Before the first test of a class it gets a server from
 * {@link TestRedis#fromEnvironment()}: a fresh redis-server (a few tens of milliseconds), or the
 * external server named by {@code REDIS_URL}. After the last test it closes the client and the
 * server. Per class rather than per JVM because fault-injection tests kill and restart the
 * server: a class's crashes, AOF file and timing then cannot reach another class, also when
 * classes run in parallel, and the cost of a start is small next to a class's tests. Nested
 * classes share their enclosing class's server. Registered on an instance field, the server lives
 * for one test instead.
 *
 * <p><b>Isolation without flushing.</b> The server is never flushed (it may be an external one
 * shared with others). Instead each test gets a fresh random {@link RedisNamespace}; code under
 * test puts its keys under the namespace's hash tag. After each test the extension unlinks the
 * keys whose names contain the namespace's name (a {@code SCAN} of the whole keyspace).
 *
 * <p><b>Kill and restart.</b> A test may {@link TestRedis#kill()}, {@link TestRedis#stop()} or
 * {@link TestRedis#restart()} the server (after {@link TestRedis#assumeControllable()}). If it
 * leaves the server down, the extension restarts it on the same port and data after the test,
 * so the next test finds it running; the client reconnects by itself.
 *
 * <p><b>Parameters</b> it resolves, in test, lifecycle and {@code @BeforeAll} methods:
 * <ul>
 *   <li>{@link TestRedis}: the class's server;</li>
 *   <li>{@link RedisClient}: a client for it, shared by the class; reconnect delay 1 ms doubling
 *       up to 500 ms, command timeout {@link TestRedis#CLIENT_TIMEOUT}; do not shut it down;</li>
 *   <li>{@link RedisURI}: a new URI of the server;</li>
 *   <li>{@link RedisNamespace}: the test's namespace, the same in its {@code @BeforeEach},
 *       test and {@code @AfterEach} methods (in {@code @BeforeAll}/{@code @AfterAll}, one for
 *       the class, cleaned after the class);</li>
 *   <li>{@code StatefulRedisConnection<String, String>} and {@code RedisCommands<String, String>}:
 *       one connection per test (or per class in {@code @BeforeAll}), closed after it.</li>
 * </ul>
 *
 * <p>Thread-safe: all state lives in the JUnit store of the test's context, so classes and
 * methods may run in parallel. The accessors {@link #server()} and {@link #client()} read the
 * server of the class this instance was last started for; with one {@code static} field per
 * class that is always that class's, otherwise take parameters instead.
 */
public final class RedisExtension implements BeforeAllCallback, AfterAllCallback,
        BeforeEachCallback, AfterEachCallback, ParameterResolver {

    private static final Logger log = LoggerFactory.getLogger(RedisExtension.class);
    private static final Namespace STORE = Namespace.create(RedisExtension.class);
    private static final String SERVER_KEY = "server";

    private volatile ServerResources current;

    /** Creates the extension; it starts nothing until a test class runs. */
    public RedisExtension() {
    }

    /**
     * Returns the server of the class that is running.
     *
     * @throws IllegalStateException outside a test class that uses this instance
     */
    public TestRedis server() {
        return requireCurrent().server();
    }

    /**
     * Returns the shared client of the class that is running (see the class comment for its
     * settings). Do not shut it down.
     *
     * @throws IllegalStateException outside a test class that uses this instance
     */
    public RedisClient client() {
        return requireCurrent().client();
    }

    /** Gets or starts the class's server. */
    @Override
    public void beforeAll(ExtensionContext context) {
        acquire(context);
    }

    /** Gets the server, starting one if the extension was registered on an instance field. */
    @Override
    public void beforeEach(ExtensionContext context) {
        acquire(context);
    }

    /**
     * Closes the test's connection, restarts the server if the test left it down, deletes the
     * keys of the test's namespace, and releases a per-test server.
     */
    @Override
    public void afterEach(ExtensionContext context) {
        finish(context);
    }

    /** Deletes the keys of the class-level namespace, then closes the client and the server. */
    @Override
    public void afterAll(ExtensionContext context) {
        finish(context);
    }

    /** Supports the parameter types listed in the class comment. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext,
            ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        if (type == TestRedis.class || type == RedisClient.class || type == RedisURI.class
                || type == RedisNamespace.class) {
            return true;
        }
        if (type == StatefulRedisConnection.class || type == RedisCommands.class) {
            return hasStringTypeArguments(parameterContext.getParameter().getParameterizedType());
        }
        return false;
    }

    /** Resolves a parameter of a type listed in the class comment. */
    @Override
    public Object resolveParameter(ParameterContext parameterContext,
            ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        ServerResources resources = resources(extensionContext);
        if (resources == null) {
            throw new ParameterResolutionException("No Redis server for "
                    + extensionContext.getDisplayName() + ": RedisExtension has not started");
        }
        if (type == TestRedis.class) {
            return resources.server();
        }
        if (type == RedisClient.class) {
            return resources.client();
        }
        if (type == RedisURI.class) {
            return resources.server().getUri();
        }
        if (type == RedisNamespace.class) {
            return namespace(extensionContext);
        }
        StatefulRedisConnection<String, String> connection = connection(extensionContext, resources);
        return type == RedisCommands.class ? connection.sync() : connection;
    }

    private ServerResources requireCurrent() {
        ServerResources resources = current;
        if (resources == null) {
            throw new IllegalStateException("RedisExtension has no server: use it from a test "
                    + "class that registers it, while that class runs");
        }
        return resources;
    }

    private synchronized void acquire(ExtensionContext context) {
        ServerResources resources = resources(context);
        if (resources == null) {
            resources = ServerResources.open(context.getUniqueId());
            context.getStore(STORE).put(SERVER_KEY, resources);
            current = resources;
        }
    }

    private void finish(ExtensionContext context) {
        Store store = context.getStore(STORE);
        String id = context.getUniqueId();
        ServerResources resources = resources(context);
        try {
            StatefulRedisConnection<?, ?> connection =
                    store.remove(connectionKey(id), StatefulRedisConnection.class);
            if (connection != null) {
                connection.close();
            }
            if (resources != null) {
                resources.ensureRunning();
                RedisNamespace namespace = store.remove(namespaceKey(id), RedisNamespace.class);
                if (namespace != null) {
                    long deleted = resources.deleteKeys(namespace);
                    log.debug("Deleted {} keys of namespace {}", deleted, namespace);
                }
            }
        } finally {
            if (resources != null && resources.ownerId().equals(id)) {
                store.remove(SERVER_KEY);
                synchronized (this) {
                    if (current == resources) {
                        current = null;
                    }
                }
                resources.close();
            }
        }
    }

    private static ServerResources resources(ExtensionContext context) {
        return context.getStore(STORE).get(SERVER_KEY, ServerResources.class);
    }

    private static RedisNamespace namespace(ExtensionContext context) {
        return context.getStore(STORE).getOrComputeIfAbsent(
                namespaceKey(context.getUniqueId()), key -> RedisNamespace.random(),
                RedisNamespace.class);
    }

    @SuppressWarnings("unchecked")
    private static StatefulRedisConnection<String, String> connection(ExtensionContext context,
            ServerResources resources) {
        return context.getStore(STORE).getOrComputeIfAbsent(
                connectionKey(context.getUniqueId()), key -> resources.client().connect(),
                StatefulRedisConnection.class);
    }

    private static String namespaceKey(String uniqueId) {
        return "namespace:" + uniqueId;
    }

    private static String connectionKey(String uniqueId) {
        return "connection:" + uniqueId;
    }

    /** True for a raw type, or for exactly {@code <String, String>}. */
    private static boolean hasStringTypeArguments(Type type) {
        if (!(type instanceof ParameterizedType)) {
            return true;
        }
        return Arrays.stream(((ParameterizedType) type).getActualTypeArguments())
                .allMatch(String.class::equals);
    }
}
