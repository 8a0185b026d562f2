package io.rlscheduler.protocol;

import io.netty.handler.codec.DecoderException;
import java.util.Objects;

/**
 * A peer sent input that breaks the wire protocol. Raised by {@link FrameDecoder}; the
 * connection it arrived on is closed by {@link ProtocolErrorHandler}. Retrying the same bytes never
 * helps, so the exception carries the {@link ProtocolViolation} rather than a retry hint.
 */
public final class ProtocolException extends DecoderException {

    private static final long serialVersionUID = 1L;

    private final ProtocolViolation violation;

    /**
     * Creates an exception for one violation.
     *
     * @param violation what was wrong; must not be null
     * @param message   details for the log line, e.g. the offending value
     */
    public ProtocolException(ProtocolViolation violation, String message) {
        super(message);
        this.violation = Objects.requireNonNull(violation, "violation");
    }

    /**
     * Creates an exception for one violation with its cause.
     *
     * @param violation what was wrong; must not be null
     * @param message   details for the log line
     * @param cause     the underlying parse failure
     */
    public ProtocolException(ProtocolViolation violation, String message, Throwable cause) {
        super(message, cause);
        this.violation = Objects.requireNonNull(violation, "violation");
    }

    /** Returns what was wrong with the input. */
    public ProtocolViolation getViolation() {
        return violation;
    }
}
