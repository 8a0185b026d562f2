package io.rlscheduler.protocol;

/**
 * Constants of the frame every message travels in.
 *
 * <pre>
 *  offset  size  field
 *  ------  ----  -----------------------------------------------------------------
 *       0     4  magic    0x52 0x4C 0x53 0x43 ("RLSC")
 *       4     1  version  protocol major version ({@link #VERSION})
 *       5     4  length   whole frame in bytes, header included (big-endian, unsigned)
 *       9     1  type     message type code ({@link MessageType})
 *      10     n  body     protobuf encoding of the message, n = length - 10
 * </pre>
 *
 * <p>This class is not instantiable; all members are constants.
 */
public final class FrameFormat {

    /** The four magic bytes "RLSC" as a big-endian int. */
    public static final int MAGIC = 0x524C5343;

    /** Protocol major version written in, and required of, every frame header. */
    public static final int VERSION = 1;

    /**
     * Protocol minor version this build speaks, announced in {@link Challenge} and {@link Hello};
     * {@link HelloAccepted} carries the lower of the two peers' minors, and each side then sends
     * only what that minor knows (docs/protocol.md, version rules).
     */
    public static final int MINOR_VERSION = 2;

    /**
     * The oldest minor version a peer may announce: the minor of the first release (1.0), from
     * which every later minor of protocol 1 stays compatible. A master refuses a {@link Hello}
     * below it with {@code REJECT_REASON_UNSUPPORTED_VERSION}.
     */
    public static final int MIN_MINOR_VERSION = 2;

    /** Bytes in the header: magic, version, length and type. */
    public static final int HEADER_LENGTH = 10;

    /** Offset of the version byte. */
    public static final int VERSION_OFFSET = 4;

    /** Offset of the 4-byte length field. */
    public static final int LENGTH_OFFSET = 5;

    /** Offset of the type byte. */
    public static final int TYPE_OFFSET = 9;

    private FrameFormat() {
    }

    /**
     * Returns the magic byte at {@code index} (0 to 3).
     *
     * @param index position within the magic, 0 to 3
     * @return the expected byte at that position
     */
    static byte magicByte(int index) {
        return (byte) (MAGIC >>> (24 - 8 * index));
    }
}
