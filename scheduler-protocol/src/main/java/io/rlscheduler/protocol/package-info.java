/**
 * The rl-scheduler wire protocol: the protobuf messages generated from {@code proto/}, their type
 * codes ({@link io.rlscheduler.protocol.MessageType}), the 10-byte frame
 * ({@link io.rlscheduler.protocol.FrameFormat}, which also holds the protocol versions this build
 * speaks) and its Netty codec, and the handshake proof.
 *
 * <p>A pipeline is set up by {@link io.rlscheduler.protocol.ProtocolChannelInitializer}; the
 * application handler in it receives and writes immutable messages only. What may change between
 * releases without breaking a peer, and what needs a new major version, is in docs/protocol.md
 * (versions and compatibility).
 */
package io.rlscheduler.protocol;
