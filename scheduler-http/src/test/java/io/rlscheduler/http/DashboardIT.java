package io.rlscheduler.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * The dashboard in a real headless browser (Debian's chromium and its chromedriver) against a real
 * lab: Redis, a master with its HTTP API, and workers running python3 scripts. The scripts are gated
 * by files, never by time: a script prints as many training steps as the number in its gate's
 * {@code steps} file says, and ends once a {@code finish} file is there, so each test decides when a
 * curve grows and when a run ends. Every test ends by checking that the browser's console holds no
 * error.
 */
class DashboardIT {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * A training script for the tests: prints "step N reward R" and an RLS_METRIC point for each
     * step the gate allows (reward = lr * step, so the run with the largest lr is the best), then
     * waits, and ends when the gate's finish file exists.
     */
    private static final String TRAIN = String.join("\n",
            "import json, os, time",
            "p = json.load(open(os.environ['RLS_PARAMS_FILE']))",
            "gate = p['gate']",
            "lr = float(p.get('lr', 0.1))",
            "done = 0",
            "print('training with lr', lr, flush=True)",
            "while True:",
            "    try:",
            "        with open(os.path.join(gate, 'steps')) as f:",
            "            allowed = int(f.read().strip() or '0')",
            "    except (OSError, ValueError):",
            "        allowed = 0",
            "    while done < allowed:",
            "        done += 1",
            "        reward = lr * done",
            "        print('step %d reward %.4f' % (done, reward), flush=True)",
            "        print('RLS_METRIC ' + json.dumps({'step': done, 'reward': reward}), flush=True)",
            "    if done >= allowed and os.path.exists(os.path.join(gate, 'finish')):",
            "        break",
            "    time.sleep(0.05)",
            "print('finished after', done, 'steps', flush=True)",
            "");

    /**
     * Writes {@code size} bytes of {@link #artifactBytes} into {@code weights/policy.bin} of its run
     * directory and {@code pad} zeros into {@code weights/optimizer.bin}, which the worker stores as
     * outputs when the run ends, then ends once its gate's {@code finish} file exists.
     */
    private static final String ARTIFACT = String.join("\n",
            "import hashlib, json, os, time",
            "p = json.load(open(os.environ['RLS_PARAMS_FILE']))",
            "x = int(p['seed'])",
            "out = bytearray()",
            "for _ in range(int(p['size'])):",
            "    x = (x * 1103515245 + 12345) & 0x7fffffff",
            "    out.append((x >> 16) & 0xff)",
            "d = os.path.join(os.environ['RLS_RUN_DIR'], 'weights')",
            "os.makedirs(d, exist_ok=True)",
            "with open(os.path.join(d, 'policy.bin'), 'wb') as f:",
            "    f.write(out)",
            "with open(os.path.join(d, 'optimizer.bin'), 'wb') as f:",
            "    f.write(bytes(int(p['pad'])))",
            "print('wrote', len(out), 'bytes, sha256', hashlib.sha256(out).hexdigest(), flush=True)",
            "while not os.path.exists(os.path.join(p['gate'], 'finish')):",
            "    time.sleep(0.05)",
            "");

    @TempDir
    static Path labDir;

    private static HttpLab lab;
    private static String alice;
    private static String bob;

    @TempDir
    Path testDir;

    private ChromeDriver driver;
    private Path downloads;
    private String testName;
    private final List<Path> openGates = new ArrayList<>();

    @BeforeAll
    static void startLab() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "no " + CHROMIUM + " or " + CHROMEDRIVER + ": install Debian's chromium and chromium-driver"
                        + " (apt-get install chromium chromium-driver) to run the dashboard tests");
        // machine-1 reads its GPUs with an nvidia-smi of the test's (this machine has none), so
        // the GPU board has memory and utilisation to show; machine-2 has none to run.
        Path nvidiaSmi = labDir.resolve("nvidia-smi");
        Files.writeString(nvidiaSmi, "#!/bin/sh\necho '0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559, 20480, 37'\n"
                + "echo '1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559, 0, 0'\n");
        Files.setPosixFilePermissions(nvidiaSmi, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        lab = HttpLab.start(labDir.resolve("lab"), 2, 2, api -> { },
                (i, worker) -> worker.nvidiaSmi(i == 1 ? nvidiaSmi.toString() : labDir.resolve("absent").toString()));
        lab.writeScript("train.py", TRAIN);
        alice = lab.token("alice");
        bob = lab.token("bob");
    }

    @AfterAll
    static void stopLab() throws Exception {
        if (lab != null) {
            lab.close();
        }
    }

    @BeforeEach
    void startBrowser(TestInfo info) throws IOException {
        testName = info.getTestMethod().orElseThrow().getName();
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        Path profile = Files.createDirectories(testDir.resolve("chromium-profile"));
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1366,768", "--user-data-dir=" + profile);
        // Downloads go to the test's own directory, without asking.
        downloads = Files.createDirectories(testDir.resolve("downloads"));
        options.setExperimentalOption("prefs", Map.of("download.default_directory", downloads.toString(),
                "download.prompt_for_download", false, "download.directory_upgrade", true));
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability(ChromeOptions.LOGGING_PREFS, logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        driver = new ChromeDriver(service, options);
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
    }

    @AfterEach
    void stopBrowser() throws IOException {
        try {
            if (driver != null) {
                driver.quit();
            }
        } finally {
            // A test that failed half-way must not leave its runs holding the lab's GPUs.
            for (Path gate : openGates) {
                finish(gate, 0);
            }
        }
    }

    // ------------------------------------------------------------------------------------- tests

    @Test
    void runsTableUpdatesLiveAsARunEnds() throws Exception {
        Path gate = gate("live");
        String id = submit(alice, "train.py", Map.of("gate", gate.toString(), "lr", 0.2));
        awaitApiState(alice, id, "RUNNING");

        signIn(alice, "alice");
        awaitJs("the run's row shows RUNNING", "RUNNING", stateCellScript(id));
        js("window.__notReloaded = true;");

        finish(gate, 2);
        awaitJs("the run's row shows SUCCEEDED", "SUCCEEDED", stateCellScript(id));
        assertThat(js("return window.__notReloaded === true;")).as("the page was not reloaded").isEqualTo(true);

        // A run the page has never seen is added at the top, live.
        Path gate2 = gate("live2");
        String id2 = submit(alice, "train.py", Map.of("gate", gate2.toString()));
        awaitJs("the new run is the table's first row", id2,
                "const r = document.querySelector('#runs tbody tr'); return r && r.dataset.runId;");
        finish(gate2, 0);
        awaitJs("the new run's row shows SUCCEEDED", "SUCCEEDED", stateCellScript(id2));
        assertThat(js("return window.__notReloaded === true;")).isEqualTo(true);

        // The state filter asks the server for those runs only.
        driver.get(lab.url() + "/#/runs?state=SUCCEEDED");
        awaitJs("the filtered table lists the ended run", "SUCCEEDED", stateCellScript(id));
        assertThat(js("return [...document.querySelectorAll('#runs td[data-state]')].every(c => c.dataset.state === 'SUCCEEDED');"))
                .isEqualTo(true);
        assertNoConsoleErrors();
    }

    @Test
    void runPageCurveGrowsWhileTrainingAndTheLogFollows() throws Exception {
        Path gate = gate("curve");
        String id = submit(alice, "train.py", Map.of("gate", gate.toString(), "lr", 0.05, "note", "curve test"));
        awaitApiState(alice, id, "RUNNING");
        signIn(alice, "alice");
        driver.get(lab.url() + "/#/run/" + id);
        awaitJs("the run page shows RUNNING", "RUNNING", "const s = document.querySelector('#state'); return s && s.dataset.state;");
        awaitJs("the log shows the script's first line", true,
                "const l = document.querySelector('#log'); return !!l && l.textContent.includes('training with lr 0.05');");

        steps(gate, 3);
        awaitJs("three points drawn", "3", "return document.querySelector('#chart').dataset.points;");
        awaitJs("the log follows", true, "return document.querySelector('#log').textContent.includes('step 3 reward');");
        assertThat(js("return document.querySelector('#state').dataset.state;")).isEqualTo("RUNNING");

        steps(gate, 40);
        awaitJs("forty points drawn", "40", "return document.querySelector('#chart').dataset.points;");
        awaitJs("the log follows", true, "return document.querySelector('#log').textContent.includes('step 40 reward');");
        assertThat(js("return document.querySelector('#state').dataset.state;")).as("still training").isEqualTo("RUNNING");
        assertThat(js("return document.querySelectorAll('#chart .uplot').length;")).as("one chart: reward").isEqualTo(1L);
        assertThat(js("return document.querySelector('#chart [data-metric]').dataset.metric;")).isEqualTo("reward");
        // The log overflows its box and stays scrolled to its end.
        awaitJs("the log is scrolled to its last line", true,
                "const l = document.querySelector('#log'); return l.scrollHeight > l.clientHeight"
                        + " && l.scrollHeight - l.scrollTop - l.clientHeight < 30;");
        assertThat(js("return document.querySelector('#params [data-param=\"lr\"] td').textContent;")).isEqualTo("0.05");
        screenshot("run.png");

        finish(gate, 40);
        awaitJs("the run page shows SUCCEEDED", "SUCCEEDED", "return document.querySelector('#state').dataset.state;");
        awaitJs("the log stream ended", "true", "return document.querySelector('#log').dataset.ended || null;");
        assertThat((String) js("return document.querySelector('#log').textContent;")).contains("finished after 40 steps");
        assertThat(js("return document.querySelector('#cancel').hidden;")).as("no cancel on an ended run").isEqualTo(true);
        assertNoConsoleErrors();
    }

    @Test
    void ownerCancelsTheirRun() throws Exception {
        Path gate = gate("cancel");
        String id = submit(alice, "train.py", Map.of("gate", gate.toString()));
        awaitApiState(alice, id, "RUNNING");
        signIn(alice, "alice");
        driver.get(lab.url() + "/#/run/" + id);
        awaitJs("the run page shows RUNNING", "RUNNING", "const s = document.querySelector('#state'); return s && s.dataset.state;");

        driver.findElement(By.id("cancel")).click();
        awaitJs("the run page shows CANCELLED", "CANCELLED", "return document.querySelector('#state').dataset.state;");
        assertThat(apiState(alice, id)).isEqualTo("CANCELLED");
        assertThat(js("return document.querySelector('#error').hidden;")).as("no error").isEqualTo(true);
        assertNoConsoleErrors();
    }

    @Test
    void anotherUsersCancelIsRefusedAndTheRunGoesOn() throws Exception {
        Path gate = gate("refused");
        String id = submit(alice, "train.py", Map.of("gate", gate.toString()));
        awaitApiState(alice, id, "RUNNING");
        signIn(bob, "bob");
        driver.get(lab.url() + "/#/run/" + id);
        awaitJs("the run page shows RUNNING", "RUNNING", "const s = document.querySelector('#state'); return s && s.dataset.state;");

        driver.findElement(By.id("cancel")).click();
        awaitJs("the refusal is shown", true,
                "const e = document.querySelector('#error'); return !e.hidden && e.offsetParent !== null"
                        + " && document.querySelector('#error-text').textContent.length > 0;");
        // The page shows the server's own message: the same one a direct request gets.
        HttpResponse<String> refused = send(bob, "POST", "/api/v1/runs/" + id + "/cancel", null);
        assertThat(refused.statusCode()).isEqualTo(403);
        String message = JSON.readTree(refused.body()).path("error").path("message").asText();
        assertThat(js("return document.querySelector('#error-text').textContent;")).isEqualTo(message);
        assertThat(apiState(alice, id)).as("the run goes on").isEqualTo("RUNNING");
        assertThat(js("return document.querySelector('#state').dataset.state;")).isEqualTo("RUNNING");

        // It was not cancelled: it ends as its script does.
        finish(gate, 1);
        awaitJs("the run page shows SUCCEEDED", "SUCCEEDED", "return document.querySelector('#state').dataset.state;");
        // Chromium reports every answer >= 400 to fetch as a console error: the 403 this test
        // provoked is the one expected.
        assertNoConsoleErrors(Pattern.compile(Pattern.quote("/api/v1/runs/" + id + "/cancel") + ".*\\b403\\b"));
    }

    @Test
    void anArtifactIsDownloadedFromTheRunPageByteForByte() throws Exception {
        lab.writeScript("artifact.py", ARTIFACT);
        // Over 64 KiB, so the server sends it in several chunks; bytes of every value.
        int size = 200_003;
        long seed = 20_241_207;
        byte[] expected = artifactBytes(seed, size);
        Path gate = gate("artifact");
        // A large output beside it takes the worker a moment to store: the page reads the run's
        // artifacts as it sees the run end, before the outputs are there, and must read them again.
        int pad = 30_000_000;
        String id = submit(alice, "artifact.py", Map.of("seed", seed, "size", size, "pad", pad, "gate", gate.toString()));
        awaitApiState(alice, id, "RUNNING");
        // The page is open while the run ends: the artifact comes to it without a reload.
        signIn(alice, "alice");
        driver.get(lab.url() + "/#/run/" + id);
        awaitJs("the log shows the file written", true,
                "const l = document.querySelector('#log'); return !!l && l.textContent.includes('wrote " + size + " bytes');");
        awaitJs("no artifact while it runs", "None yet.", "return document.querySelector('#artifacts').textContent;");
        js("window.__notReloaded = true;");
        finish(gate, 0);
        awaitJs("the run page shows SUCCEEDED", "SUCCEEDED", "return document.querySelector('#state').dataset.state;");
        // The outputs and the log are stored after the run's end is recorded.
        await("the outputs and the log stored").atMost(WAIT).pollInterval(Duration.ofMillis(100))
                .until(() -> artifactPaths(id).containsAll(List.of("weights/policy.bin", "weights/optimizer.bin", id + ".log")));
        JsonNode artifact = policyArtifact(id);
        assertThat(artifact.path("kind").asText()).isEqualTo("OUTPUT");
        assertThat(artifact.path("size").asLong()).isEqualTo(size);
        assertThat(artifact.path("sha256").asText()).isEqualTo(sha256(expected));
        String key = artifact.path("key").asText();

        String button = "[...document.querySelectorAll('#artifacts button')].find(b => b.dataset.key === "
                + JSON.writeValueAsString(key) + ")";
        awaitJs("the run page lists the artifact", "weights/policy.bin",
                "const b = " + button + "; return b && b.textContent;");
        List<String> paths = artifactPaths(id);
        awaitJs("the run page lists every artifact the API does, the log too", paths,
                "return [...document.querySelectorAll('#artifacts li[data-artifact-key] button')].map(b => b.textContent);");
        assertThat(js("return window.__notReloaded === true;")).as("the page was not reloaded").isEqualTo(true);
        assertThat(downloaded()).as("nothing downloaded yet").isEmpty();

        // As a user on the keyboard would: the button takes the focus and Enter presses it.
        org.openqa.selenium.WebElement download = (org.openqa.selenium.WebElement) js("return " + button + ";");
        download.sendKeys(org.openqa.selenium.Keys.ENTER);
        Path file = downloads.resolve("policy.bin");
        await("the download lands in " + downloads).atMost(WAIT).pollInterval(Duration.ofMillis(100))
                .until(() -> downloaded().contains("policy.bin") && downloaded().stream().noneMatch(n -> n.endsWith(".crdownload")));
        assertThat(downloaded()).as("one file, named as the artifact").containsExactly("policy.bin");
        assertThat(Files.size(file)).isEqualTo(size);
        assertThat(Files.readAllBytes(file)).as("the bytes the script wrote").isEqualTo(expected);
        awaitJs("the button is ready again", false, "return " + button + ".disabled;");
        assertThat(js("return document.querySelector('#error').hidden;")).as("no error").isEqualTo(true);
        assertNoConsoleErrors();
    }

    @Test
    void sweepPageDrawsOneChartWithASeriesPerRunAndMarksTheBest() throws Exception {
        Path gate = gate("sweep");
        ObjectNode body = JSON.createObjectNode();
        ObjectNode base = body.putObject("base");
        base.put("script", "train.py");
        base.putObject("parameters").put("gate", gate.toString()).put("episodes", 30);
        base.put("gpus", 0);
        base.put("maxAttempts", 1);
        body.putObject("grid").putArray("lr").add(0.01).add(0.05).add(0.03);
        body.put("name", "lr scan");
        HttpResponse<String> created = send(alice, "POST", "/api/v1/sweeps", body.toString());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode sweep = JSON.readTree(created.body());
        String sweepId = sweep.path("id").asText();
        List<String> runIds = new ArrayList<>();
        sweep.path("runIds").forEach(n -> runIds.add(n.asText()));
        assertThat(runIds).hasSize(3);

        finish(gate, 30);
        Map<String, Double> lrOf = new LinkedHashMap<>();
        for (String rid : runIds) {
            awaitApiState(alice, rid, "SUCCEEDED");
            lrOf.put(rid, run(alice, rid).path("parameters").path("lr").asDouble());
        }
        String best = lrOf.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        assertThat(lrOf.get(best)).isEqualTo(0.05);

        signIn(alice, "alice");
        driver.get(lab.url() + "/#/sweep/" + sweepId);
        awaitJs("one series per run", "3", "const c = document.querySelector('#chart'); return c && c.dataset.series;");
        awaitJs("every point of every run drawn", "90", "return document.querySelector('#chart').dataset.points;");
        assertThat(js("return document.querySelectorAll('#chart .uplot').length;")).as("ONE chart").isEqualTo(1L);
        assertThat(js("return document.querySelector('#chart').dataset.metric;")).isEqualTo("reward");
        @SuppressWarnings("unchecked")
        List<String> legend = (List<String>) js("return [...document.querySelectorAll('#chart .u-legend .u-series')]"
                + ".slice(1).map(e => e.textContent);");
        assertThat(legend).hasSize(3);
        for (String rid : runIds) {
            String lr = lrOf.get(rid) == 0.01 ? "0.01" : lrOf.get(rid) == 0.05 ? "0.05" : "0.03";
            assertThat(legend).as("legend: run id and its varying parameter").anyMatch(l -> l.contains(rid + " lr=" + lr));
        }

        awaitJs("the compare table marks the best run", best,
                "const r = document.querySelector('#compare tr[data-best=\"true\"]'); return r && r.dataset.runId;");
        assertThat(js("return document.querySelectorAll('#compare tr[data-best]').length;")).isEqualTo(1L);
        assertThat(js("return document.querySelectorAll('#compare tbody tr[data-run-id]').length;")).isEqualTo(3L);
        assertThat(js("return [...document.querySelectorAll('#compare th.varying')].map(e => e.dataset.param);"))
                .isEqualTo(List.of("lr"));
        assertThat(js("return document.querySelectorAll('#compare tbody td.varying').length;")).isEqualTo(3L);
        assertThat((String) js("return document.querySelector('#compare tr[data-best] td.metric').textContent;"))
                .isEqualTo("1.5");
        screenshot("sweep.png");

        // Lower is better: the best is the smallest lr's run.
        String worst = lrOf.entrySet().stream().min(Map.Entry.comparingByValue()).orElseThrow().getKey();
        driver.findElement(By.id("higher")).click();
        awaitJs("the compare table marks the other end", worst,
                "const r = document.querySelector('#compare tr[data-best=\"true\"]'); return r && r.dataset.runId;");
        assertNoConsoleErrors();
    }

    @Test
    void queueAndWorkersPagesShowWaitingRunsAndGpus() throws Exception {
        Path gate = gate("board");
        String running = submit(alice, "train.py", Map.of("gate", gate.toString()), Map.of("gpus", 1));
        awaitApiState(alice, running, "RUNNING");
        // No worker has this label: the run waits, and says why.
        String waiting = submit(alice, "train.py", Map.of("gate", gate.toString()),
                Map.of("selector", Map.of("pool", "nowhere")));
        awaitApiState(alice, waiting, "QUEUED");

        signIn(alice, "alice");
        driver.get(lab.url() + "/#/queue");
        awaitJs("the waiting run is listed with its reason", true,
                "const r = document.querySelector('#queue tr[data-run-id=\"" + waiting + "\"] td.why');"
                        + " return !!r && r.dataset.code.length > 0;");

        driver.get(lab.url() + "/#/workers");
        awaitJs("a board per worker", 2L, "return document.querySelectorAll('#workers [data-worker-id]').length;");
        assertThat(js("return [...document.querySelectorAll('#workers [data-worker-id]')]"
                + ".every(w => w.querySelectorAll('.gpu').length === 2);")).as("two GPUs each").isEqualTo(true);
        awaitJs("the GPU that holds the run says so", 1L,
                "return document.querySelectorAll('#workers .gpu[data-run-id=\"" + running + "\"]').length;");
        awaitJs("machine-1's GPU 0 shows its memory and utilisation as its nvidia-smi read them", true,
                "const g = document.querySelector('#workers [data-worker-id=\"machine-1\"] .gpu[data-gpu-index=\"0\"]');"
                        + " const m = g && g.querySelector('meter');"
                        + " return !!m && m.value === 20480 * 1048576 && m.max === 81559 * 1048576"
                        + " && g.textContent.includes('utilisation 37 %') && g.textContent.includes('NVIDIA H100 80GB HBM3');");
        assertThat(js("const g = document.querySelector('#workers [data-worker-id=\"machine-2\"] .gpu[data-gpu-index=\"2\"]');"
                + " return !!g && !g.querySelector('meter') && g.textContent.includes('utilisation —');"))
                .as("a machine without nvidia-smi shows no figures").isEqualTo(true);

        driver.get(lab.url() + "/#/run/" + waiting);
        awaitJs("the run page says why it waits", true,
                "const w = document.querySelector('#why strong'); return !!w && w.textContent.length > 0;");
        HttpResponse<String> cancelled = send(alice, "POST", "/api/v1/runs/" + waiting + "/cancel", null);
        assertThat(cancelled.statusCode()).isEqualTo(200);
        awaitJs("the run page follows the cancel", "CANCELLED", "return document.querySelector('#state').dataset.state;");
        finish(gate, 0);
        assertNoConsoleErrors();
    }

    @Test
    void onAPhoneEveryPageFitsTheScreenAndTheKeyboardReachesEveryPage() throws Exception {
        Path gate = gate("phone");
        String id = submit(alice, "train.py", Map.of("gate", gate.toString()), Map.of("gpus", 1));
        awaitApiState(alice, id, "RUNNING");
        steps(gate, 5);
        signIn(alice, "alice");
        org.openqa.selenium.Dimension laptop = driver.manage().window().getSize();
        try {
            driver.manage().window().setSize(new org.openqa.selenium.Dimension(390, 844));
            for (String page : List.of("#/runs", "#/run/" + id, "#/queue", "#/workers", "#/sweeps")) {
                driver.get(lab.url() + "/" + page);
                awaitJs(page + " drawn", true, "const m = document.querySelector('main'); return !!m && m.textContent.length > 20;");
                assertThat(js("return document.documentElement.scrollWidth <= window.innerWidth + 1;"))
                        .as(page + " fits a 390 px wide screen (wide tables scroll inside their own box)").isEqualTo(true);
            }
        } finally {
            driver.manage().window().setSize(laptop);
        }
        // The keyboard alone: Tab reaches every section's link, each focused visibly, and Enter opens it.
        driver.get(lab.url() + "/#/runs");
        awaitJs("the runs table", true, "return !!document.querySelector('#runs tr[data-run-id]');");
        java.util.Set<String> reached = new java.util.HashSet<>();
        for (int i = 0; i < 40 && !reached.containsAll(List.of("#/runs", "#/queue", "#/workers", "#/sweeps")); i++) {
            driver.switchTo().activeElement().sendKeys(org.openqa.selenium.Keys.TAB);
            Object href = js("const a = document.activeElement; return a && a.getAttribute('href');");
            if (href != null) {
                reached.add(href.toString());
                Object visible = js("const st = getComputedStyle(document.activeElement);"
                        + " return st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) > 0 || st.boxShadow !== 'none';");
                assertThat(visible).as("focus on " + href + " is visible").isEqualTo(true);
            }
            if ("#/workers".equals(href)) {
                driver.switchTo().activeElement().sendKeys(org.openqa.selenium.Keys.ENTER);
                awaitJs("Enter opens the workers page", "#/workers", "return location.hash;");
                awaitJs("the workers page", true, "return !!document.querySelector('#workers [data-worker-id]');");
                break;
            }
        }
        assertThat(reached).contains("#/runs", "#/queue", "#/workers");
        finish(gate, 5);
        assertNoConsoleErrors();
    }

    // ----------------------------------------------------------------------------------- helpers

    /** The bytes {@link #ARTIFACT} writes: the high bytes of a linear congruential sequence. */
    private static byte[] artifactBytes(long seed, int size) {
        byte[] bytes = new byte[size];
        long x = seed;
        for (int i = 0; i < size; i++) {
            x = (x * 1103515245L + 12345L) & 0x7fffffffL;
            bytes[i] = (byte) (x >> 16);
        }
        return bytes;
    }

    private static String sha256(byte[] bytes) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** The run's artifacts as the API lists them. */
    private JsonNode artifacts(String id) throws Exception {
        HttpResponse<String> res = send(alice, "GET", "/api/v1/runs/" + id + "/artifacts", null);
        assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
        return JSON.readTree(res.body()).path("artifacts");
    }

    private List<String> artifactPaths(String id) throws Exception {
        List<String> paths = new ArrayList<>();
        artifacts(id).forEach(a -> paths.add(a.path("path").asText()));
        return paths;
    }

    /** The run's stored {@code weights/policy.bin} as the API lists it. */
    private JsonNode policyArtifact(String id) throws Exception {
        for (JsonNode a : artifacts(id)) {
            if (a.path("path").asText().equals("weights/policy.bin")) {
                return a;
            }
        }
        throw new AssertionError("no weights/policy.bin among " + artifacts(id));
    }

    /** The names of the files in the download directory, Chromium's partial ones ({@code .crdownload}) included. */
    private List<String> downloaded() throws IOException {
        try (Stream<Path> files = Files.list(downloads)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    /** Opens the dashboard with no token: the sign-in form comes up; the token given signs in. */
    private void signIn(String token, String user) {
        driver.get(lab.url() + "/");
        awaitJs("the sign-in form", true, "return !!document.querySelector('#token-input');");
        driver.findElement(By.id("token-input")).sendKeys(token);
        driver.findElement(By.id("signin-submit")).click();
        awaitJs("signed in as " + user, user, "const m = document.querySelector('#me'); return m && m.dataset.user || null;");
        assertThat(js("return localStorage.getItem('rls.token');")).isEqualTo(token);
    }

    private static String stateCellScript(String id) {
        return "const c = document.querySelector('#runs tr[data-run-id=\"" + id + "\"] td[data-state]');"
                + " return c && c.dataset.state;";
    }

    private Object js(String script) {
        return ((JavascriptExecutor) driver).executeScript(script);
    }

    private void awaitJs(String what, Object expected, String script) {
        await(what).atMost(WAIT).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> expected.equals(js(script)));
    }

    /**
     * Writes target/screenshots/NAME: the page as a laptop shows it, taller, so that one picture
     * holds more than the first screenful; the window gets its size back after.
     */
    private void screenshot(String name) throws IOException {
        Path dir = Files.createDirectories(Path.of("target", "screenshots"));
        Dimension size = driver.manage().window().getSize();
        driver.manage().window().setSize(new Dimension(1366, 1080));
        awaitJs("the taller window", true, "return window.innerHeight > 900;");
        Path png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(png, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        driver.manage().window().setSize(size);
    }

    private void assertNoConsoleErrors(Pattern... expected) {
        List<String> severe = new ArrayList<>();
        for (LogEntry e : driver.manage().logs().get(LogType.BROWSER)) {
            if (e.getLevel().intValue() < Level.SEVERE.intValue()) {
                continue;
            }
            if (Stream.of(expected).anyMatch(p -> p.matcher(e.getMessage()).find())) {
                continue;
            }
            severe.add(e.getMessage());
        }
        assertThat(severe).as("console errors in " + testName).isEmpty();
    }

    private Path gate(String name) throws IOException {
        Path gate = Files.createDirectories(testDir.resolve("gate-" + name));
        openGates.add(gate);
        return gate;
    }

    /** Lets the script print up to {@code n} steps (written whole, by a rename). */
    private static void steps(Path gate, int n) throws IOException {
        Path tmp = gate.resolve("steps.tmp");
        Files.writeString(tmp, Integer.toString(n), StandardCharsets.UTF_8);
        Files.move(tmp, gate.resolve("steps"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Lets the script print its steps up to {@code n} (never fewer than it was allowed) and end. */
    private static void finish(Path gate, int n) throws IOException {
        if (!Files.exists(gate.resolve("steps")) || n > 0) {
            steps(gate, n);
        }
        Files.writeString(gate.resolve("finish"), "", StandardCharsets.UTF_8);
    }

    private String submit(String token, String script, Map<String, Object> parameters) throws Exception {
        return submit(token, script, parameters, Map.of());
    }

    private String submit(String token, String script, Map<String, Object> parameters, Map<String, Object> more)
            throws Exception {
        String id = "dash-" + testName.substring(0, Math.min(20, testName.length())) + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        ObjectNode spec = JSON.createObjectNode();
        spec.put("script", script);
        spec.set("parameters", JSON.valueToTree(new LinkedHashMap<>(parameters)));
        spec.put("taskId", id);
        spec.put("gpus", 0);
        spec.put("timeoutSeconds", 600);
        spec.put("maxAttempts", 1);
        more.forEach((k, v) -> spec.set(k, JSON.valueToTree(v)));
        HttpResponse<String> res = send(token, "POST", "/api/v1/runs", spec.toString());
        assertThat(res.statusCode()).as(res.body()).isEqualTo(201);
        return id;
    }

    private JsonNode run(String token, String id) throws Exception {
        HttpResponse<String> res = send(token, "GET", "/api/v1/runs/" + id, null);
        assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
        return JSON.readTree(res.body());
    }

    private String apiState(String token, String id) throws Exception {
        return run(token, id).path("state").asText();
    }

    private void awaitApiState(String token, String id, String state) {
        await(id + " " + state).atMost(WAIT).pollInterval(Duration.ofMillis(100))
                .until(() -> apiState(token, id), s -> {
                    if (!s.equals(state) && List.of("SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT").contains(s)) {
                        throw new AssertionError(id + " ended " + s + " while waiting for " + state);
                    }
                    return s.equals(state);
                });
    }

    private static HttpResponse<String> send(String token, String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(lab.url() + path))
                .timeout(Duration.ofSeconds(20))
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json");
        if (body != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
