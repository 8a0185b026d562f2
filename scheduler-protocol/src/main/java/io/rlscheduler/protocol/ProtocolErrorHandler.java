package io.rlscheduler.protocol;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import java.io.IOException;
import java.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Last handler of every protocol pipeline: whatever goes wrong on a connection closes that
 * connection, and only it, with one log line naming the peer and the reason.
 *
 * <ul>
 *   <li>A {@link ProtocolException} is logged at WARN with its {@link ProtocolViolation}. When the
 *       violation {@linkplain ProtocolViolation#isRepliedToPeer() is replied}, an
 *       {@link ErrorReply} is flushed first and the channel closes once it is written.</li>
 *   <li>An {@link IOException} (reset by peer, broken pipe) is logged at INFO: it is the network,
 *       not a bug.</li>
 *   <li>Anything else escaped an application handler: logged at ERROR with its stack trace.</li>
 * </ul>
 * Failures after the first are logged at DEBUG only: a closing connection often reports several.
 *
 * <p>Stateful: create one instance per channel.
 */
public final class ProtocolErrorHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(ProtocolErrorHandler.class);

    private boolean reported;
    private SocketAddress peer;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        peer = ctx.channel().remoteAddress();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        peer = ctx.channel().remoteAddress();
        ctx.fireChannelActive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A closed channel no longer knows its remote address; name the peer we saw when it was open.
        SocketAddress current = ctx.channel().remoteAddress();
        SocketAddress peer = current != null ? current : this.peer;
        if (reported) {
            log.debug("further error on connection {} after it was closed: {}", peer, cause.toString());
            return;
        }
        reported = true;
        if (cause instanceof ProtocolException pe) {
            ProtocolViolation violation = pe.getViolation();
            log.warn("closing connection {}: protocol violation {}: {}", peer, violation, pe.getMessage());
            if (violation.isRepliedToPeer() && ctx.channel().isActive()) {
                ErrorReply reply = ErrorReply.newBuilder()
                        .setCode(violation.getErrorCode())
                        .setMessage(violation + ": " + pe.getMessage())
                        .setRetryable(false)
                        .build();
                ctx.writeAndFlush(reply).addListener(ChannelFutureListener.CLOSE);
                return;
            }
        } else if (cause instanceof IOException) {
            log.info("closing connection {}: I/O error: {}", peer, cause.toString());
        } else {
            log.error("closing connection {}: unexpected error in its pipeline", peer, cause);
        }
        ctx.close();
    }
}
