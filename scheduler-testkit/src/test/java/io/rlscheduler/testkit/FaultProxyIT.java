package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FaultProxyIT {

    /** How long a read may take to see that the proxy closed its connection. */
    private static final int CLOSE_SEEN_MILLIS = 5_000;
    /** How long a read waits to show that nothing arrives. */
    private static final int SILENCE_MILLIS = 300;
    private static final int MEGABYTE = 1 << 20;

    private EchoServer echo;
    private FaultProxy proxy;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        echo = new EchoServer();
        proxy = FaultProxy.start("127.0.0.1", echo.port());
    }

    @AfterEach
    void stop() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        proxy.close();
        echo.close();
    }

    @AfterAll
    static void noProxyThreadIsLeft() {
        assertThat(threadNames()).noneMatch(name -> name.startsWith(FaultProxy.THREAD_PREFIX));
    }

    @Test
    void forwardsAMegabyteEachWayByteExact() throws Exception {
        Socket socket = connect();
        assertThat(proxy.getAddress()).isEqualTo(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.getPort()));
        assertThat(proxy.getTarget().getPort()).isEqualTo(echo.port());
        assertThat(proxy.mode()).isEqualTo(FaultProxy.Mode.PASS);

        byte[] sent = randomBytes(MEGABYTE, 1);
        byte[] received = exchange(socket, sent);

        assertThat(received).isEqualTo(sent);
        assertThat(proxy.connections()).isEqualTo(1);
    }

    @Test
    void servesManyConcurrentConnections() throws Exception {
        int clients = 40;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int seed = i;
                results.add(pool.submit(() -> {
                    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), proxy.getPort())) {
                        socket.setSoTimeout(30_000);
                        byte[] sent = randomBytes(64 * 1024 + seed, seed);
                        return Arrays.equals(exchange(socket, sent), sent);
                    }
                }));
            }
            for (Future<Boolean> result : results) {
                assertThat(result.get(60, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(echo.accepted()).isEqualTo(clients);
        await().atMost(Duration.ofSeconds(10)).until(proxy::connections, n -> n == 0);
    }

    @Test
    void forwardsAHalfCloseAfterTheBytesBeforeIt() throws Exception {
        Socket socket = connect();
        byte[] sent = randomBytes(300 * 1024, 2);
        CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
            try {
                socket.getOutputStream().write(sent);
                socket.shutdownOutput();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });

        // The echo server answers our FIN with its own once it has echoed everything.
        byte[] received = socket.getInputStream().readAllBytes();
        writing.get(30, TimeUnit.SECONDS);

        assertThat(received).isEqualTo(sent);
        await().atMost(Duration.ofSeconds(10)).until(proxy::connections, n -> n == 0);
    }

    @Test
    void cutClosesLiveConnectionsAndResetsNewOnesUntilPass() throws Exception {
        Socket first = connect();
        Socket second = connect();
        assertEchoes(first, "before");
        assertEchoes(second, "before");
        assertThat(proxy.connections()).isEqualTo(2);

        proxy.cut();

        assertThat(proxy.mode()).isEqualTo(FaultProxy.Mode.CUT);
        assertThat(proxy.connections()).isZero();
        assertClosed(first);
        assertClosed(second);
        await().atMost(Duration.ofSeconds(10)).until(echo::open, n -> n == 0);

        int acceptedBefore = echo.accepted();
        Socket during = connectOrRefused();
        if (during != null) {
            assertClosed(during);
        }
        assertThat(echo.accepted()).as("no connection reaches the target while cut")
                .isEqualTo(acceptedBefore);

        proxy.pass();

        assertEchoes(connect(), "after");
        assertThat(echo.accepted()).isEqualTo(acceptedBefore + 1);
    }

    @Test
    void blackholeHoldsBytesBothWaysAndPassDeliversThem() throws Exception {
        Socket live = connect();
        assertEchoes(live, "warm-up");
        int acceptedBefore = echo.accepted();

        proxy.blackhole();

        assertThat(proxy.mode()).isEqualTo(FaultProxy.Mode.BLACKHOLE);
        send(live, "held");
        assertSilent(live);
        assertThat(proxy.connections()).as("the connection stays open").isEqualTo(1);

        Socket late = connect(); // accepted, but not connected to the target yet
        send(late, "late");
        assertSilent(late);
        assertThat(proxy.connections()).isEqualTo(2);
        assertThat(echo.accepted()).isEqualTo(acceptedBefore);
        assertThat(echo.open()).isEqualTo(1);

        proxy.pass();

        assertThat(readExactly(live, 4)).isEqualTo("held");
        assertThat(readExactly(late, 4)).isEqualTo("late");
        assertThat(echo.accepted()).isEqualTo(acceptedBefore + 1);
        assertEchoes(live, "after");
    }

    @Test
    void blackholeHoldsAnEchoAlreadyOnItsWayBack() throws Exception {
        // The target's answer, not only the request, is held: block the way back mid-stream.
        Socket socket = connect();
        byte[] sent = randomBytes(8 * MEGABYTE, 3);
        CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
            try {
                socket.getOutputStream().write(sent);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        InputStream in = socket.getInputStream();
        byte[] received = new byte[sent.length];
        int got = in.readNBytes(received, 0, 1024);

        proxy.blackhole();

        // Drain what the kernel already had; then nothing more comes.
        socket.setSoTimeout(SILENCE_MILLIS);
        try {
            while (got < received.length) {
                int n = in.read(received, got, received.length - got);
                assertThat(n).isPositive();
                got += n;
            }
        } catch (SocketTimeoutException expected) {
            // Silence.
        }
        assertThat(got).as("the whole echo did not get through the blackhole")
                .isLessThan(received.length);

        proxy.pass();

        socket.setSoTimeout(30_000);
        got += in.readNBytes(received, got, received.length - got);
        writing.get(30, TimeUnit.SECONDS);
        assertThat(got).isEqualTo(received.length);
        assertThat(received).isEqualTo(sent);
    }

    @Test
    void cutAfterBlackholeDropsTheHeldBytes() throws Exception {
        Socket socket = connect();
        assertEchoes(socket, "warm-up");
        proxy.blackhole();
        send(socket, "held");

        proxy.cut();

        assertClosed(socket);
        proxy.pass();
        assertEchoes(connect(), "after");
    }

    @Test
    void connectionsToADeadTargetAreReset() throws Exception {
        echo.close();

        Socket socket = connectOrRefused();

        if (socket != null) {
            assertClosed(socket);
        }
        await().atMost(Duration.ofSeconds(10)).until(proxy::connections, n -> n == 0);
    }

    @Test
    void lettuceWorksThroughTheProxyFailsWhileCutAndReconnectsAfterPass() {
        ClientResources resources = ClientResources.builder()
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                .reconnectDelay(Delay.constant(Duration.ofMillis(20)))
                .build();
        try (TestRedis redis = TestRedis.fromEnvironment();
                FaultProxy redisProxy = FaultProxy.start(redis.getHost(), redis.getPort())) {
            RedisURI uri = RedisURI.create("redis://127.0.0.1:" + redisProxy.getPort());
            uri.setTimeout(Duration.ofSeconds(1));
            RedisClient client = RedisClient.create(resources, uri);
            client.setOptions(ClientOptions.builder().autoReconnect(true).build());
            RedisNamespace ns = RedisNamespace.random();
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                RedisCommands<String, String> commands = connection.sync();
                assertThat(commands.set(ns.key("k"), "v")).isEqualTo("OK");
                assertThat(redisProxy.connections()).isEqualTo(1);

                redisProxy.cut();

                assertThatThrownBy(() -> commands.get(ns.key("k"))).isInstanceOf(RedisException.class);

                redisProxy.pass();

                await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                        .until(() -> commands.get(ns.key("k")), "v"::equals);
                assertThat(connection.isOpen()).isTrue();

                redisProxy.blackhole();

                assertThatThrownBy(() -> commands.get(ns.key("k")))
                        .isInstanceOf(RedisException.class)
                        .hasMessageContaining("timed out");
                assertThat(redisProxy.connections()).as("TCP did not notice").isEqualTo(1);

                redisProxy.pass();

                await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                        .until(() -> commands.set(ns.key("k2"), "w"), "OK"::equals);
                assertThat(commands.get(ns.key("k2"))).isEqualTo("w");
                commands.del(ns.key("k"), ns.key("k2"));
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    @Test
    void closeEndsEverythingLeavesNoThreadAndIsIdempotent() throws Exception {
        FaultProxy other = FaultProxy.start(new InetSocketAddress("127.0.0.1", echo.port()));
        String threadName = FaultProxy.THREAD_PREFIX + other.getPort();
        assertThat(threadNames()).contains(threadName);
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), other.getPort());
        sockets.add(socket);
        assertEchoes(socket, "hello");

        other.close();
        other.close();

        assertThat(threadNames()).doesNotContain(threadName);
        assertClosed(socket);
        assertThat(other.connections()).isZero();
        assertThatThrownBy(other::cut).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(other::pass).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), other.getPort()).close())
                .isInstanceOf(ConnectException.class);
    }

    // ---------------------------------------------------------------- helpers

    private Socket connect() throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), proxy.getPort());
        socket.setSoTimeout(CLOSE_SEEN_MILLIS);
        sockets.add(socket);
        return socket;
    }

    /** Connects to the proxy; null if the connection was refused or reset while connecting. */
    private Socket connectOrRefused() {
        try {
            return connect();
        } catch (IOException e) {
            return null;
        }
    }

    /** Writes all of {@code sent} from another thread while reading the echo back. */
    private static byte[] exchange(Socket socket, byte[] sent) throws Exception {
        CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
            try {
                socket.getOutputStream().write(sent);
                socket.getOutputStream().flush();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        byte[] received = socket.getInputStream().readNBytes(sent.length);
        writing.get(30, TimeUnit.SECONDS);
        return received;
    }

    private static void send(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }

    private static String readExactly(Socket socket, int length) throws IOException {
        byte[] bytes = socket.getInputStream().readNBytes(length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void assertEchoes(Socket socket, String text) throws IOException {
        send(socket, text);
        assertThat(readExactly(socket, text.length())).isEqualTo(text);
    }

    /** Nothing arrives for {@link #SILENCE_MILLIS}, and the connection is not closed either. */
    private static void assertSilent(Socket socket) throws IOException {
        int timeout = socket.getSoTimeout();
        socket.setSoTimeout(SILENCE_MILLIS);
        try {
            assertThatThrownBy(() -> socket.getInputStream().read())
                    .isInstanceOf(SocketTimeoutException.class);
        } finally {
            socket.setSoTimeout(timeout);
        }
    }

    /** A read sees end-of-stream or a reset within {@link #CLOSE_SEEN_MILLIS}, not a timeout. */
    private static void assertClosed(Socket socket) throws IOException {
        socket.setSoTimeout(CLOSE_SEEN_MILLIS);
        try {
            InputStream in = socket.getInputStream();
            while (true) {
                int b = in.read();
                if (b < 0) {
                    return;
                }
                // Bytes delivered before the close may still be read; then comes the end.
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("connection still open " + CLOSE_SEEN_MILLIS + " ms after the cut", e);
        } catch (IOException e) {
            assertThat(e).hasMessageContaining("reset");
        }
    }

    private static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .collect(Collectors.toSet());
    }

    /** Echoes every byte back on each connection until the client half-closes, then closes. */
    private static final class EchoServer implements AutoCloseable {
        private final ServerSocket server;
        private final ExecutorService pool = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "echo");
            thread.setDaemon(true);
            return thread;
        });
        private final AtomicInteger accepted = new AtomicInteger();
        private final Set<Socket> open = ConcurrentHashMap.newKeySet();

        EchoServer() throws IOException {
            server = new ServerSocket(0, 256, InetAddress.getLoopbackAddress());
            pool.execute(this::acceptLoop);
        }

        int port() {
            return server.getLocalPort();
        }

        /** Connections accepted so far. */
        int accepted() {
            return accepted.get();
        }

        /** Connections open now. */
        int open() {
            return open.size();
        }

        private void acceptLoop() {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    accepted.incrementAndGet();
                    open.add(socket);
                    pool.execute(() -> echo(socket));
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void echo(Socket socket) {
            try (socket) {
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                byte[] buffer = new byte[16 * 1024];
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                }
                socket.shutdownOutput();
            } catch (IOException e) {
                // A reset from the proxy: the connection is over.
            } finally {
                open.remove(socket);
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket socket : open) {
                socket.close();
            }
            pool.shutdownNow();
            try {
                if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("echo threads still running");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
