package io.rlscheduler.protocol;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.util.HashMap;
import java.util.Map;

/**
 * The message types of protocol version 1 with their wire codes (the frame's type byte).
 * Codes are part of the protocol: they are never changed or reused.
 *
 * <pre>
 *  code  type               direction
 *  ----  -----------------  ----------------
 *     1  CHALLENGE          master -&gt; worker
 *     2  HELLO              worker -&gt; master
 *     3  HELLO_ACCEPTED     master -&gt; worker
 *     4  HELLO_REJECTED     master -&gt; worker
 *     5  HEARTBEAT          worker -&gt; master
 *     6  HEARTBEAT_ACK      master -&gt; worker
 *     7  EXECUTE_TASK       master -&gt; worker
 *     8  EXECUTE_TASK_ACK   worker -&gt; master
 *     9  LOG_BATCH          worker -&gt; master
 *    10  LOG_ACK            master -&gt; worker
 *    11  (reserved, not assigned)
 *    12  (reserved, not assigned)
 *    13  CANCEL_TASK        master -&gt; worker
 *    14  ERROR              either
 * </pre>
 */
public enum MessageType {

    CHALLENGE(1, Challenge.class, Challenge.parser()),
    HELLO(2, Hello.class, Hello.parser()),
    HELLO_ACCEPTED(3, HelloAccepted.class, HelloAccepted.parser()),
    HELLO_REJECTED(4, HelloRejected.class, HelloRejected.parser()),
    HEARTBEAT(5, Heartbeat.class, Heartbeat.parser()),
    HEARTBEAT_ACK(6, HeartbeatAck.class, HeartbeatAck.parser()),
    EXECUTE_TASK(7, ExecuteTask.class, ExecuteTask.parser()),
    EXECUTE_TASK_ACK(8, ExecuteTaskAck.class, ExecuteTaskAck.parser()),
    LOG_BATCH(9, LogBatch.class, LogBatch.parser()),
    LOG_ACK(10, LogAck.class, LogAck.parser()),
    CANCEL_TASK(13, CancelTask.class, CancelTask.parser()),
    ERROR(14, ErrorReply.class, ErrorReply.parser());

    private static final MessageType[] BY_CODE = new MessageType[256];
    private static final Map<Class<?>, MessageType> BY_CLASS = new HashMap<>();

    static {
        for (MessageType type : values()) {
            if (BY_CODE[type.code] != null) {
                throw new ExceptionInInitializerError("duplicate message type code " + type.code);
            }
            BY_CODE[type.code] = type;
            BY_CLASS.put(type.messageClass, type);
        }
    }

    private final int code;
    private final Class<? extends MessageLite> messageClass;
    private final Parser<? extends MessageLite> parser;

    MessageType(int code, Class<? extends MessageLite> messageClass, Parser<? extends MessageLite> parser) {
        this.code = code;
        this.messageClass = messageClass;
        this.parser = parser;
    }

    /** Returns the wire code of this type, 1 to 255. */
    public int getCode() {
        return code;
    }

    /** Returns the protobuf message class carried by frames of this type. */
    public Class<? extends MessageLite> getMessageClass() {
        return messageClass;
    }

    /** Returns the parser of this type's body. */
    public Parser<? extends MessageLite> getParser() {
        return parser;
    }

    /**
     * Returns the type with the given wire code.
     *
     * @param code the frame's type byte, read as unsigned
     * @return the type; never null
     * @throws ProtocolException with {@link ProtocolViolation#UNKNOWN_MESSAGE_TYPE} if no type has
     *                           this code
     */
    public static MessageType fromCode(int code) {
        MessageType type = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
        if (type == null) {
            throw new ProtocolException(ProtocolViolation.UNKNOWN_MESSAGE_TYPE, "unknown message type code " + code);
        }
        return type;
    }

    /**
     * Returns the type of a message.
     *
     * @param message a message generated from {@code proto/}; must not be null
     * @return its type; never null
     * @throws IllegalArgumentException if the message is not one of the protocol's top-level messages
     */
    public static MessageType forMessage(MessageLite message) {
        MessageType type = BY_CLASS.get(message.getClass());
        if (type == null) {
            throw new IllegalArgumentException(
                    message.getClass().getName() + " is not a protocol message; it cannot be sent in a frame");
        }
        return type;
    }
}
