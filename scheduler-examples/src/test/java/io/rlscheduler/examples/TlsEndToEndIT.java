package io.rlscheduler.examples;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.protocol.ClientAuthMode;
import io.rlscheduler.protocol.ClientTlsOptions;
import io.rlscheduler.protocol.ServerTlsOptions;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestCertificates;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * TLS on the master's RPC port end to end: real Redis, a master and workers over loopback TLS
 * with certificates made by keytool, real python3 runs. A sweep runs over mutual TLS; client
 * certificates refuse a worker without one and hold a worker to the id its certificate names;
 * a plaintext worker against a TLS port and a TLS worker against a plaintext port never connect,
 * while the master serves its good workers all along.
 */
class TlsEndToEndIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    @TempDir
    static Path certificates;
    private static TestCertificates ca;
    private static TestCertificates.Issued masterCertificate;
    private static TestCertificates.Issued box1;
    private static TestCertificates.Issued box2;

    @TempDir
    Path dir;

    @BeforeAll
    static void makeCertificates() {
        ca = TestCertificates.create(certificates);
        masterCertificate = ca.issue("master", "localhost", "dns:localhost", "ip:127.0.0.1");
        box1 = ca.issue("gpu-box-1", "gpu-box-1");
        box2 = ca.issue("gpu-box-2", "gpu-box-2");
    }

    @Test
    void aSweepRunsOverMutualTlsAndEveryRunSucceedsWithItsWholeLog(TestRedis redis, RedisNamespace ns) throws Exception {
        try (Cluster cluster = new Cluster(redis, ns, dir, master(ClientAuthMode.REQUIRE))) {
            cluster.start(cluster.workerBuilder("gpu-box-1", 0, 1).tls(workerTls(box1)));
            cluster.start(cluster.workerBuilder("gpu-box-2", 2, 3).tls(workerTls(box2)));
            List<TaskHandle> runs = new ArrayList<>();
            for (double lr : new double[] {0.05, 0.1, 0.2}) {
                for (long seed : new long[] {1, 2}) {
                    runs.add(cluster.master.submit(TaskSpec.python("train.py").taskId("sweep-lr" + lr + "-seed" + seed)
                            .param("algo", "q-learning").param("lr", lr).param("seed", seed).gpus(1).build()));
                }
            }
            for (TaskHandle run : runs) {
                TaskResult result = run.result().get(120, TimeUnit.SECONDS);
                assertThat(result.getState()).as(run.getTaskId()).isEqualTo(TaskState.SUCCEEDED);
                assertThat(result.getFinalMetrics()).containsKey("final_reward");
                assertThat(result.getWorkerId()).isIn("gpu-box-1", "gpu-box-2");
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                        lastLine(cluster.logFile(run.getTaskId()))).startsWith("##RLS_END state=SUCCEEDED complete=true"));
            }
            assertThat(cluster.master.getOptions().getTls()).hasValueSatisfying(t ->
                    assertThat(t.getClientAuth()).isEqualTo(ClientAuthMode.REQUIRE));
        }
    }

    @Test
    void requiredClientCertificatesRefuseAWorkerWithoutOneWhileCertifiedWorkersRun(TestRedis redis, RedisNamespace ns)
            throws Exception {
        try (Cluster cluster = new Cluster(redis, ns, dir, master(ClientAuthMode.REQUIRE))) {
            SchedulerWorker anonymous = cluster.start(cluster.workerBuilder("gpu-box-9", 0)
                    .tls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate()).build()));
            cluster.start(cluster.workerBuilder("gpu-box-1", 1).tls(workerTls(box1)));

            TaskHandle run = cluster.master.submit(probe("with-certificates"));
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.getRecord().getWorkerId()).isEqualTo("gpu-box-1");
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> !anonymous.isConnected());
            assertThat(anonymous.getLastRejection()).as("refused at the TLS handshake, before any hello").isEmpty();
            assertThat(cluster.master.health().getConnectedWorkers()).isEqualTo(1);
        }
    }

    @Test
    void aWorkerWhoseCertificateNamesAnotherWorkerIsRejectedInvalidIdentity(TestRedis redis, RedisNamespace ns)
            throws Exception {
        try (Cluster cluster = new Cluster(redis, ns, dir, master(ClientAuthMode.OPTIONAL))) {
            SchedulerWorker impostor = cluster.start(cluster.workerBuilder("gpu-box-3", 0).tls(workerTls(box1)));
            await().atMost(Duration.ofSeconds(20)).until(() -> impostor.getLastRejection().contains("INVALID_IDENTITY"));
            assertThat(impostor.getLastRejection()).contains("gpu-box-3").contains("CN 'gpu-box-1'");
            assertThat(impostor.isConnected()).isFalse();

            // Optional: a worker without a certificate is identified by the secret's proof alone.
            cluster.start(cluster.workerBuilder("gpu-box-4", 1)
                    .tls(ClientTlsOptions.builder().trustedCertificates(ca.caCertificate()).build()));
            cluster.start(cluster.workerBuilder("gpu-box-1", 2).tls(workerTls(box1)));
            await().atMost(Duration.ofSeconds(20)).until(() -> cluster.master.health().getConnectedWorkers() == 2);
            TaskHandle run = cluster.master.submit(probe("beside-the-impostor"));
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.getRecord().getWorkerId()).isIn("gpu-box-1", "gpu-box-4");
            assertThat(impostor.isConnected()).isFalse();
        }
    }

    @Test
    void aPlaintextWorkerAgainstTheTlsPortIsClosedAndTheMasterServesItsTlsWorkers(TestRedis redis, RedisNamespace ns)
            throws Exception {
        UnaryOperator<SchedulerMaster.Builder> tlsMaster = b -> master(ClientAuthMode.NONE).apply(b)
                .handshakeTimeout(Duration.ofSeconds(1));
        try (Cluster cluster = new Cluster(redis, ns, dir, tlsMaster)) {
            SchedulerWorker plaintext = cluster.worker("plain-box", 0);
            InetSocketAddress port = new InetSocketAddress("127.0.0.1", cluster.master.getRpcAddress().getPort());
            assertThat(rawPlaintextHello(port)).as("a plaintext client that speaks first is answered with no frame")
                    .doesNotContain("RLSC");
            cluster.start(cluster.workerBuilder("tls-box", 1).tls(ClientTlsOptions.builder()
                    .trustedCertificates(ca.caCertificate()).build()));

            TaskHandle run = cluster.master.submit(probe("over-tls"));
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.getRecord().getWorkerId()).isEqualTo("tls-box");
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).until(() -> !plaintext.isConnected());
            assertThat(cluster.master.health().getConnectedWorkers()).isEqualTo(1);
        }
    }

    @Test
    void aTlsWorkerAgainstAPlaintextPortIsClosedAndTheMasterServesItsPlaintextWorkers(TestRedis redis, RedisNamespace ns)
            throws Exception {
        try (Cluster cluster = new Cluster(redis, ns, dir, UnaryOperator.identity())) {
            SchedulerWorker tls = cluster.start(cluster.workerBuilder("tls-box", 0).tls(workerTls(box1)));
            cluster.worker("plain-box", 1);

            TaskHandle run = cluster.master.submit(probe("in-plaintext"));
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.getRecord().getWorkerId()).isEqualTo("plain-box");
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> !tls.isConnected());
            assertThat(tls.getLastRejection()).isEmpty();
            assertThat(cluster.master.health().getConnectedWorkers()).isEqualTo(1);
        }
    }

    /** The master's TLS: its certificate, and with client certificates the CA that signs the workers'. */
    private static UnaryOperator<SchedulerMaster.Builder> master(ClientAuthMode clientAuth) {
        ServerTlsOptions.Builder tls = ServerTlsOptions.builder(masterCertificate.certificateChain(),
                masterCertificate.privateKey()).clientAuth(clientAuth);
        if (clientAuth != ClientAuthMode.NONE) {
            tls.trustedCertificates(ca.caCertificate());
        }
        ServerTlsOptions options = tls.build();
        return b -> b.tls(options);
    }

    /** A worker's TLS: trusts the CA, presents {@code certificate}. */
    private static ClientTlsOptions workerTls(TestCertificates.Issued certificate) {
        return ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())
                .clientCertificate(certificate.certificateChain(), certificate.privateKey()).build();
    }

    private static TaskSpec probe(String id) {
        return TaskSpec.python("gpu_probe.py").taskId(id).param("hold", 0.2).gpus(1).build();
    }

    private static String lastLine(Path file) throws Exception {
        if (!Files.exists(file)) {
            return "";
        }
        List<String> lines = Files.readAllLines(file);
        return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
    }

    /** Sends the start of a plaintext frame and returns what came back before the master closed the connection. */
    private static String rawPlaintextHello(InetSocketAddress port) throws Exception {
        try (Socket socket = new Socket(port.getAddress(), port.getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write("RLSC\u0001\u0000\u0000\u0000\u0010\u0001".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            StringBuilder received = new StringBuilder();
            try {
                for (int b; (b = in.read()) != -1; ) {
                    received.append((char) b);
                }
            } catch (SocketException reset) {
                // closed with a reset
            }
            return received.toString();
        }
    }
}
