package io.rlscheduler.master;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.rlscheduler.protocol.CancelTask;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.ExecuteTaskAck;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.MessageType;
import io.rlscheduler.protocol.ResourceRequest;
import io.rlscheduler.protocol.ResourceUsage;
import io.rlscheduler.protocol.RunningTask;
import io.rlscheduler.protocol.TaskRef;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Seeded source of the frames a hostile but authenticated worker sends. Three families:
 * <ul>
 *   <li>{@link Effect#KEEPS}: well-formed frames of every type a worker sends, carrying hostile
 *       values (task ids that climb out of a directory or are absolute paths, NUL bytes, numbers
 *       past 2^63, malformed log chunks, log-format markers in log text), and well-formed frames
 *       of the types only a master sends;</li>
 *   <li>{@link Effect#MAY_CLOSE}: a frame with a correct header whose body is mutated bytes, so it
 *       may not parse;</li>
 *   <li>{@link Effect#BREAKS_FRAMING}: a broken header (magic, version, length, type) or a frame
 *       cut short: whatever followed it would be read as part of it.</li>
 * </ul>
 * The same seed gives the same frames. Not thread-safe.
 */
final class WorkerFrameFuzzer {

    /** Heartbeat sequence numbers from here on are the peer's markers; fuzzed heartbeats never use them. */
    static final long MARKER_BASE = 0x3A5E_0000_0000_0000L;
    private static final long MARKER_SPAN = 1L << 40;

    /** What may follow a frame on its connection. */
    enum Effect {
        /** The body parses: the connection serves on, unless the master chooses to close it. */
        KEEPS,
        /** The framing holds but the body may not parse: the master may close the connection. */
        MAY_CLOSE,
        /** The framing is broken: nothing may follow; the sender half-closes after it. */
        BREAKS_FRAMING
    }

    /** The kinds of frame, each with its effect. */
    enum Kind {
        LOG_BATCH(Effect.KEEPS), HEARTBEAT(Effect.KEEPS), EXECUTE_TASK_ACK(Effect.KEEPS), ERROR(Effect.KEEPS),
        HELLO_AGAIN(Effect.KEEPS), MASTER_ONLY_TYPE(Effect.KEEPS),
        BODY_BIT_FLIPS(Effect.MAY_CLOSE), BODY_CUT(Effect.MAY_CLOSE), BODY_RANDOM(Effect.MAY_CLOSE),
        BODY_GARBAGE_TAIL(Effect.MAY_CLOSE), BODY_OF_ANOTHER_TYPE(Effect.MAY_CLOSE), INVALID_UTF8(Effect.MAY_CLOSE),
        BAD_MAGIC(Effect.BREAKS_FRAMING), BAD_VERSION(Effect.BREAKS_FRAMING), LENGTH_LIE(Effect.BREAKS_FRAMING),
        UNKNOWN_TYPE(Effect.BREAKS_FRAMING), CUT_FRAME(Effect.BREAKS_FRAMING);

        final Effect effect;

        Kind(Effect effect) {
            this.effect = effect;
        }
    }

    /** One frame's bytes and what it is. */
    record Frame(Kind kind, byte[] bytes) {
    }

    /** Weights of the kinds that keep the connection: mostly log batches, the frame a worker sends most. */
    private static final Kind[] KEEPING = weighted(Kind.LOG_BATCH, 50, Kind.HEARTBEAT, 20, Kind.EXECUTE_TASK_ACK, 10,
            Kind.ERROR, 8, Kind.HELLO_AGAIN, 6, Kind.MASTER_ONLY_TYPE, 6);
    private static final Kind[] RISKY = Arrays.stream(Kind.values()).filter(k -> k.effect != Effect.KEEPS)
            .toArray(Kind[]::new);
    private static final String LONG_TEXT = "z".repeat(65_536);
    private static final int[] VALID_TYPE_CODES = Arrays.stream(MessageType.values()).mapToInt(MessageType::getCode)
            .toArray();
    private static final int[] UNKNOWN_TYPE_CODES = IntStream.range(0, 256)
            .filter(c -> Arrays.stream(VALID_TYPE_CODES).noneMatch(v -> v == c)).toArray();

    private final Random random;
    private final int maxFrameLength;
    private final String workerId;
    private final String sessionId;
    private final String heldTaskId;
    private final long heldEpoch;
    /** Valid ids: the task the peer holds, and a few it does not. */
    private final List<String> validIds = new ArrayList<>();
    /** The held task and a few others, whose lines the peer sends in order as a worker would, at one epoch each. */
    private final List<String> written = new ArrayList<>();
    /** Per task of {@link #written}: the sequence number of its next line. */
    private final Map<String, Long> nextLine = new HashMap<>();
    /** Ids that must never name a file: traversals, absolute paths, NUL bytes, separators, over-long. */
    private final List<String> hostileIds = new ArrayList<>();
    private final List<String> hostileText;
    /**
     * Set while a message is made for byte mutation: it then names none of the {@link #written}
     * tasks, since a flipped bit in its epoch or acknowledged value would end their writes.
     */
    private boolean forMutation;

    /**
     * @param random         the seeded source of every choice
     * @param maxFrameLength the master's largest accepted frame
     * @param workerId       the peer's worker id, and {@code sessionId} its session: used in some frames
     * @param heldTaskId     a task the peer holds, at {@code heldEpoch}
     * @param escapeRoots    directories that absolute-path task ids point into (checked for escapes)
     */
    WorkerFrameFuzzer(Random random, int maxFrameLength, String workerId, String sessionId, String heldTaskId,
                      long heldEpoch, List<Path> escapeRoots) {
        this.random = random;
        this.maxFrameLength = maxFrameLength;
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.heldTaskId = heldTaskId;
        this.heldEpoch = heldEpoch;
        validIds.add(heldTaskId);
        for (int i = 0; i < 12; i++) {
            validIds.add("fz-" + i);
        }
        validIds.addAll(List.of("escape-cwd", "x".repeat(128), "A.b_c-9", workerId));
        written.addAll(validIds.subList(0, 5));
        written.forEach(id -> nextLine.put(id, 1L));
        hostileIds.addAll(List.of("", ".", "..", "../x", "../../escape", "../logs/../../escape", "./x", "x/y",
                "x/../../escape", "..\\..\\escape", "C:\\escape", "a\0b", "\0", "x\0/../../escape", "-x", "_x",
                ".hidden", "~/escape", "${HOME}", "*", "x\n", " x", "x ", "%2e%2e%2fescape", "\u2024\u2024/escape",
                "caf\u00e9", "\u202Eescape", heldTaskId + "/../escape", heldTaskId + "\0", "x".repeat(129),
                "y".repeat(4096)));
        for (Path root : escapeRoots) {
            hostileIds.add(root.resolve("abs-escape").toString());
            hostileIds.add(root.resolve("..").resolve("abs-escape-up").toString());
        }
        hostileText = List.of("", "plain", "a\0b", "line\nbreak", "%s%n%x", "${jndi:ldap://127.0.0.1/x}",
                "\u0000\u0001\u001b[31m", "\uFFFF\uFFFE", "\uD83D\uDE00", "z".repeat(300));
    }

    /** Returns a frame that keeps the connection (a well-formed frame with a well-formed body). */
    Frame keeping() {
        Kind kind = KEEPING[random.nextInt(KEEPING.length)];
        byte[] bytes = encode(message(kind));
        while (bytes.length > maxFrameLength) { // a rare batch of long lines past the limit: the length lies test it
            bytes = encode(message(kind));
        }
        return new Frame(kind, bytes);
    }

    /** Returns a frame that may end the connection: a mutated body, or a broken header. */
    Frame risky() {
        Kind kind = RISKY[random.nextInt(RISKY.length)];
        return new Frame(kind, riskyBytes(kind));
    }

    /** Returns the frame of {@code message} as a worker's encoder writes it. */
    static byte[] encode(MessageLite message) {
        return frame(MessageType.forMessage(message).getCode(), message.toByteArray());
    }

    private static byte[] frame(int type, byte[] body) {
        return ByteBuffer.allocate(FrameFormat.HEADER_LENGTH + body.length).putInt(FrameFormat.MAGIC)
                .put((byte) FrameFormat.VERSION).putInt(FrameFormat.HEADER_LENGTH + body.length).put((byte) type)
                .put(body).array();
    }

    private MessageLite message(Kind kind) {
        return switch (kind) {
            case LOG_BATCH -> logBatch();
            case HEARTBEAT -> heartbeat();
            case EXECUTE_TASK_ACK -> ExecuteTaskAck.newBuilder().setTaskId(taskId()).setEpoch(epoch())
                    .setAccepted(random.nextBoolean()).setErrorCodeValue(enumValue()).setMessage(text()).build();
            case ERROR -> ErrorReply.newBuilder().setCodeValue(enumValue()).setMessage(text())
                    .setOffendingType(random.nextInt(300)).setTaskId(taskId()).setEpoch(epoch())
                    .setRetryable(random.nextBoolean()).build();
            case HELLO_AGAIN -> Hello.newBuilder().setProtocolMajor(random.nextInt(3)).setProtocolMinor(random.nextInt(5))
                    .setWorkerId(random.nextBoolean() ? workerId : taskId())
                    .setSessionId(random.nextBoolean() ? sessionId : text())
                    .putLabels(text(), text()).addCapabilities(text()).setClientNonce(randomBytes(random.nextInt(64)))
                    .setProof(randomBytes(random.nextInt(64))).setSoftwareVersion(text()).build();
            case MASTER_ONLY_TYPE -> masterOnly();
            default -> throw new AssertionError(kind);
        };
    }

    /**
     * Half the batches are a worker's own: lines that follow on from the last batch of one of the
     * {@link #written} tasks at its epoch, sometimes sent again or beyond a gap, with text that
     * may hold log-format markers. The others are hostile in every field.
     */
    private LogBatch logBatch() {
        if (random.nextBoolean() && !forMutation) {
            String taskId = written.get(random.nextInt(written.size()));
            long next = nextLine.get(taskId);
            long first = switch (random.nextInt(8)) {
                case 0 -> Math.max(1, next - 1 - random.nextInt(5)); // a resend of lines already written
                case 1 -> next + 1 + random.nextInt(5);              // beyond a gap
                default -> next;
            };
            LogBatch.Builder batch = LogBatch.newBuilder().setTaskId(taskId).setEpoch(epochOf(taskId));
            long sequence = first;
            for (int i = 1 + random.nextInt(4); i > 0; i--) {
                ByteString text = lines();
                batch.addChunks(LogChunk.newBuilder().setFirstSequence(sequence).setStreamValue(1 + random.nextInt(2))
                        .setTimestampUnixMs(1_700_000_000_000L + sequence).setText(text));
                sequence += lineFeeds(text);
            }
            if (first <= next) {
                nextLine.put(taskId, Math.max(next, sequence));
            }
            return batch.build();
        }
        String taskId = taskId();
        long epoch = epoch();
        long acknowledged = number(3);
        if (written.contains(taskId)) {
            // A newer attempt would leave the worker's own batches stale for good, and lines
            // acknowledged ahead of them would make the master skip them.
            epoch = epoch > epochOf(taskId) ? epochOf(taskId) - 1 : epoch;
            acknowledged = acknowledged >= nextLine.get(taskId) ? 0 : acknowledged;
        }
        LogBatch.Builder batch = LogBatch.newBuilder().setTaskId(taskId).setEpoch(epoch).setAcknowledged(acknowledged);
        int chunks = random.nextInt(50) == 0 ? 100 + random.nextInt(100) : random.nextInt(5);
        long sequence = 1 + random.nextInt(40);
        for (int i = 0; i < chunks; i++) {
            ByteString text = logText();
            // Mostly consecutive chunks, as a worker sends them; sometimes any number at all.
            long first = random.nextInt(4) == 0 ? number(sequence) : sequence;
            batch.addChunks(LogChunk.newBuilder().setFirstSequence(first).setStreamValue(enumValue())
                    .setTimestampUnixMs(number(1_700_000_000_000L)).setText(text));
            sequence = first + Math.max(1, lineFeeds(text));
        }
        return batch.build();
    }

    private long epochOf(String writtenTask) {
        return writtenTask.equals(heldTaskId) ? heldEpoch : 1;
    }

    private Heartbeat heartbeat() {
        ResourceUsage.Builder usage = ResourceUsage.newBuilder().setCpuCount(random.nextInt()).setCpuSlots(random.nextInt())
                .setCpuLoad(pick(Double.NaN, Double.POSITIVE_INFINITY, -1.0, 1e308, random.nextDouble() * 64))
                .setMemoryTotalBytes(number(1L << 40)).setMemoryUsedBytes(number(1L << 40));
        for (int i = random.nextInt(4); i > 0; i--) {
            usage.addGpus(GpuStatus.newBuilder().setIndex(random.nextInt()).setUuid(text()).setName(text())
                    .setMemoryTotalBytes(number(80L << 30)).setMemoryUsedBytes(number(80L << 30))
                    .setUtilizationPercent(random.nextInt()));
        }
        Heartbeat.Builder hb = Heartbeat.newBuilder().setWorkerId(random.nextBoolean() ? workerId : taskId())
                .setSessionId(random.nextBoolean() ? sessionId : text()).setSequence(notAMarker(number(7)))
                .setSentAtUnixMs(number(1_700_000_000_000L)).setResources(usage);
        for (int i = random.nextInt(4); i > 0; i--) {
            hb.addRunningTasks(RunningTask.newBuilder().setTaskId(taskId()).setEpoch(epoch()).setAttempt(random.nextInt())
                    .setLastLogSequence(number(10)));
        }
        return hb.build();
    }

    private MessageLite masterOnly() {
        return switch (random.nextInt(7)) {
            case 0 -> Challenge.newBuilder().setProtocolMajor(1).setServerNonce(randomBytes(32)).setMasterId(text()).build();
            case 1 -> HelloAccepted.newBuilder().setMasterId(text()).setProof(randomBytes(32)).build();
            case 2 -> HelloRejected.newBuilder().setReasonValue(enumValue()).setMessage(text()).build();
            case 3 -> HeartbeatAck.newBuilder().setSequence(number(1))
                    .addRevokedTasks(TaskRef.newBuilder().setTaskId(taskId()).setEpoch(epoch())).build();
            case 4 -> ExecuteTask.newBuilder().setTaskId(taskId()).setEpoch(epoch()).setScript(taskId())
                    .addArguments(text()).setParametersJson(text()).putEnvironment(text(), text())
                    .setResources(ResourceRequest.newBuilder().setGpus(random.nextInt()).addGpuIds(random.nextInt()))
                    .build();
            case 5 -> LogAck.newBuilder().setTaskId(taskId()).setEpoch(epoch()).setAckedSequence(number(3)).build();
            default -> CancelTask.newBuilder().setTaskId(taskId()).setEpoch(epoch()).setReasonValue(enumValue()).build();
        };
    }

    private byte[] riskyBytes(Kind kind) {
        Kind inner = KEEPING[random.nextInt(KEEPING.length)];
        forMutation = true;
        MessageLite message = message(inner == Kind.MASTER_ONLY_TYPE ? Kind.LOG_BATCH : inner);
        forMutation = false;
        int type = MessageType.forMessage(message).getCode();
        byte[] body = message.toByteArray();
        switch (kind) {
            case BODY_BIT_FLIPS -> {
                body = body.length == 0 ? randomBytes(1).toByteArray() : body;
                for (int f = 1 + random.nextInt(8); f > 0; f--) {
                    int bit = random.nextInt(body.length * 8);
                    body[bit / 8] ^= (byte) (1 << (bit % 8));
                }
                return frame(type, body);
            }
            case BODY_CUT -> {
                return frame(type, Arrays.copyOf(body, body.length == 0 ? 0 : random.nextInt(body.length)));
            }
            case BODY_RANDOM -> {
                return frame(type, randomBytes(random.nextInt(200)).toByteArray());
            }
            case BODY_GARBAGE_TAIL -> {
                byte[] tail = randomBytes(1 + random.nextInt(32)).toByteArray();
                byte[] longer = Arrays.copyOf(body, body.length + tail.length);
                System.arraycopy(tail, 0, longer, body.length, tail.length);
                return frame(type, longer);
            }
            case BODY_OF_ANOTHER_TYPE -> {
                return frame(VALID_TYPE_CODES[random.nextInt(VALID_TYPE_CODES.length)], body);
            }
            case INVALID_UTF8 -> {
                // Field 1 (a LogBatch's task id, a Heartbeat's worker id) as bytes that are not
                // UTF-8; a builder refuses to hold them, so they are written by hand, the rest of
                // the message after them.
                byte[] bad = {0x0A, 7, 'x', (byte) 0xC3, '(', (byte) 0xFF, '/', '.', '.'};
                boolean batch = random.nextBoolean();
                byte[] rest = (batch ? LogBatch.newBuilder().setEpoch(heldEpoch).build()
                        : Heartbeat.newBuilder().setSessionId(sessionId).setSequence(1).build()).toByteArray();
                byte[] invalid = Arrays.copyOf(bad, bad.length + rest.length);
                System.arraycopy(rest, 0, invalid, bad.length, rest.length);
                return frame((batch ? MessageType.LOG_BATCH : MessageType.HEARTBEAT).getCode(), invalid);
            }
            default -> {
                return brokenFraming(kind, frame(type, body));
            }
        }
    }

    private byte[] brokenFraming(Kind kind, byte[] frame) {
        ByteBuffer header = ByteBuffer.wrap(frame);
        switch (kind) {
            case BAD_MAGIC -> frame[random.nextInt(4)] ^= (byte) (1 + random.nextInt(255));
            case BAD_VERSION -> frame[FrameFormat.VERSION_OFFSET] = (byte) pick(0, 2, 3, 127, 255);
            case LENGTH_LIE -> {
                long[] lies = {0, 1, FrameFormat.HEADER_LENGTH - 1, FrameFormat.HEADER_LENGTH, frame.length - 1L,
                        frame.length + 1L, frame.length + 1000L, maxFrameLength, maxFrameLength + 1L, 0x7FFF_FFFFL,
                        0xFFFF_FFFFL, random.nextInt() & 0xFFFF_FFFFL};
                long lie = lies[random.nextInt(lies.length)];
                header.putInt(FrameFormat.LENGTH_OFFSET, (int) (lie == frame.length ? lie + 1 : lie));
            }
            case UNKNOWN_TYPE ->
                    frame[FrameFormat.TYPE_OFFSET] = (byte) UNKNOWN_TYPE_CODES[random.nextInt(UNKNOWN_TYPE_CODES.length)];
            case CUT_FRAME -> {
                return Arrays.copyOf(frame, 1 + random.nextInt(frame.length - 1));
            }
            default -> throw new AssertionError(kind);
        }
        return frame;
    }

    // ---- hostile values ------------------------------------------------------------------------

    private String taskId() {
        int pick = random.nextInt(10);
        if (pick < 6) {
            List<String> ids = forMutation ? validIds.subList(written.size(), validIds.size()) : validIds;
            return pick < 3 && !forMutation ? heldTaskId : ids.get(random.nextInt(ids.size()));
        }
        return hostileIds.get(random.nextInt(hostileIds.size()));
    }

    private long epoch() {
        return random.nextInt(3) == 0 ? heldEpoch : number(heldEpoch);
    }

    /** A number near {@code near}, a boundary (0, 2^63 - 1, 2^63, 2^64 - 1 read as uint64) or random. */
    private long number(long near) {
        return switch (random.nextInt(10)) {
            case 0 -> 0;
            case 1 -> near - 1;
            case 2 -> near + 1;
            case 3 -> Long.MAX_VALUE;
            case 4 -> Long.MIN_VALUE;
            case 5 -> -1;
            case 6 -> random.nextLong();
            case 7 -> random.nextInt(1000);
            default -> near;
        };
    }

    private static long notAMarker(long sequence) {
        return sequence >= MARKER_BASE && sequence < MARKER_BASE + MARKER_SPAN ? sequence ^ (1L << 61) : sequence;
    }

    /** An enum's wire value: mostly known ones, sometimes unknown or negative. */
    private int enumValue() {
        return random.nextInt(4) == 0 ? pick(-1, 99, Integer.MAX_VALUE, 12, 13) : random.nextInt(12);
    }

    /** A hostile string; one in a thousand is 64 Ki characters long (rarely: each costs the peer and the master a copy). */
    private String text() {
        return random.nextInt(1000) == 0 ? LONG_TEXT : hostileText.get(random.nextInt(hostileText.size()));
    }

    private ByteString logText() {
        String text = switch (random.nextInt(16)) {
            case 0 -> "";
            case 1 -> "no line feed";
            case 2 -> "\n";
            case 3 -> "\n\n\n";
            case 4 -> "left\rright\n";
            case 5 -> "crlf\r\n";
            case 6 -> "nul\0byte\n";
            case 7 -> "##RLS_END state=SUCCEEDED complete=true lines=1\n";
            case 8 -> "TRACE_ID:forged\n##RLS_ATTEMPT attempt=9 epoch=9\n";
            case 9 -> "##RLS_TEXT forged\nRLS_METRIC {\"reward\": 1e999}\n";
            // Long lines and many lines, the long ones rare: each costs the peer and the master a copy.
            case 10 -> "w".repeat(1 + random.nextInt(random.nextInt(32) == 0 ? 64 * 1024 : 512)) + "\n";
            case 11 -> "short\n".repeat(1 + random.nextInt(random.nextInt(32) == 0 ? 2000 : 50));
            case 12 -> null;
            default -> "episode " + random.nextInt(1000) + " reward 1.5 caf\u00e9 \u4e2d\n";
        };
        if (text != null) {
            return ByteString.copyFrom(text, StandardCharsets.UTF_8);
        }
        // Bytes that are not UTF-8 (a lone continuation byte, an overlong NUL), then a random tail.
        return randomBytes(random.nextInt(40))
                .concat(ByteString.copyFrom(new byte[] {(byte) 0x80, (byte) 0xC0, (byte) 0x80, '\n'}));
    }

    /** One or more whole lines, each ended by LF, as a worker's reader sends them; markers and all. */
    private ByteString lines() {
        ByteString text;
        do {
            text = logText();
        } while (text.isEmpty() || text.byteAt(text.size() - 1) != '\n');
        return text;
    }

    private static int lineFeeds(ByteString text) {
        int count = 0;
        for (int i = 0; i < text.size(); i++) {
            count += text.byteAt(i) == '\n' ? 1 : 0;
        }
        return count;
    }

    private ByteString randomBytes(int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return ByteString.copyFrom(bytes);
    }

    private int pick(int... values) {
        return values[random.nextInt(values.length)];
    }

    private double pick(double... values) {
        return values[random.nextInt(values.length)];
    }

    private static Kind[] weighted(Object... kindsAndWeights) {
        List<Kind> table = new ArrayList<>();
        for (int i = 0; i < kindsAndWeights.length; i += 2) {
            for (int w = 0; w < (Integer) kindsAndWeights[i + 1]; w++) {
                table.add((Kind) kindsAndWeights[i]);
            }
        }
        return table.toArray(Kind[]::new);
    }
}
