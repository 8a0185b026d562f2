package io.rlscheduler.master.internal;

import io.netty.channel.embedded.EmbeddedChannel;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A client certificate names a worker by its subject's one CN; a connection without TLS names none. */
class CertificateIdentityTest {

    @Test
    void theCommonNamesOfASubjectAreItsCnValuesInOrder() {
        assertThat(CertificateIdentity.commonNames(new X500Principal("CN=gpu-box-1, OU=lab, O=Example")))
                .containsExactly("gpu-box-1");
        assertThat(CertificateIdentity.commonNames(new X500Principal("OU=lab, O=Example"))).isEmpty();
        assertThat(CertificateIdentity.commonNames(new X500Principal("CN=a, CN=b"))).hasSize(2);
        assertThat(CertificateIdentity.commonNames(new X500Principal("CN=box\\,1"))).containsExactly("box,1");
    }

    @Test
    void aConnectionWithoutTlsHasNoCertificateIdentity() {
        EmbeddedChannel plaintext = new EmbeddedChannel();
        assertThat(CertificateIdentity.mismatch(plaintext, "gpu-box-1")).isNull();
        plaintext.finishAndReleaseAll();
    }
}
