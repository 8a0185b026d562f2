package io.rlscheduler.protocol;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The socket transport to use: native epoll where Netty's native library loads (Linux), NIO
 * everywhere else. Immutable and thread-safe.
 */
public final class NettyTransport {

    private final boolean epoll;

    private NettyTransport(boolean epoll) {
        this.epoll = epoll;
    }

    /** Returns epoll when available, else NIO. */
    public static NettyTransport best() {
        return new NettyTransport(Epoll.isAvailable());
    }

    /** Returns the NIO transport, available everywhere. */
    public static NettyTransport nio() {
        return new NettyTransport(false);
    }

    /** Returns whether this is the native epoll transport. */
    public boolean isEpoll() {
        return epoll;
    }

    /**
     * Creates an event loop group.
     *
     * @param threads number of event loops, at least 1
     * @param name    thread name prefix
     * @return the group; shut it down when done
     */
    public EventLoopGroup newGroup(int threads, String name) {
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), factory);
    }

    /** Returns the server channel class of this transport. */
    public Class<? extends ServerChannel> serverChannel() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** Returns the client channel class of this transport. */
    public Class<? extends SocketChannel> clientChannel() {
        return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    @Override
    public String toString() {
        return epoll ? "epoll" : "nio";
    }
}
