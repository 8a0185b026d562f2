package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HandshakeProofTest {

    private static final byte[] SECRET = "a-lab-wide-shared-secret".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OTHER_SECRET = "another-secret-of-the-lab".getBytes(StandardCharsets.UTF_8);

    @Test
    void sameInputsGiveTheSameProofAndItMatches() {
        ByteString server = HandshakeProof.newNonce();
        ByteString client = HandshakeProof.newNonce();
        ByteString a = HandshakeProof.helloProof(SECRET, server, client, "w1", "s1");
        ByteString b = HandshakeProof.helloProof(SECRET, server, client, "w1", "s1");
        assertThat(a.size()).isEqualTo(32);
        assertThat(HandshakeProof.matches(a, b)).isTrue();
    }

    @Test
    void proofDependsOnSecretNonceAndIdentity() {
        ByteString server = HandshakeProof.newNonce();
        ByteString client = HandshakeProof.newNonce();
        ByteString proof = HandshakeProof.helloProof(SECRET, server, client, "w1", "s1");
        assertThat(HandshakeProof.matches(proof, HandshakeProof.helloProof(OTHER_SECRET, server, client, "w1", "s1"))).isFalse();
        assertThat(HandshakeProof.matches(proof, HandshakeProof.helloProof(SECRET, HandshakeProof.newNonce(), client, "w1", "s1"))).isFalse();
        assertThat(HandshakeProof.matches(proof, HandshakeProof.helloProof(SECRET, server, client, "w2", "s1"))).isFalse();
        assertThat(HandshakeProof.matches(proof, HandshakeProof.helloProof(SECRET, server, client, "w1", "s2"))).isFalse();
    }

    @Test
    void fieldBoundariesCannotBeShifted() {
        ByteString server = HandshakeProof.newNonce();
        ByteString client = HandshakeProof.newNonce();
        assertThat(HandshakeProof.matches(
                HandshakeProof.helloProof(SECRET, server, client, "ab", "c"),
                HandshakeProof.helloProof(SECRET, server, client, "a", "bc"))).isFalse();
    }

    @Test
    void acceptProofDiffersFromHelloProofForTheSameNonces() {
        ByteString n1 = HandshakeProof.newNonce();
        ByteString n2 = HandshakeProof.newNonce();
        assertThat(HandshakeProof.matches(
                HandshakeProof.acceptProof(SECRET, n1, n2, "m"),
                HandshakeProof.helloProof(SECRET, n2, n1, "m", ""))).isFalse();
    }

    @Test
    void noncesAreFreshAndOfFixedLength() {
        ByteString a = HandshakeProof.newNonce();
        assertThat(a.size()).isEqualTo(HandshakeProof.NONCE_LENGTH);
        assertThat(a).isNotEqualTo(HandshakeProof.newNonce());
    }

    @Test
    void shortOrMissingSecretIsRejected() {
        assertThatThrownBy(() -> HandshakeProof.requireValidSecret(new byte[15]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 16 bytes");
        assertThatThrownBy(() -> HandshakeProof.requireValidSecret(null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HandshakeProof.helloProof(new byte[3], HandshakeProof.newNonce(),
                HandshakeProof.newNonce(), "w", "s")).isInstanceOf(IllegalArgumentException.class);
    }
}
