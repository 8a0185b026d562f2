package io.rlscheduler.protocol;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sits right after the {@link SslHandler}: whatever fails in TLS on a connection (a peer that is not
 * TLS, a handshake that times out or is refused, a fatal alert later) is logged in exactly one line
 * naming the peer and what it means, and the connection is closed. A failed handshake reaches it
 * twice (the handshake event and the exception); the first is reported, the rest logged at DEBUG.
 * A connection closed during the handshake, by the peer (a port probe) or by this end (a stop), is
 * logged at DEBUG only. Known alerts get a hint of their usual cause. Failures that are not TLS's go
 * on to the {@link ProtocolErrorHandler}.
 *
 * <p>Stateful: create one instance per channel.
 */
final class TlsErrorHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(TlsErrorHandler.class);
    /** Netty's message when the peer closed the connection before the handshake ended: nothing was refused. */
    static final String CLOSED_DURING_HANDSHAKE = "Connection closed while SSL/TLS handshake was in progress";
    /** The JDK's message of a fatal alert from the peer, followed by the alert's name. */
    private static final String ALERT = "Received fatal alert: ";

    private final boolean server;
    private final long handshakeTimeoutMillis;
    private boolean reported;
    private SocketAddress peer;

    TlsErrorHandler(boolean server, long handshakeTimeoutMillis) {
        this.server = server;
        this.handshakeTimeoutMillis = handshakeTimeoutMillis;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        peer = ctx.channel().remoteAddress();
        ctx.fireChannelActive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                if (log.isDebugEnabled()) {
                    SSLSession session = ctx.pipeline().get(SslHandler.class).engine().getSession();
                    log.debug("TLS with {}: {} {}", peer, session.getProtocol(), session.getCipherSuite());
                }
            } else {
                report(ctx, done.cause());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable tls = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (tls instanceof SSLException) {
            report(ctx, tls);
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }

    private void report(ChannelHandlerContext ctx, Throwable cause) {
        if (reported) {
            log.debug("further TLS failure on connection {}: {}", peer, cause.toString());
            return;
        }
        reported = true;
        if (cause instanceof ClosedChannelException || CLOSED_DURING_HANDSHAKE.equals(cause.getMessage())) {
            // Closed during the handshake, by the peer (a port probe) or by this end (a stop).
            log.debug("connection {} closed during the TLS handshake", peer);
        } else if (server) {
            log.warn("closing connection {}: {}", peer, serverSide(cause));
        } else {
            log.warn("closing connection to {}: {}", peer, clientSide(cause));
        }
        ctx.close();
    }

    private String serverSide(Throwable cause) {
        if (cause instanceof NotSslRecordException) {
            return "it is not TLS, but this port requires TLS (a client without TLS settings?)";
        }
        if (cause instanceof SslHandshakeTimeoutException) {
            return "no TLS handshake within " + handshakeTimeoutMillis + " ms; this port requires TLS (a client without"
                    + " TLS settings sends nothing and waits for the server's first message)";
        }
        String message = String.valueOf(cause.getMessage());
        if (message.startsWith(ALERT + "certificate_unknown") || message.startsWith(ALERT + "unknown_ca")
                || message.startsWith(ALERT + "bad_certificate")) {
            return "TLS handshake refused by the client: " + message + " (it does not trust this server's certificate,"
                    + " or the certificate does not name the host the client dialled)";
        }
        return "TLS handshake refused: " + message;
    }

    private String clientSide(Throwable cause) {
        if (cause instanceof NotSslRecordException) {
            return "the server answered in plaintext, not TLS: its port does not use TLS, but this client's TLS settings"
                    + " require it";
        }
        if (cause instanceof SslHandshakeTimeoutException) {
            return "the server did not finish the TLS handshake within " + handshakeTimeoutMillis + " ms";
        }
        String message = String.valueOf(cause.getMessage());
        if (message.startsWith(ALERT + "bad_certificate") || message.startsWith(ALERT + "certificate_required")
                || message.startsWith(ALERT + "certificate_unknown") || message.startsWith(ALERT + "unknown_ca")) {
            return "TLS refused by the server: " + message + " (it requires a client certificate it trusts: this"
                    + " client has none, or one of a CA the server does not trust)";
        }
        return "TLS failed: " + message;
    }
}
