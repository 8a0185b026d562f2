package io.rlscheduler.protocol;

import ch.qos.logback.classic.Level;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.rlscheduler.testkit.TestCertificates;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The protocol pipeline with TLS over real loopback sockets, with certificates made by keytool: a
 * server that speaks first (as the master sends its challenge) and answers heartbeats; TLS and
 * plaintext peers in every pairing; client certificates; host name verification. Every refused
 * connection gives exactly one log line on each side that logs, and the server goes on serving.
 */
@ExtendWith(LeakCheck.class)
class TlsPipelineIT {

    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    static Path certificateDir;
    private static TestCertificates ca;
    private static TestCertificates.Issued serverCertificate;
    private static TestCertificates.Issued elsewhereCertificate;
    private static TestCertificates.Issued clientCertificate;
    private static TestCertificates.Issued strangerCertificate;

    private EventLoopGroup boss;
    private EventLoopGroup io;
    private final List<Channel> servers = new CopyOnWriteArrayList<>();
    /** The servers' side of each connection, in the order they were accepted. */
    private final List<Channel> serverChildren = new CopyOnWriteArrayList<>();
    /** Per connection the servers greeted: the client certificate's subject, or "none". */
    private final List<String> serverPeerCertificates = new CopyOnWriteArrayList<>();
    private LogCapture tlsLog;
    private LogCapture protocolLog;

    @BeforeAll
    static void makeCertificates() {
        ca = TestCertificates.create(certificateDir.resolve("ca"));
        serverCertificate = ca.issue("server", "localhost", "dns:localhost", "ip:127.0.0.1");
        elsewhereCertificate = ca.issue("elsewhere", "elsewhere.example", "dns:elsewhere.example");
        clientCertificate = ca.issue("client", "w1");
        strangerCertificate = TestCertificates.create(certificateDir.resolve("other"), "other-ca")
                .issue("stranger", "w1");
    }

    @BeforeEach
    void start() {
        tlsLog = LogCapture.of(TlsErrorHandler.class, Level.INFO);
        protocolLog = LogCapture.of(ProtocolErrorHandler.class, Level.INFO);
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        io = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    }

    @AfterEach
    void stop() {
        servers.forEach(s -> s.close().syncUninterruptibly());
        io.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        tlsLog.close();
        protocolLog.close();
    }

