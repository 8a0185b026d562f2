package io.rlscheduler.master.internal;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.ServerTlsOptions;
import io.rlscheduler.protocol.TlsContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The master's RPC server: one boss thread and {@code ioThreads} event loops of the chosen
 * transport, a fresh {@link WorkerChannelHandler} per connection (behind TLS when configured),
 * behind the limits on authenticated workers ({@link WorkerPipeline}). Binding blocks the caller
 * until the port is bound; nothing here ever blocks an event loop.
 */
public final class RpcServer {

    private final NettyTransport transport;
    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final Channel serverChannel;

    private RpcServer(NettyTransport transport, EventLoopGroup boss, EventLoopGroup io, Channel serverChannel) {
        this.transport = transport;
        this.boss = boss;
        this.io = io;
        this.serverChannel = serverChannel;
    }

    /**
     * Binds the server; on failure the event loops made for it are shut down before the
     * exception leaves. With {@code tls} (null: plaintext), the TLS context is made here, once,
     * and every connection's handshake must end within the context's handshake timeout.
     */
    public static RpcServer bind(NettyTransport transport, int ioThreads, ProtocolOptions protocol, ServerTlsOptions tls,
                                 MasterContext context, String host, int port) {
        TlsContext tlsContext = tls == null ? null
                : TlsContext.forServer(tls, Duration.ofMillis(context.handshakeTimeoutMillis));
        EventLoopGroup boss = transport.newGroup(1, "rls-master-boss");
        EventLoopGroup io = transport.newGroup(ioThreads, "rls-master-io");
        try {
            Channel channel = new ServerBootstrap()
                    .group(boss, io)
                    .channel(transport.serverChannel())
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new WorkerPipeline(new ProtocolChannelInitializer(protocol, tlsContext,
                            () -> new WorkerChannelHandler(context)), context.limits))
                    .bind(host, port).syncUninterruptibly().channel();
            return new RpcServer(transport, boss, io, channel);
        } catch (RuntimeException e) {
            io.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** Returns the bound address (with the actual port when 0 was asked for). */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /**
     * Returns the address workers are sent to: {@code advertisedHost} if given, else the bound
     * address, or this host's address when bound to all interfaces; with the bound port.
     */
    public String advertisedAddress(String advertisedHost) {
        InetSocketAddress bound = localAddress();
        String host = advertisedHost;
        if (host == null) {
            host = bound.getAddress().isAnyLocalAddress() ? localHostAddress() : bound.getAddress().getHostAddress();
        }
        return host + ":" + bound.getPort();
    }

    private static String localHostAddress() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            return "127.0.0.1";
        }
    }

    /** Returns the transport's name, such as "epoll". */
    public String transportName() {
        return transport.toString();
    }

    /** Returns the number of I/O event loops. */
    public int eventLoops() {
        int loops = 0;
        for (EventExecutor ignored : io) {
            loops++;
        }
        return loops;
    }

    /** Returns the tasks waiting on the I/O event loops, summed. */
    public long pendingEventLoopTasks() {
        long pending = 0;
        for (EventExecutor executor : io) {
            if (executor instanceof SingleThreadEventExecutor single) {
                pending += single.pendingTasks();
            }
        }
        return pending;
    }

    /** Stops accepting connections. Blocks until the listening socket is closed. */
    public void closeListener() {
        serverChannel.close().syncUninterruptibly();
    }

    /** Shuts the event loops down, waiting up to about 2 s each. */
    public void shutdownEventLoops() {
        io.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
