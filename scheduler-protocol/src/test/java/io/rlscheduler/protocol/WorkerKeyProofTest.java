package io.rlscheduler.protocol;

import com.google.protobuf.ByteString;
import java.security.KeyPair;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WorkerKeyProofTest {

    private final KeyPair pair = WorkerKeyProof.newKeyPair();
    private final WorkerKey key = WorkerKey.of("w1", "k-1", WorkerKeyProof.privateKeyBytes(pair.getPrivate()));
    private final byte[] publicKey = pair.getPublic().getEncoded();
    private final ByteString server = HandshakeProof.newNonce();
    private final ByteString client = HandshakeProof.newNonce();

    @Test
    void aSignatureVerifiesWithThePublicKeyForExactlyTheSignedHello() {
        ByteString signature = key.sign(server, client, "s1");
        assertThat(signature.size()).isEqualTo(WorkerKeyProof.SIGNATURE_LENGTH);
        assertThat(WorkerKeyProof.verify(publicKey, signature, server, client, "w1", "s1", "k-1")).isTrue();
        assertThat(WorkerKeyProof.verify(publicKey, signature, HandshakeProof.newNonce(), client, "w1", "s1", "k-1")).isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, signature, server, HandshakeProof.newNonce(), "w1", "s1", "k-1")).isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, signature, server, client, "w2", "s1", "k-1")).as("another worker id").isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, signature, server, client, "w1", "s2", "k-1")).isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, signature, server, client, "w1", "s1", "k-2")).isFalse();
        byte[] otherKey = WorkerKeyProof.newKeyPair().getPublic().getEncoded();
        assertThat(WorkerKeyProof.verify(otherKey, signature, server, client, "w1", "s1", "k-1")).isFalse();
    }

    @Test
    void malformedKeysAndSignaturesAreAFailedCheckNotAnException() {
        ByteString signature = key.sign(server, client, "s1");
        assertThat(WorkerKeyProof.verify(new byte[] {1, 2, 3}, signature, server, client, "w1", "s1", "k-1")).isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, ByteString.copyFrom(new byte[64]), server, client, "w1", "s1", "k-1")).isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, signature.substring(1), server, client, "w1", "s1", "k-1")).isFalse();
        assertThat(WorkerKeyProof.verify(publicKey, ByteString.EMPTY, server, client, "w1", "s1", "k-1")).isFalse();
    }

    @Test
    void fieldBoundariesOfTheTranscriptCannotBeShifted() {
        ByteString signature = key.sign(server, client, "s1");
        assertThat(WorkerKeyProof.verify(publicKey, signature, server, client, "w1s", "1", "k-1")).isFalse();
        assertThat(WorkerKeyProof.transcript(server, client, "ab", "c", "k"))
                .isNotEqualTo(WorkerKeyProof.transcript(server, client, "a", "bc", "k"));
    }

    @Test
    void theAcceptProofNeedsTheAcceptKeyAndNamesMasterWorkerAndKey() {
        byte[] accept = key.acceptKey();
        assertThat(accept).hasSize(32).isEqualTo(WorkerKeyProof.acceptKey(WorkerKeyProof.privateKeyBytes(pair.getPrivate())));
        ByteString proof = WorkerKeyProof.acceptProof(accept, client, server, "m1", "w1", "k-1");
        assertThat(HandshakeProof.matches(proof, WorkerKeyProof.acceptProof(accept, client, server, "m1", "w1", "k-1"))).isTrue();
        assertThat(HandshakeProof.matches(proof, WorkerKeyProof.acceptProof(accept, client, server, "m2", "w1", "k-1"))).isFalse();
        assertThat(HandshakeProof.matches(proof, WorkerKeyProof.acceptProof(accept, client, server, "m1", "w2", "k-1"))).isFalse();
        assertThat(HandshakeProof.matches(proof, WorkerKeyProof.acceptProof(accept, client, server, "m1", "w1", "k-2"))).isFalse();
        byte[] otherAccept = WorkerKey.of("w1", "k-1", WorkerKeyProof.privateKeyBytes(WorkerKeyProof.newKeyPair().getPrivate()))
                .acceptKey();
        assertThat(HandshakeProof.matches(proof, WorkerKeyProof.acceptProof(otherAccept, client, server, "m1", "w1", "k-1"))).isFalse();
        assertThat(HandshakeProof.matches(proof, HandshakeProof.acceptProof(accept, client, server, "m1")))
                .as("not the shared-secret proof under the same key").isFalse();
    }

    @Test
    void theMaterialIsOneLineThatParsesBackToTheSameKey() {
        String material = key.toMaterial();
        assertThat(material).startsWith("rlswk1:w1:k-1:").doesNotContain("\n").doesNotContain("=");
        WorkerKey parsed = WorkerKey.parse("  " + material + "\n");
        assertThat(parsed).isEqualTo(key);
        assertThat(parsed.getWorkerId()).isEqualTo("w1");
        assertThat(parsed.getKeyId()).isEqualTo("k-1");
        assertThat(WorkerKeyProof.verify(publicKey, parsed.sign(server, client, "s1"), server, client, "w1", "s1", "k-1")).isTrue();
    }

    @Test
    void neitherToStringNorAParseErrorShowsThePrivateKey() {
        String material = key.toMaterial();
        String secretPart = material.substring(material.lastIndexOf(':') + 1);
        assertThat(key.toString()).contains("w1").contains("k-1").doesNotContain(secretPart);
        String broken = material.replace(":k-1:", ":k 1:");
        assertThatThrownBy(() -> WorkerKey.parse(broken)).isInstanceOf(IllegalArgumentException.class)
                .message().doesNotContain(secretPart);
        assertThatThrownBy(() -> WorkerKey.parse("rlswk1:w1:k-1:" + secretPart + "!")).isInstanceOf(IllegalArgumentException.class)
                .message().doesNotContain(secretPart);
    }

    @Test
    void malformedMaterialIsRefusedWithAClearMessage() {
        assertThatThrownBy(() -> WorkerKey.parse("the-shared-secret")).hasMessageContaining("not a worker key");
        assertThatThrownBy(() -> WorkerKey.parse("rlswk1:w1:k-1:AAAA")).hasMessageContaining("32 bytes");
        assertThatThrownBy(() -> WorkerKey.parse("rlswk1:../x:k-1:" + "A".repeat(43))).hasMessageContaining("worker id");
        assertThatThrownBy(() -> WorkerKey.of("w1", "", new byte[32])).hasMessageContaining("key id");
        assertThat(WorkerKey.isValidKeyId("k-0123")).isTrue();
        assertThat(WorkerKey.isValidKeyId("-k")).isFalse();
    }
}
