package io.rlscheduler.protocol;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.MessageLite;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MessageTypeTest {

    @Test
    void fromCodeReturnsEveryTypeByItsCode() {
        for (MessageType type : MessageType.values()) {
            assertThat(MessageType.fromCode(type.getCode())).isSameAs(type);
        }
    }

    @Test
    void codesAreUniqueAndFitTheTypeByte() {
        Set<Integer> codes = Arrays.stream(MessageType.values()).map(MessageType::getCode).collect(Collectors.toSet());
        assertThat(codes).hasSize(MessageType.values().length).allSatisfy(c -> assertThat(c).isBetween(1, 255));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 15, 200, 255, 256, -1})
    void fromCodeThrowsTypedErrorOnUnknownCode(int code) {
        assertThatThrownBy(() -> MessageType.fromCode(code))
                .isInstanceOf(ProtocolException.class)
                .satisfies(e -> assertThat(((ProtocolException) e).getViolation())
                        .isEqualTo(ProtocolViolation.UNKNOWN_MESSAGE_TYPE))
                .hasMessageContaining(String.valueOf(code));
    }

    @Test
    void forMessageMapsEachMessageClassToItsType() {
        SampleMessages.all().forEach((type, message) -> assertThat(MessageType.forMessage(message)).isSameAs(type));
    }

    @Test
    void forMessageRejectsNestedMessagesThatHaveNoFrameType() {
        MessageLite nested = LogChunk.newBuilder().setFirstSequence(1).build();
        assertThatThrownBy(() -> MessageType.forMessage(nested))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("LogChunk");
    }

    @Test
    void everyMessageOfTheProtoFileIsEitherFramedOrNested() {
        Set<String> framed = Arrays.stream(MessageType.values())
                .map(t -> t.getMessageClass().getSimpleName()).collect(Collectors.toSet());
        Set<String> nested = Set.of("GpuStatus", "ResourceUsage", "RunningTask", "TaskRef", "ResourceRequest", "CheckpointPolicy", "LogChunk");
        Set<String> declared = SchedulerProtocol.getDescriptor().getMessageTypes().stream()
                .map(Descriptor::getName).collect(Collectors.toSet());
        assertThat(declared).containsExactlyInAnyOrderElementsOf(
                java.util.stream.Stream.concat(framed.stream(), nested.stream()).collect(Collectors.toSet()));
    }
}
