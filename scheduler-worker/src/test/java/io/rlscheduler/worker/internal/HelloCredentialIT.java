package io.rlscheduler.worker.internal;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.WorkerKey;
import io.rlscheduler.protocol.WorkerKeyProof;
import io.rlscheduler.worker.WorkerOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A worker's hello credential read from a real key file. */
class HelloCredentialIT {

    @TempDir
    Path dir;

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(HelloCredential.class);
    private final ByteString server = HandshakeProof.newNonce();
    private final ByteString client = HandshakeProof.newNonce();

    @BeforeEach
    void capture() {
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logs);
    }

    private static KeyPair pair() {
        return WorkerKeyProof.newKeyPair();
    }

    private static WorkerKey key(String workerId, String keyId, KeyPair pair) {
        return WorkerKey.of(workerId, keyId, WorkerKeyProof.privateKeyBytes(pair.getPrivate()));
    }

    private HelloCredential fromFile(Path file) {
        return HelloCredential.of(WorkerOptions.builder().masters("m:1").workerId("w1").workerKeyFile(file).build());
    }

    private static Hello.Builder hello() {
        return Hello.newBuilder().setWorkerId("w1").setSessionId("s1");
    }

    @Test
    void theKeyFileIsReadAtEveryHelloSoThatARotatedKeyIsUsedWithoutARestart() throws Exception {
        KeyPair first = pair();
        Path file = Files.writeString(dir.resolve("worker.key"), key("w1", "k-1", first).toMaterial() + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        HelloCredential credential = fromFile(file);
        credential.check();
        Hello.Builder one = hello();
        credential.prove(one, server, client);
        assertThat(one.getKeyId()).isEqualTo("k-1");
        assertThat(one.getProof()).as("no shared-secret proof").isEmpty();
        assertThat(WorkerKeyProof.verify(first.getPublic().getEncoded(), one.getSignature(), server, client, "w1", "s1", "k-1")).isTrue();

        KeyPair second = pair();
        WorkerKey rotated = key("w1", "k-2", second);
        Files.writeString(file, rotated.toMaterial());
        Hello.Builder two = hello();
        HelloCredential.Proven proven = credential.prove(two, server, client);
        assertThat(two.getKeyId()).isEqualTo("k-2");
        HelloAccepted fromMaster = HelloAccepted.newBuilder().setMasterId("m1")
                .setProof(WorkerKeyProof.acceptProof(rotated.acceptKey(), client, server, "m1", "w1", "k-2")).build();
        assertThat(proven.provesMaster(fromMaster)).isTrue();
        assertThat(proven.provesMaster(fromMaster.toBuilder().setMasterId("m2").build())).isFalse();
        assertThat(logs.list).isEmpty();
    }

    @Test
    void aKeyFileOthersMayReadIsWarnedAboutOnce() throws Exception {
        Path file = Files.writeString(dir.resolve("worker.key"), key("w1", "k-1", pair()).toMaterial());
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        HelloCredential credential = fromFile(file);
        credential.prove(hello(), server, client);
        credential.prove(hello(), server, client);
        assertThat(logs.list).singleElement().satisfies(e -> assertThat(e.getFormattedMessage())
                .contains("may be read by others").contains("rw-r--r--").contains("chmod 600"));
    }

    @Test
    void aMissingBrokenOrForeignKeyFileFailsWithAClearMessage() throws Exception {
        assertThatThrownBy(() -> fromFile(dir.resolve("absent.key")).check()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot read the worker key file");
        Path broken = Files.writeString(dir.resolve("broken.key"), "not-a-key");
        assertThatThrownBy(() -> fromFile(broken).check()).hasMessageContaining("holds no worker key");
        Path foreign = Files.writeString(dir.resolve("foreign.key"), key("w2", "k-9", pair()).toMaterial());
        assertThatThrownBy(() -> fromFile(foreign).check()).hasMessageContaining("holds worker w2's key k-9, not worker w1's");
    }

    @Test
    void withoutAKeyTheSharedSecretIsProven() {
        byte[] secret = "0123456789abcdef-secret".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        HelloCredential credential = HelloCredential.of(WorkerOptions.builder().masters("m:1").workerId("w1").secret(secret).build());
        Hello.Builder hello = hello();
        HelloCredential.Proven proven = credential.prove(hello, server, client);
        assertThat(hello.getKeyId()).isEmpty();
        assertThat(HandshakeProof.matches(HandshakeProof.helloProof(secret, server, client, "w1", "s1"), hello.getProof())).isTrue();
        assertThat(proven.provesMaster(HelloAccepted.newBuilder().setMasterId("m1")
                .setProof(HandshakeProof.acceptProof(secret, client, server, "m1")).build())).isTrue();
        assertThat(credential.describe()).isEqualTo("the shared secret");
    }
}
