package io.rlscheduler.protocol;

/**
 * Why a peer's input was refused. Each violation closes the connection it arrived on; the ones
 * where {@link #isRepliedToPeer()} is true first send an {@link ErrorReply} with
 * {@link #getErrorCode()}, because the peer demonstrably speaks our framing and can read it.
 */
public enum ProtocolViolation {

    /** The first four bytes of a frame are not the magic "RLSC". */
    BAD_MAGIC(ErrorCode.ERROR_CODE_MALFORMED_FRAME, false),

    /** The version byte names a major version this build does not speak. */
    UNSUPPORTED_VERSION(ErrorCode.ERROR_CODE_UNSUPPORTED_VERSION, true),

    /** The type byte is not a known message type code. */
    UNKNOWN_MESSAGE_TYPE(ErrorCode.ERROR_CODE_UNKNOWN_MESSAGE_TYPE, true),

    /** The length field exceeds the configured maximum frame length. */
    FRAME_TOO_LARGE(ErrorCode.ERROR_CODE_FRAME_TOO_LARGE, true),

    /** The length field is smaller than the 10-byte header. */
    FRAME_TOO_SMALL(ErrorCode.ERROR_CODE_MALFORMED_FRAME, true),

    /** The connection ended in the middle of a frame. */
    TRUNCATED_FRAME(ErrorCode.ERROR_CODE_MALFORMED_FRAME, false),

    /** The body is not a valid protobuf encoding of the message its type byte names. */
    MALFORMED_BODY(ErrorCode.ERROR_CODE_MALFORMED_FRAME, true);

    private final ErrorCode errorCode;
    private final boolean repliedToPeer;

    ProtocolViolation(ErrorCode errorCode, boolean repliedToPeer) {
        this.errorCode = errorCode;
        this.repliedToPeer = repliedToPeer;
    }

    /** Returns the wire error code sent to the peer for this violation. */
    public ErrorCode getErrorCode() {
        return errorCode;
    }

    /** Returns whether an {@link ErrorReply} is sent before the connection is closed. */
    public boolean isRepliedToPeer() {
        return repliedToPeer;
    }
}
