/**
 * The rl-scheduler wire protocol: the protobuf messages generated from {@code proto/}, their type
 * codes ({@link io.rlscheduler.protocol.MessageType}), the 10-byte frame
 * ({@link io.rlscheduler.protocol.FrameFormat}, which also holds the protocol versions this build
 * speaks) and its Netty codec, the handshake proof, and TLS.
 *
 * <ul>
 *   <li>The pipeline: {@link io.rlscheduler.protocol.ProtocolChannelInitializer} sets it up with
 *       {@link io.rlscheduler.protocol.FrameDecoder} (every header field checked as its bytes
 *       arrive, then decoded into an immutable message), the shared
 *       {@link io.rlscheduler.protocol.FrameEncoder}, and last the
 *       {@link io.rlscheduler.protocol.ProtocolErrorHandler}, which closes a connection on any
 *       failure; settings in {@link io.rlscheduler.protocol.ProtocolOptions}, the socket
 *       transport in {@link io.rlscheduler.protocol.NettyTransport}.</li>
 *   <li>TLS on the same pipeline: {@link io.rlscheduler.protocol.ServerTlsOptions} and
 *       {@link io.rlscheduler.protocol.ClientTlsOptions} (PEM files read and checked at build;
 *       {@link io.rlscheduler.protocol.ClientAuthMode} for client certificates; a file that cannot
 *       be used is a {@link io.rlscheduler.protocol.TlsConfigException}), made into one
 *       {@link io.rlscheduler.protocol.TlsContext} at start, which gives each channel its
 *       {@code SslHandler} (the JDK's provider).</li>
 *   <li>Refused input: {@link io.rlscheduler.protocol.ProtocolException} carrying a
 *       {@link io.rlscheduler.protocol.ProtocolViolation}.</li>
 *   <li>The handshake: {@link io.rlscheduler.protocol.HandshakeProof} proves knowledge of the
 *       shared secret without sending it; {@link io.rlscheduler.protocol.WorkerKeyProof} signs
 *       and checks a hello made with a worker's own key ({@link io.rlscheduler.protocol.WorkerKey})
 *       instead.</li>
 *   <li>Log lines: {@link io.rlscheduler.protocol.LogChunks} (runs of lines as one block of
 *       bytes in a {@code LogBatch}) and {@link io.rlscheduler.protocol.LineBytes} (the byte scans
 *       the worker and the master share).</li>
 * </ul>
 *
 * <p>The application handler in a pipeline receives and writes immutable messages only. What may
 * change between releases without breaking a peer, and what needs a new major version, is in
 * docs/protocol.md (versions and compatibility).
 */
package io.rlscheduler.protocol;
