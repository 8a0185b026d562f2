package io.rlscheduler.protocol;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.net.InetSocketAddress;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Objects;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS for protocol pipelines: one Netty {@link SslContext} on the JDK's own provider, built once
 * from {@link ServerTlsOptions} or {@link ClientTlsOptions}, and a new {@link SslHandler} from it for
 * each channel ({@link ProtocolChannelInitializer} puts it first). Building the context costs a few
 * milliseconds and is done at a server's or client's start, never per connection or on an event
 * loop. TLS 1.3 and 1.2 only.
 *
 * <p>A client's context is bound to the server it dials with {@link #forPeer}, which shares the
 * same {@code SslContext}: the host name is sent as SNI and, with host name verification on,
 * checked against the server's certificate.
 *
 * <p>Immutable and thread-safe.
 */
public final class TlsContext {

    private static final Logger log = LoggerFactory.getLogger(TlsContext.class);
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final SslContext ssl;
    private final boolean server;
    private final long handshakeTimeoutMillis;
    /** The server a client's handlers dial; null for a server, and for a client not yet bound. */
    private final InetSocketAddress peer;

    private TlsContext(SslContext ssl, boolean server, long handshakeTimeoutMillis, InetSocketAddress peer) {
        this.ssl = ssl;
        this.server = server;
        this.handshakeTimeoutMillis = handshakeTimeoutMillis;
        this.peer = peer;
    }

    /**
     * Builds the context of a server port.
     *
     * @param options          the server's certificate, key and client certificate mode; must not be null
     * @param handshakeTimeout how long a client has to finish the TLS handshake; positive
     * @throws TlsConfigException if the JDK refuses the material (CONTEXT_REFUSED)
     */
    public static TlsContext forServer(ServerTlsOptions options, Duration handshakeTimeout) {
        Objects.requireNonNull(options, "options");
        CertifiedKey own = options.certifiedKey();
        warnIfNotValidNow(own);
        SslContextBuilder builder = SslContextBuilder.forServer(own.key(), own.chain())
                .clientAuth(switch (options.getClientAuth()) {
                    case NONE -> ClientAuth.NONE;
                    case OPTIONAL -> ClientAuth.OPTIONAL;
                    case REQUIRE -> ClientAuth.REQUIRE;
                });
        if (!options.trusted().isEmpty()) {
            builder.trustManager(options.trusted());
        }
        return new TlsContext(build(builder, own), true, timeoutMillis(handshakeTimeout), null);
    }

    /**
     * Builds the context of a client; bind it to each server with {@link #forPeer}.
     *
     * @param options          trusted CAs, client certificate, host name verification; must not be null
     * @param handshakeTimeout how long the server has to finish the TLS handshake; positive
     * @throws TlsConfigException if the JDK refuses the material (CONTEXT_REFUSED)
     */
    public static TlsContext forClient(ClientTlsOptions options, Duration handshakeTimeout) {
        Objects.requireNonNull(options, "options");
        SslContextBuilder builder = SslContextBuilder.forClient()
                .endpointIdentificationAlgorithm(options.isVerifyHostname() ? "HTTPS" : null);
        if (!options.trusted().isEmpty()) {
            builder.trustManager(options.trusted());
        }
        CertifiedKey own = options.certifiedKey();
        if (own != null) {
            warnIfNotValidNow(own);
            builder.keyManager(own.key(), own.chain());
        }
        return new TlsContext(build(builder, own), false, timeoutMillis(handshakeTimeout), null);
    }

    /**
     * Returns this client context bound to the server at {@code peer} (its host string, as
     * configured, is the name verified), sharing the same {@code SslContext}.
     *
     * @throws IllegalStateException on a server's context
     */
    public TlsContext forPeer(InetSocketAddress peer) {
        if (server) {
            throw new IllegalStateException("a server's TLS context is not bound to a peer");
        }
        return new TlsContext(ssl, false, handshakeTimeoutMillis, Objects.requireNonNull(peer, "peer"));
    }

    /** Returns whether this is a server's context. */
    public boolean isServer() {
        return server;
    }

    /** Returns how long the TLS handshake may take, in milliseconds. */
    public long getHandshakeTimeoutMillis() {
        return handshakeTimeoutMillis;
    }

    /** Returns a new handler for one channel. */
    SslHandler newHandler(ByteBufAllocator alloc) {
        SslHandler handler;
        if (server) {
            handler = ssl.newHandler(alloc);
        } else if (peer == null) {
            throw new IllegalStateException("a client's TLS context must be bound to its server first: forPeer(address)");
        } else {
            handler = ssl.newHandler(alloc, peer.getHostString(), peer.getPort());
        }
        handler.setHandshakeTimeoutMillis(handshakeTimeoutMillis);
        return handler;
    }

    @Override
    public String toString() {
        return "TlsContext{" + (server ? "server" : "client" + (peer == null ? "" : " of " + peer)) + '}';
    }

    private static SslContext build(SslContextBuilder builder, CertifiedKey own) {
        try {
            return builder.sslProvider(SslProvider.JDK).protocols(PROTOCOLS).build();
        } catch (SSLException | RuntimeException e) {
            throw new TlsConfigException(TlsConfigException.Problem.CONTEXT_REFUSED, own == null ? null : own.chainFile(),
                    "the JDK cannot make a TLS context of " + (own == null ? "the trusted certificates" : own) + ": " + e, e);
        }
    }

    private static long timeoutMillis(Duration timeout) {
        Objects.requireNonNull(timeout, "handshakeTimeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive, was " + timeout);
        }
        return timeout.toMillis();
    }

    /** Warns of an own certificate its peers will refuse; the start goes on (a clock may be wrong). */
    private static void warnIfNotValidNow(CertifiedKey own) {
        X509Certificate certificate = own.chain().get(0);
        try {
            certificate.checkValidity();
        } catch (CertificateExpiredException | CertificateNotYetValidException e) {
            log.warn("the certificate in {} ({}) is valid only from {} to {}: peers refuse it now", own.chainFile(),
                    certificate.getSubjectX500Principal().getName(), certificate.getNotBefore().toInstant(),
                    certificate.getNotAfter().toInstant());
        }
    }
}
