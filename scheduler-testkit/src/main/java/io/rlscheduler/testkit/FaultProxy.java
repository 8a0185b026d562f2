package io.rlscheduler.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loopback TCP proxy that tests put between a client and a server (a worker and the master, the
 * master and Redis) to break the network between them on demand.
 *
 * <p>It listens on 127.0.0.1 on a port that was free at start and forwards every accepted
 * connection to the target: for each one it opens a connection to the target and copies bytes
 * both ways, including half-closes (a FIN from one side is passed on once the bytes before it are
 * delivered; the pair is closed when both directions have ended). The client connects to
 * {@link #getPort()} instead of the server's port.
 *
 * <p><b>Modes.</b> Each control method takes effect before it returns:
 * <ul>
 *   <li>{@link #pass()} (the initial mode): bytes are forwarded.</li>
 *   <li>{@link #cut()}: every connection is closed at once with a TCP reset, in both directions
 *       (client and target both see {@code ECONNRESET}, or end-of-stream after it); bytes the
 *       proxy still held are dropped. While cut, the proxy keeps listening but resets each new
 *       connection as soon as it is accepted: the client's connect may succeed, but its first
 *       read or write fails. (Keeping the port bound means nothing else can take it meanwhile.)
 *       The target sees no new connections.</li>
 *   <li>{@link #blackhole()}: a network partition that TCP does not notice. Connections stay
 *       open, but the proxy stops reading and writing in both directions, so nothing further
 *       reaches either side; what the senders write waits in the proxy's buffers and then in the
 *       kernel's socket buffers, until those are full and the senders' writes block. New
 *       connections are accepted, but the proxy does not connect them to the target yet.</li>
 * </ul>
 *
 * <p><b>Resuming after a blackhole.</b> {@link #pass()} after {@link #blackhole()} heals the
 * partition the way TCP would: the held bytes are delivered, complete and in order, and the
 * connections accepted meanwhile are connected to the target now. A test that wants the
 * connections to die instead (a partition longer than the peers' timeouts) calls {@link #cut()}
 * and then {@link #pass()}. Closes and resets that a peer sent during the blackhole are noticed
 * only after {@code pass()}, when the proxy reads again.
 *
 * <p>Bytes that the proxy handed to the kernel before a {@code cut()} or {@code blackhole()} may
 * still arrive; the switch is immediate only for what the proxy has not yet written.
 *
 * <p><b>Threads.</b> One non-blocking I/O thread named {@code fault-proxy-<port>} (a daemon)
 * serves all connections, so the proxy costs the same for one connection as for hundreds. The
 * control methods hand their change to that thread and wait for it (at most
 * {@link #CONTROL_TIMEOUT}). {@link #close()} ends the thread and waits for it. All methods are
 * thread-safe. No dependencies beyond the JDK.
 *
 * <pre>{@code
 * try (TestRedis redis = TestRedis.start();
 *      FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort())) {
 *     RedisClient client = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + proxy.getPort()));
 *     ...
 *     proxy.cut();   // the client's connection drops and it cannot reconnect
 *     proxy.pass();  // it reconnects
 * }
 * }</pre>
 */
public final class FaultProxy implements AutoCloseable {

    /** What the proxy does with connections and their bytes; see the class comment. */
    public enum Mode {
        /** Forward bytes both ways. */
        PASS,
        /** Reset every connection, and each new one as soon as it is accepted. */
        CUT,
        /** Keep connections open but move no bytes, either way. */
        BLACKHOLE
    }

    /** How long a control method or {@link #close()} waits for the I/O thread: 10 s. */
    public static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);

    /** Thread-name prefix of the I/O threads; the port follows it. */
    static final String THREAD_PREFIX = "fault-proxy-";

    private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);

    /** Bytes held per connection and direction before the proxy stops reading the sender. */
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final int BACKLOG = 256;

    private final InetSocketAddress target;
    private final InetSocketAddress address;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final Thread thread;

    /** Tasks for the I/O thread; guarded by itself, as is {@link #stopped}. */
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    private boolean stopped;

    // Only the I/O thread touches these.
    private final Set<Link> links = new LinkedHashSet<>();
    private boolean shutdownRequested;

    private volatile Mode mode = Mode.PASS;
    private volatile int connectionCount;
    private boolean closed;

    private FaultProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        ServerSocketChannel channel = ServerSocketChannel.open();
        Selector sel = null;
        try {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), BACKLOG);
            channel.configureBlocking(false);
            sel = Selector.open();
            channel.register(sel, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            channel.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
        this.server = channel;
        this.selector = sel;
        this.address = (InetSocketAddress) channel.getLocalAddress();
        this.thread = new Thread(this::run, THREAD_PREFIX + address.getPort());
        this.thread.setDaemon(true);
    }

    /**
     * Starts a proxy in {@link Mode#PASS} on a free 127.0.0.1 port that forwards to
     * {@code host:port}. Does not connect to the target until a client connects. The caller must
     * {@link #close()} the result.
     *
     * @throws UncheckedIOException if no port can be bound
     */
    public static FaultProxy start(String host, int port) {
        return start(new InetSocketAddress(host, port));
    }

    /**
     * Starts a proxy in {@link Mode#PASS} on a free 127.0.0.1 port that forwards to
     * {@code target} (resolved once, now). The caller must {@link #close()} the result.
     *
     * @throws UncheckedIOException if no port can be bound
     * @throws IllegalArgumentException if {@code target} cannot be resolved
     */
    public static FaultProxy start(InetSocketAddress target) {
        InetSocketAddress resolved = target.isUnresolved()
                ? new InetSocketAddress(target.getHostString(), target.getPort())
                : target;
        if (resolved.isUnresolved()) {
            throw new IllegalArgumentException("Cannot resolve " + target.getHostString());
        }
        FaultProxy proxy;
        try {
            proxy = new FaultProxy(resolved);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open a loopback port for a proxy to " + target, e);
        }
        proxy.thread.start();
        log.info("FaultProxy {} -> {} started", proxy.address, resolved);
        return proxy;
    }

    /** Returns the port clients connect to, on 127.0.0.1. Never blocks. */
    public int getPort() {
        return address.getPort();
    }

    /** Returns the address clients connect to: 127.0.0.1 and {@link #getPort()}. Never blocks. */
    public InetSocketAddress getAddress() {
        return address;
    }

    /** Returns the address connections are forwarded to. Never blocks. */
    public InetSocketAddress getTarget() {
        return target;
    }

    /** Returns the current mode, as last set by a control method that has returned. Never blocks. */
    public Mode mode() {
        return mode;
    }

    /**
     * Returns how many client connections the proxy holds open now: forwarded ones, ones held by
     * a blackhole, and ones still connecting to the target. Never blocks.
     */
    public int connections() {
        return connectionCount;
    }

    /**
     * Forwards bytes again: after {@link #cut()}, new connections are accepted and forwarded;
     * after {@link #blackhole()}, held bytes are delivered and the connections accepted meanwhile
     * are connected to the target. Returns once in effect; does nothing in {@link Mode#PASS}.
     *
     * @throws IllegalStateException if closed, or the I/O thread does not answer within
     *     {@link #CONTROL_TIMEOUT}
     */
    public void pass() {
        control(Mode.PASS);
    }

    /**
     * Resets every connection in both directions, dropping the bytes the proxy held, and resets
     * each new connection as soon as it is accepted until {@link #pass()}. Returns once every
     * connection is closed.
     *
     * @throws IllegalStateException if closed, or the I/O thread does not answer within
     *     {@link #CONTROL_TIMEOUT}
     */
    public void cut() {
        control(Mode.CUT);
    }

    /**
     * Stops moving bytes in both directions while keeping connections open, until {@link #pass()}
     * (which delivers what was held) or {@link #cut()} (which drops it). New connections are
     * accepted and held. Returns once the proxy has stopped forwarding.
     *
     * @throws IllegalStateException if closed, or the I/O thread does not answer within
     *     {@link #CONTROL_TIMEOUT}
     */
    public void blackhole() {
        control(Mode.BLACKHOLE);
    }

    /**
     * Resets every connection, stops listening and ends the I/O thread, waiting for it at most
     * {@link #CONTROL_TIMEOUT}. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        submit(() -> shutdownRequested = true);
        try {
            thread.join(CONTROL_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("FaultProxy {} -> {}: I/O thread did not end within {}", address, target,
                    CONTROL_TIMEOUT);
        } else {
            log.debug("FaultProxy {} -> {} closed", address, target);
        }
    }

    @Override
    public String toString() {
        return "FaultProxy{" + address + " -> " + target + ", " + mode + '}';
    }

    // ---------------------------------------------------------------- control, any thread

    private void control(Mode next) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(this + " is closed");
            }
        }
        CompletableFuture<Void> done = submit(() -> apply(next));
        try {
            done.get(CONTROL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while switching " + this + " to " + next, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Cannot switch " + this + " to " + next, e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("The I/O thread of " + this + " did not switch to "
                    + next + " within " + CONTROL_TIMEOUT, e);
        }
    }

    /** Queues a task for the I/O thread; the future fails if that thread has ended. */
    private CompletableFuture<Void> submit(Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (tasks) {
            if (stopped) {
                done.completeExceptionally(new IllegalStateException("I/O thread has ended"));
                return done;
            }
            tasks.add(() -> {
                try {
                    task.run();
                    done.complete(null);
                } catch (RuntimeException e) {
                    done.completeExceptionally(e);
                }
            });
        }
        selector.wakeup();
        return done;
    }

    // ---------------------------------------------------------------- I/O thread

    private void run() {
        try {
            while (!shutdownRequested) {
                selector.select();
                runTasks();
                if (shutdownRequested) {
                    break;
                }
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.channel() == server) {
                        accept();
                    } else {
                        handle(key);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            log.error("FaultProxy {} -> {}: I/O thread failed; all connections dropped", address,
                    target, e);
        } finally {
            for (Link link : new ArrayList<>(links)) {
                link.reset();
            }
            closeQuietly(server);
            try {
                selector.selectNow(); // deregisters the closed channels, which closes their sockets
            } catch (IOException | RuntimeException e) {
                // Closing the selector below releases them anyway.
            }
            closeQuietly(selector);
            List<Runnable> left;
            synchronized (tasks) {
                stopped = true;
                left = new ArrayList<>(tasks);
                tasks.clear();
            }
            // Control calls that raced with close(): complete them (they see the final state).
            left.forEach(Runnable::run);
        }
    }

    private void runTasks() {
        while (true) {
            Runnable task;
            synchronized (tasks) {
                task = tasks.poll();
            }
            if (task == null) {
                return;
            }
            task.run();
        }
    }

    private void apply(Mode next) {
        if (shutdownRequested) {
            throw new IllegalStateException(this + " is closed");
        }
        Mode previous = mode;
        mode = next;
        int affected = links.size();
        switch (next) {
            case CUT:
                for (Link link : new ArrayList<>(links)) {
                    link.reset();
                }
                flushCloses();
                break;
            case BLACKHOLE:
                for (Link link : links) {
                    link.updateInterest();
                }
                break;
            case PASS:
                for (Link link : new ArrayList<>(links)) {
                    if (link.upstream == null) {
                        link.connectUpstream();
                    }
                    link.pump();
                }
                flushCloses();
                break;
            default:
                throw new AssertionError(next);
        }
        if (previous != next) {
            log.info("FaultProxy {} -> {}: {} -> {} ({} connections)", address, target, previous,
                    next, affected);
        }
    }

    /**
     * A channel closed while registered keeps its socket until the selector deregisters it; this
     * makes the resets and FINs go out before a control method returns.
     */
    private void flushCloses() {
        try {
            selector.selectNow();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void accept() throws IOException {
        SocketChannel client;
        while ((client = server.accept()) != null) {
            if (mode == Mode.CUT) {
                reset(client);
                continue;
            }
            Link link;
            try {
                client.configureBlocking(false);
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                link = new Link(client);
            } catch (IOException e) {
                reset(client);
                continue;
            }
            links.add(link);
            connectionCount = links.size();
            if (mode == Mode.PASS) {
                link.connectUpstream();
            }
        }
    }

    private void handle(SelectionKey key) {
        Link link = (Link) key.attachment();
        if (key.isConnectable()) {
            link.finishConnect();
        }
        link.pump();
    }

    private static void reset(SocketChannel channel) {
        try {
            if (channel.isOpen()) {
                channel.setOption(StandardSocketOptions.SO_LINGER, 0);
            }
        } catch (IOException | RuntimeException e) {
            // Closing without the linger option still ends the connection.
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            // Nothing more to do with it.
        }
    }

    /** One direction of a connection: bytes read from one side, not yet written to the other. */
    private static final class Flow {
        /** In fill mode: position() is how many bytes are held. */
        final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
        /** The sender has half-closed (its FIN was read). */
        boolean eof;
        /** That FIN has been passed on, after all the bytes before it. */
        boolean shut;

        boolean holds() {
            return buffer.position() > 0;
        }

        boolean wantsRead() {
            return !eof && buffer.hasRemaining();
        }

        /** Moves what it can from {@code from} to {@code to} without blocking. */
        void transfer(SocketChannel from, SocketChannel to) throws IOException {
            if (wantsRead() && from.read(buffer) < 0) {
                eof = true;
            }
            if (holds()) {
                buffer.flip();
                to.write(buffer);
                buffer.compact();
            }
            if (eof && !holds() && !shut) {
                to.shutdownOutput();
                shut = true;
            }
        }
    }

    /** A client connection and its connection to the target. Used by the I/O thread only. */
    private final class Link {
        final SocketChannel client;
        final SelectionKey clientKey;
        SocketChannel upstream;
        SelectionKey upstreamKey;
        boolean connected;
        boolean done;
        final Flow toTarget = new Flow();
        final Flow toClient = new Flow();

        Link(SocketChannel client) throws IOException {
            this.client = client;
            this.clientKey = client.register(selector, 0, this);
        }

        void connectUpstream() {
            try {
                upstream = SocketChannel.open();
                upstream.configureBlocking(false);
                upstream.setOption(StandardSocketOptions.TCP_NODELAY, true);
                connected = upstream.connect(target);
                upstreamKey = upstream.register(selector, 0, this);
                updateInterest();
            } catch (IOException | RuntimeException e) {
                log.debug("FaultProxy {}: cannot connect to {}: {}", address, target, e.toString());
                reset();
            }
        }

        void finishConnect() {
            try {
                connected = upstream.finishConnect();
            } catch (IOException | RuntimeException e) {
                // The target is down: the client sees a reset, as if it had connected directly.
                log.debug("FaultProxy {}: cannot connect to {}: {}", address, target, e.toString());
                reset();
            }
        }

        /** Moves what it can both ways, closes the pair once both directions ended. */
        void pump() {
            if (done) {
                return;
            }
            if (mode == Mode.PASS && connected) {
                try {
                    toTarget.transfer(client, upstream);
                    toClient.transfer(upstream, client);
                } catch (IOException | RuntimeException e) {
                    log.debug("FaultProxy {}: connection failed: {}", address, e.toString());
                    reset();
                    return;
                }
                if (toTarget.shut && toClient.shut) {
                    finish();
                    return;
                }
            }
            updateInterest();
        }

        void updateInterest() {
            if (done) {
                return;
            }
            int clientOps = 0;
            int upstreamOps = 0;
            if (upstream != null && !connected) {
                upstreamOps = SelectionKey.OP_CONNECT;
            } else if (mode == Mode.PASS && connected) {
                if (toTarget.wantsRead()) {
                    clientOps |= SelectionKey.OP_READ;
                }
                if (toClient.holds()) {
                    clientOps |= SelectionKey.OP_WRITE;
                }
                if (toClient.wantsRead()) {
                    upstreamOps |= SelectionKey.OP_READ;
                }
                if (toTarget.holds()) {
                    upstreamOps |= SelectionKey.OP_WRITE;
                }
            }
            clientKey.interestOps(clientOps);
            if (upstreamKey != null) {
                upstreamKey.interestOps(upstreamOps);
            }
        }

        /** Both directions ended with a FIN: close normally. */
        void finish() {
            done = true;
            closeQuietly(client);
            closeQuietly(upstream);
            remove();
        }

        /** Resets both sides, dropping held bytes. */
        void reset() {
            done = true;
            FaultProxy.reset(client);
            if (upstream != null) {
                FaultProxy.reset(upstream);
            }
            remove();
        }

        private void remove() {
            links.remove(this);
            connectionCount = links.size();
        }
    }
}
