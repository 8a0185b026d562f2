package io.rlscheduler.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.testkit.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The API's settings that change who gets in and how: TLS from PEM files, and anonymous reads when switched on. */
class HttpApiSettingsIT {

    @TempDir
    Path dir;

    @Test
    void withTlsTheApiIsServedOverHttpsAndNotOverPlainHttp() throws Exception {
        TestCertificates ca = TestCertificates.create(dir.resolve("ca"));
        TestCertificates.Issued server = ca.issue("http-server", "localhost", "dns:localhost", "ip:127.0.0.1");
        try (HttpLab lab = HttpLab.start(dir.resolve("lab"), 1, 1, b -> b.tls(server.certificateChain(), server.privateKey()))) {
            assertThat(lab.url()).startsWith("https://127.0.0.1:");
            HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(ca.caCertificate())).build();
            HttpResponse<String> me = trusting.send(HttpRequest.newBuilder(URI.create(lab.url() + "/api/v1/me"))
                    .header("Authorization", "Bearer " + lab.adminToken()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(me.statusCode()).isEqualTo(200);
            assertThat(me.body()).contains("\"user\":\"admin\"");
            // A client that does not trust the lab's CA is refused, and plain HTTP gets no answer.
            assertThatThrownBy(() -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(lab.url() + "/api/v1/me"))
                    .build(), HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class);
            String plain = lab.url().replace("https://", "http://");
            assertThatThrownBy(() -> HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                    .send(HttpRequest.newBuilder(URI.create(plain + "/api/v1/me")).timeout(Duration.ofSeconds(10)).build(),
                            HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class);
        }
    }

    @Test
    void anonymousReadsServeTheGetRoutesOnlyAndOnlyWhenSwitchedOn() {
        try (HttpLab lab = HttpLab.start(dir.resolve("open"), 1, 1, b -> b.readOnlyAnonymous(true))) {
            Http anonymous = new Http(lab.url(), null);
            assertThat(anonymous.get("/api/v1/runs").status()).isEqualTo(200);
            assertThat(anonymous.get("/api/v1/workers").json().path("workers").size()).isEqualTo(1);
            assertThat(anonymous.post("/api/v1/runs", Map.of("script", "x.py")).status()).isEqualTo(401);
            assertThat(anonymous.post("/api/v1/sweeps", Map.of("base", Map.of("script", "x.py"), "seeds", java.util.List.of(1)))
                    .status()).isEqualTo(401);
            assertThat(anonymous.get("/api/v1/tokens").status()).isEqualTo(401);
            assertThat(anonymous.get("/api/v1/me").status()).isEqualTo(401);
            // A wrong token is still refused: anonymous means no token, not any token.
            assertThat(anonymous.as("rls_wrong").get("/api/v1/runs").status()).isEqualTo(401);
        }
        try (HttpLab lab = HttpLab.start(dir.resolve("closed"), 1, 1)) {
            assertThat(new Http(lab.url(), null).get("/api/v1/runs").status()).isEqualTo(401);
        }
    }

    @Test
    void aBodyOverTheLimitIsAnswered413AfterTheClientHasSentItAndTheConnectionThenCloses() throws Exception {
        try (HttpLab lab = HttpLab.start(dir.resolve("small"), 0, 0, b -> b.maxRequestBytes(64 * 1024))) {
            URI url = URI.create(lab.url());
            byte[] body = new byte[8 << 20]; // 128 times the limit: a client that writes it all before it reads
            java.util.Arrays.fill(body, (byte) 'x');
            try (java.net.Socket socket = new java.net.Socket(url.getHost(), url.getPort())) {
                socket.setSoTimeout(30_000);
                java.io.OutputStream out = socket.getOutputStream();
                out.write(("POST /api/v1/runs HTTP/1.1\r\nHost: " + url.getHost() + "\r\nAuthorization: Bearer "
                        + lab.adminToken() + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                        + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                out.write(body); // the server closing before the end would fail this write
                out.flush();
                String answer = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                assertThat(answer).startsWith("HTTP/1.1 413").containsIgnoringCase("connection: close")
                        .contains("\"code\":\"PAYLOAD_TOO_LARGE\"").contains("65536 bytes");
            }
            // The server serves on.
            assertThat(new Http(lab.url(), lab.adminToken()).get("/api/v1/me").status()).isEqualTo(200);
        }
    }

    private static SSLContext trusting(Path caPem) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }
}