    @Test
    void framesFlowBothWaysInsideTls13AndTheServerSpeaksFirst() throws Exception {
        InetSocketAddress server = server(serverTls(ClientAuthMode.NONE));
        Peer client = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())));

        client.awaitGreeting();
        for (int seq = 1; seq <= 100; seq++) {
            client.channel.writeAndFlush(SampleMessages.heartbeat(seq));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> client.acks.size() == 100);
        assertThat(client.acks).extracting(HeartbeatAck::getSequence).startsWith(1L, 2L, 3L).endsWith(100L);
        SslHandler ssl = client.channel.pipeline().get(SslHandler.class);
        assertThat(client.channel.pipeline().first()).isSameAs(ssl);
        assertThat(ssl.engine().getSession().getProtocol()).isEqualTo("TLSv1.3");
        assertThat(tlsLog.messages(Level.WARN)).isEmpty();
        client.channel.close().sync();
    }

    @Test
    void aPlaintextClientThatSendsFirstIsClosedWithOneLineAndTheServerServesTheNext() throws Exception {
        InetSocketAddress server = server(serverTls(ClientAuthMode.NONE));

        assertThat(rawClientSending(server, Frames.raw(FrameFormat.MAGIC, 1, 10, 200, new byte[0])))
                .as("the server sent TLS alerts at most, and closed the connection").isLessThanOrEqualTo(64);

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tlsLog.messages(Level.WARN)).hasSize(1));
        assertThat(tlsLog.messages(Level.WARN).get(0)).contains("/127.0.0.1:")
                .contains("is not TLS, but this port requires TLS");
        assertServesATlsClient(server);
        assertThat(tlsLog.messages(Level.WARN)).hasSize(1);
        assertThat(protocolLog.messages(Level.WARN)).isEmpty();
    }

    @Test
    void aPlaintextClientThatWaitsForTheServerIsClosedAtTheHandshakeTimeoutWithOneLine() throws Exception {
        Duration timeout = Duration.ofMillis(500);
        InetSocketAddress server = server(TlsContext.forServer(ServerTlsOptions.builder(
                serverCertificate.certificateChain(), serverCertificate.privateKey()).build(), timeout));
        Peer plaintext = connect(server, null);

        await().atMost(Duration.ofSeconds(10)).until(() -> !plaintext.channel.isActive());
        assertThat(plaintext.greetings).as("the server's first message waits for the TLS handshake").isEmpty();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tlsLog.messages(Level.WARN)).hasSize(1));
        assertThat(tlsLog.messages(Level.WARN).get(0)).contains("no TLS handshake within 500 ms")
                .contains("this port requires TLS");
        // The server's alert is the plaintext client's one line.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(protocolLog.messages(Level.WARN))
                .singleElement().asString().contains("BAD_MAGIC").contains("0x15 0x03 look like a TLS alert"));
        assertServesATlsClient(server);
        assertThat(tlsLog.messages(Level.WARN)).hasSize(1);
        assertThat(protocolLog.messages(Level.WARN)).hasSize(1);
    }

    @Test
    void aTlsClientAgainstAPlaintextServerGetsOneLineOnEachSideAndTheServerServesTheNext() throws Exception {
        InetSocketAddress server = server(null);
        Peer client = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())));

        await().atMost(Duration.ofSeconds(10)).until(() -> !client.channel.isActive());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(tlsLog.messages(Level.WARN)).hasSize(1);
            assertThat(protocolLog.messages(Level.WARN)).hasSize(1);
        });
        assertThat(tlsLog.messages(Level.WARN).get(0)).startsWith("closing connection to ")
                .contains("answered in plaintext, not TLS");
        assertThat(protocolLog.messages(Level.WARN).get(0)).contains("BAD_MAGIC")
                .contains("the first bytes 0x16 0x03 look like a TLS ClientHello: this port does not use TLS");

        Peer plaintext = connect(server, null);
        plaintext.awaitGreeting();
        plaintext.channel.writeAndFlush(SampleMessages.heartbeat(7));
        await().atMost(Duration.ofSeconds(10)).until(() -> plaintext.acks.size() == 1);
        plaintext.channel.close().sync();
        assertThat(tlsLog.messages(Level.WARN)).hasSize(1);
        assertThat(protocolLog.messages(Level.WARN)).hasSize(1);
    }

    @Test
    void requiredClientCertificatesRefuseAClientWithoutOneAtTheHandshake() throws Exception {
        InetSocketAddress server = server(serverTls(ClientAuthMode.REQUIRE));
        Peer anonymous = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())));

        await().atMost(Duration.ofSeconds(10)).until(() -> !anonymous.channel.isActive());
        assertThat(anonymous.greetings).isEmpty();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tlsLog.messages(Level.WARN)).hasSize(2));
        assertThat(serverLines()).singleElement().asString().contains("TLS handshake refused")
                .containsIgnoringCase("certificate");
        assertThat(clientLines()).singleElement().asString().contains("TLS refused by the server")
                .contains("requires a client certificate it trusts");

        Peer certified = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())
                .clientCertificate(clientCertificate.certificateChain(), clientCertificate.privateKey())));
        certified.awaitGreeting();
        X509Certificate presented = (X509Certificate) certified.channel.pipeline().get(SslHandler.class).engine()
                .getSession().getLocalCertificates()[0];
        assertThat(presented.getSubjectX500Principal().getName()).isEqualTo("CN=w1");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(serverPeerCertificates).containsExactly("CN=w1"));
        certified.channel.close().sync();
        assertThat(tlsLog.messages(Level.WARN)).hasSize(2);
    }

    @Test
    void aClientCertificateOfAnotherCaIsNeverAnIdentity() throws Exception {
        // A JDK client offers only a certificate of a CA the server names as trusted: the
        // stranger's is never sent. Required: refused at the handshake.
        InetSocketAddress required = server(serverTls(ClientAuthMode.REQUIRE));
        Peer refused = connect(required, strangerTls());
        await().atMost(Duration.ofSeconds(10)).until(() -> !refused.channel.isActive());
        assertThat(refused.greetings).isEmpty();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(serverLines()).hasSize(1));
        assertThat(serverLines().get(0)).contains("TLS handshake refused");

        // Optional: it connects as a client without a certificate.
        InetSocketAddress optional = server(serverTls(ClientAuthMode.OPTIONAL));
        Peer anonymous = connect(optional, strangerTls());
        anonymous.awaitGreeting();
        assertThat(serverPeerCertificates).as("what the server saw of each client").containsExactly("none");
        anonymous.channel.close().sync();
    }

    private static TlsContext strangerTls() {
        return clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())
                .clientCertificate(strangerCertificate.certificateChain(), strangerCertificate.privateKey()));
    }

    @Test
    void theClientRefusesAServerWhoseCertificateDoesNotNameTheHostItDialsUnlessVerificationIsOff() throws Exception {
        InetSocketAddress server = server(TlsContext.forServer(ServerTlsOptions.builder(
                elsewhereCertificate.certificateChain(), elsewhereCertificate.privateKey()).build(), HANDSHAKE_TIMEOUT));
        Peer verifying = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())));

        await().atMost(Duration.ofSeconds(10)).until(() -> !verifying.channel.isActive());
        assertThat(verifying.greetings).isEmpty();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(clientLines()).hasSize(1));
        assertThat(clientLines().get(0)).contains("TLS failed").contains("127.0.0.1");

        Peer trusting = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())
                .verifyHostname(false)));
        trusting.awaitGreeting();
        trusting.channel.close().sync();
        assertThat(clientLines()).hasSize(1);
    }

    @Test
    void aClientThatTrustsAnotherCaRefusesTheServer() throws Exception {
        InetSocketAddress server = server(serverTls(ClientAuthMode.NONE));
        Path otherCa = certificateDir.resolve("other").resolve("other-ca.pem");
        Peer client = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(otherCa)));

        await().atMost(Duration.ofSeconds(10)).until(() -> !client.channel.isActive());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tlsLog.messages(Level.WARN)).hasSize(2));
        assertThat(clientLines().get(0)).contains("TLS failed").contains("PKIX path");
        assertThat(serverLines().get(0)).contains("TLS handshake refused by the client")
                .contains("does not trust this server's certificate");
    }

    @Test
    void aServerThatClosesAConnectionDuringItsHandshakeLogsNoWarning() throws Exception {
        InetSocketAddress server = server(serverTls(ClientAuthMode.NONE));
        Peer waiting = connect(server, null);
        await().atMost(Duration.ofSeconds(10)).until(() -> serverChildren.size() == 1);

        serverChildren.get(0).close().sync(); // as a master that stops closes its connections
        await().atMost(Duration.ofSeconds(10)).until(() -> !waiting.channel.isActive());
        assertServesATlsClient(server);
        assertThat(tlsLog.messages(Level.WARN)).isEmpty();
    }

    private List<String> serverLines() {
        return tlsLog.messages(Level.WARN).stream().filter(l -> !l.startsWith("closing connection to ")).toList();
    }

    private List<String> clientLines() {
        return tlsLog.messages(Level.WARN).stream().filter(l -> l.startsWith("closing connection to ")).toList();
    }

    private void assertServesATlsClient(InetSocketAddress server) throws Exception {
        Peer client = connect(server, clientTls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())));
        client.awaitGreeting();
        client.channel.writeAndFlush(SampleMessages.heartbeat(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> client.acks.size() == 1);
        client.channel.close().sync();
    }

    private static TlsContext serverTls(ClientAuthMode clientAuth) {
        ServerTlsOptions.Builder options = ServerTlsOptions.builder(serverCertificate.certificateChain(),
                serverCertificate.privateKey()).clientAuth(clientAuth);
        if (clientAuth != ClientAuthMode.NONE) {
            options.trustedCertificates(ca.caCertificate());
        }
        return TlsContext.forServer(options.build(), HANDSHAKE_TIMEOUT);
    }

    private static TlsContext clientTls(ClientTlsOptions.Builder options) {
        return TlsContext.forClient(options.build(), HANDSHAKE_TIMEOUT);
    }

    /** Starts a server that greets each connection and answers heartbeats; TLS when {@code tls} is not null. */
    private InetSocketAddress server(TlsContext tls) throws InterruptedException {
        Channel channel = new ServerBootstrap().group(boss, io).channel(NioServerSocketChannel.class)
                .childHandler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), tls,
                        () -> new GreetingResponder(serverChildren, serverPeerCertificates)))
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        servers.add(channel);
        return (InetSocketAddress) channel.localAddress();
    }

    /** Connects a client; TLS (bound to the server) when {@code tls} is not null. */
    private Peer connect(InetSocketAddress server, TlsContext tls) throws InterruptedException {
        Peer peer = new Peer();
        peer.channel = new Bootstrap().group(io).channel(NioSocketChannel.class)
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), tls == null ? null : tls.forPeer(server),
                        () -> peer.handler))
                .connect(server).sync().channel();
        return peer;
    }

    /**
     * Writes {@code bytes} on a plain socket, reads until the server closes it, and returns how
     * many bytes came; fails if it is not closed within 10 s.
     */
    private static int rawClientSending(InetSocketAddress server, byte[] bytes) throws Exception {
        try (Socket socket = new Socket(server.getAddress(), server.getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write(bytes);
            out.flush();
            int received = 0;
            try {
                while (in.read() != -1) {
                    received++;
                }
            } catch (SocketException reset) {
                // closed with a reset: closed all the same
            }
            return received;
        }
    }

    /** A client: what it received. */
    private static final class Peer {
        final List<Challenge> greetings = new CopyOnWriteArrayList<>();
        final List<HeartbeatAck> acks = new CopyOnWriteArrayList<>();
        Channel channel;
        final SimpleChannelInboundHandler<Object> handler = new SimpleChannelInboundHandler<>() {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof Challenge c) {
                    greetings.add(c);
                } else if (msg instanceof HeartbeatAck ack) {
                    acks.add(ack);
                }
            }
        };

        void awaitGreeting() {
            await().atMost(Duration.ofSeconds(10)).until(() -> !greetings.isEmpty());
        }
    }

    /** Server side: greets each new connection first, as the master sends its challenge, and answers heartbeats. */
    private static final class GreetingResponder extends SimpleChannelInboundHandler<Heartbeat> {
        private final List<Channel> channels;
        private final List<String> peerCertificates;

        GreetingResponder(List<Channel> channels, List<String> peerCertificates) {
            this.channels = channels;
            this.peerCertificates = peerCertificates;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channels.add(ctx.channel());
            ctx.writeAndFlush(Challenge.newBuilder().setProtocolMajor(FrameFormat.VERSION)
                    .setServerNonce(HandshakeProof.newNonce()).setMasterId("tls-test").build());
            SslHandler ssl = ctx.pipeline().get(SslHandler.class);
            if (ssl != null) {
                ssl.handshakeFuture().addListener(done -> {
                    if (done.isSuccess()) {
                        peerCertificates.add(peerOf(ssl));
                    }
                });
            }
            ctx.fireChannelActive();
        }

        private static String peerOf(SslHandler ssl) {
            try {
                return ((X509Certificate) ssl.engine().getSession().getPeerCertificates()[0])
                        .getSubjectX500Principal().getName();
            } catch (SSLPeerUnverifiedException none) {
                return "none";
            }
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Heartbeat hb) {
            ctx.writeAndFlush(HeartbeatAck.newBuilder().setSequence(hb.getSequence()).build());
        }
    }
}
