package io.rlscheduler.protocol;

import ch.qos.logback.classic.Level;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Over real loopback sockets: a server answers every heartbeat of a good client while other
 * clients send garbage; the garbage clients are disconnected (with a typed error where they speak
 * the framing) and the good client receives every reply, in order.
 */
@ExtendWith(LeakCheck.class)
class LoopbackSocketIT {

    private static final int FRAMES = 100_000;

    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private EventLoopGroup clients;
    private Channel server;
    private LogCapture serverLog;

    @BeforeEach
    void startServer() throws InterruptedException {
        serverLog = LogCapture.of(ProtocolErrorHandler.class, Level.INFO);
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        clients = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        server = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), HeartbeatResponder::new))
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    @AfterEach
    void stopServer() {
        server.close().syncUninterruptibly();
        clients.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        boss.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        serverLog.close();
    }

    @Test
    void goodClientGetsEveryReplyWhileGarbageClientsAreDisconnected() throws Exception {
        AckCounter acks = new AckCounter();
        Channel good = connect(acks);

        Thread sender = new Thread(() -> {
            for (int seq = 1; seq <= FRAMES; seq++) {
                Heartbeat hb = SampleMessages.heartbeat(seq);
                if (seq % 256 == 0 || seq == FRAMES) {
                    good.writeAndFlush(hb);
                } else {
                    good.write(hb);
                }
                if (!good.isWritable()) {
                    await().atMost(Duration.ofSeconds(30)).until(good::isWritable);
                }
            }
        }, "good-client-sender");
        sender.start();

        // While the good client streams: a raw socket sending random bytes ...
        int rawClosed = rawGarbageClient(new Random(42));
        // ... and a client that speaks the framing but sends an unknown message type.
        ErrorCollector errors = new ErrorCollector();
        Channel typedGarbage = connect(errors);
        typedGarbage.writeAndFlush(Unpooled.wrappedBuffer(Frames.raw(FrameFormat.MAGIC, 1, 10, 200, new byte[0])));

        await().atMost(Duration.ofSeconds(10)).until(() -> !typedGarbage.isActive());
        assertThat(errors.received).hasSize(1).first()
                .satisfies(e -> assertThat(e.getCode()).isEqualTo(ErrorCode.ERROR_CODE_UNKNOWN_MESSAGE_TYPE));
        assertThat(rawClosed).as("raw garbage client read EOF or reset").isEqualTo(-1);

        sender.join(Duration.ofSeconds(120).toMillis());
        await().atMost(Duration.ofSeconds(120)).until(() -> acks.count.get() == FRAMES);
        assertThat(acks.outOfOrder.get()).isZero();
        assertThat(good.isActive()).as("good client still connected").isTrue();

        List<String> warnings = serverLog.messages(Level.WARN);
        assertThat(warnings).hasSize(2);
        assertThat(warnings).anySatisfy(w -> assertThat(w).contains("BAD_MAGIC").contains("/127.0.0.1:"));
        assertThat(warnings).anySatisfy(w -> assertThat(w).contains("UNKNOWN_MESSAGE_TYPE").contains("/127.0.0.1:"));
        good.close().sync();
    }

    private Channel connect(SimpleChannelInboundHandler<?> handler) throws InterruptedException {
        return new Bootstrap().group(clients).channel(NioSocketChannel.class)
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> handler))
                .connect(server.localAddress()).sync().channel();
    }

    /** Sends random bytes until the server closes the socket; returns what the last read returned. */
    private int rawGarbageClient(Random random) throws Exception {
        InetSocketAddress address = (InetSocketAddress) server.localAddress();
        try (Socket socket = new Socket(address.getAddress(), address.getPort())) {
            socket.setSoTimeout(10_000);
            byte[] garbage = new byte[512];
            random.nextBytes(garbage);
            garbage[0] = 'X'; // never the magic
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write(garbage);
            out.flush();
            try {
                return in.read();
            } catch (SocketException reset) {
                return -1;
            }
        }
    }

    /** Server side: answers each heartbeat with an ack carrying its sequence number. */
    private static final class HeartbeatResponder extends SimpleChannelInboundHandler<Heartbeat> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Heartbeat hb) {
            ctx.write(HeartbeatAck.newBuilder().setSequence(hb.getSequence()).build());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    private static final class AckCounter extends SimpleChannelInboundHandler<HeartbeatAck> {
        final AtomicLong count = new AtomicLong();
        final AtomicLong outOfOrder = new AtomicLong();

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HeartbeatAck ack) {
            long expected = count.incrementAndGet();
            if (ack.getSequence() != expected) {
                outOfOrder.incrementAndGet();
            }
        }
    }

    private static final class ErrorCollector extends SimpleChannelInboundHandler<ErrorReply> {
        final List<ErrorReply> received = new CopyOnWriteArrayList<>();

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ErrorReply error) {
            received.add(error);
        }
    }
}
