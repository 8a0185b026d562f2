package io.rlscheduler.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Paging {@code GET /api/v1/runs} with {@code offset} and {@code limit} against a real master and
 * Redis, as docs/http.md describes it: a lab with no worker, so the runs stay where the test put
 * them (queued, or cancelled while queued). Twelve runs of two owners, one with a higher priority,
 * three cancelled, then bob's sweep of three; each listing is read page by page and the pages put
 * together are compared with the order the documentation promises.
 */
class RunsPagingIT {

    /** Who submits each run, in submission order: twelve one by one, then the three of bob's sweep. */
    private static final List<String> OWNERS = List.of(
            "alice", "alice", "bob", "alice", "bob", "alice", "alice", "bob", "alice", "alice", "bob", "alice",
            "bob", "bob", "bob");
    private static final int SINGLE_RUNS = 12;
    /** The run submitted with priority 5: first in the queue although submitted in the middle. */
    private static final int URGENT = 6;
    /** The runs cancelled while queued. */
    private static final Set<Integer> CANCELLED = Set.of(1, 4, 9);

    @TempDir
    static Path dir;
    static HttpLab lab;
    static Http alice;
    static Http bob;
    /** The run ids in submission order. */
    static final List<String> submitted = new ArrayList<>();
    static String sweepId;

    @BeforeAll
    static void submitRuns() {
        lab = HttpLab.start(dir, 0, 0);
        alice = new Http(lab.url(), lab.token("alice"));
        bob = alice.as(lab.token("bob"));
        for (int i = 0; i < SINGLE_RUNS; i++) {
            String id = "page-" + OWNERS.get(i) + "-" + i;
            Http http = OWNERS.get(i).equals("alice") ? alice : bob;
            Http.Answer created = http.post("/api/v1/runs", Map.of("script", "count.py", "taskId", id,
                    "priority", i == URGENT ? 5 : 0));
            assertThat(created.status()).as(created.body()).isEqualTo(201);
            submitted.add(id);
        }
        for (int i : CANCELLED) {
            Http http = OWNERS.get(i).equals("alice") ? alice : bob;
            Http.Answer cancelled = http.post("/api/v1/runs/" + submitted.get(i) + "/cancel", Map.of());
            assertThat(cancelled.json().path("cancelled").asBoolean()).as(cancelled.body()).isTrue();
        }
        Http.Answer sweep = bob.post("/api/v1/sweeps", Map.of("base", Map.of("script", "count.py"),
                "grid", Map.of("lr", List.of(0.1, 0.2, 0.3))));
        assertThat(sweep.status()).as(sweep.body()).isEqualTo(201);
        sweepId = sweep.json().path("id").asText();
        sweep.json().path("runIds").forEach(id -> submitted.add(id.asText()));
        assertThat(submitted).hasSameSizeAs(OWNERS);
    }

    @AfterAll
    static void stopLab() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void allRunsArePagedNewestFirstInDisjointPagesThatCoverEveryRun() {
        List<String> newestFirst = reversed(submitted);
        assertThat(pages(alice, "", 4, 15, List.of(4, 4, 4, 3))).isEqualTo(newestFirst);
        // A limit that divides the total: the last page is full and the next one empty.
        assertThat(pages(alice, "", 5, 15, List.of(5, 5, 5))).isEqualTo(newestFirst);
        assertThat(pages(alice, "", 500, 15, List.of(15))).isEqualTo(newestFirst);
        // Pages started anywhere agree with the whole listing.
        assertThat(ids(page(alice, "offset=7&limit=3"))).isEqualTo(newestFirst.subList(7, 10));
        assertThat(ids(page(alice, "offset=14"))).isEqualTo(newestFirst.subList(14, 15));
    }

    @Test
    void anOffsetAtOrPastTheEndGivesAnEmptyPageWithTheTotal() {
        for (String offset : List.of("15", "16", "1000", Integer.toString(Integer.MAX_VALUE - 500))) {
            JsonNode page = page(alice, "offset=" + offset + "&limit=5");
            assertThat(page.path("runs").size()).as("offset " + offset).isZero();
            assertThat(page.path("total").asLong()).as("offset " + offset).isEqualTo(15);
            assertThat(page.path("offset").asLong()).isEqualTo(Long.parseLong(offset));
            JsonNode cancelled = page(alice, "state=CANCELLED&offset=" + offset);
            assertThat(cancelled.path("runs").size()).isZero();
            assertThat(cancelled.path("total").asLong()).isEqualTo(3);
            JsonNode ofSweep = page(alice, "sweep=" + sweepId + "&offset=" + offset + "&limit=500");
            assertThat(ofSweep.path("runs").size()).isZero();
            assertThat(ofSweep.path("total").asLong()).isEqualTo(3);
        }
        assertThat(page(alice, "state=QUEUED&offset=12").path("runs").size()).isZero();
        assertThat(page(alice, "mine=true&offset=8").path("runs").size()).isZero();
    }

    @Test
    void aBadOffsetIsATypedBadRequest() {
        for (String offset : List.of("-1", "ten", "1.5", "0x10", "2147483648", "99999999999999999999",
                Integer.toString(Integer.MAX_VALUE - 499))) {
            for (String query : List.of("", "state=QUEUED&", "state=CANCELLED&", "mine=true&", "sweep=" + sweepId + "&")) {
                Http.Answer answer = alice.get("/api/v1/runs?" + query + "offset=" + offset);
                assertThat(answer.status()).as(query + "offset=" + offset).isEqualTo(400);
                assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                        .startsWith("application/json"));
                assertThat(answer.code()).isEqualTo("BAD_REQUEST");
                assertThat(answer.message()).contains("offset").contains(offset);
                assertThat(answer.body()).doesNotContain("Exception");
            }
        }
        // Empty means the default, as for every query parameter.
        assertThat(page(alice, "offset=&limit=2").path("offset").asInt()).isZero();
    }

    @Test
    void queuedRunsArePagedInQueueOrderTheUrgentOneFirst() {
        List<String> queueOrder = new ArrayList<>();
        queueOrder.add(submitted.get(URGENT));
        for (int i = 0; i < submitted.size(); i++) {
            if (i != URGENT && !CANCELLED.contains(i)) {
                queueOrder.add(submitted.get(i));
            }
        }
        assertThat(pages(alice, "state=QUEUED&", 5, 12, List.of(5, 5, 2))).isEqualTo(queueOrder);
        // The queue's own view agrees.
        List<String> queue = new ArrayList<>();
        alice.get("/api/v1/queue").json().path("runs").forEach(r -> queue.add(r.path("id").asText()));
        assertThat(queue).isEqualTo(queueOrder);
    }

    @Test
    void runsOfOneStateOrOneOwnerArePagedNewestFirst() {
        List<String> cancelled = new ArrayList<>();
        List<String> alices = new ArrayList<>();
        List<String> bobs = new ArrayList<>();
        for (int i = submitted.size() - 1; i >= 0; i--) {
            if (CANCELLED.contains(i)) {
                cancelled.add(submitted.get(i));
            }
            (OWNERS.get(i).equals("alice") ? alices : bobs).add(submitted.get(i));
        }
        assertThat(pages(bob, "state=CANCELLED&", 2, 3, List.of(2, 1))).isEqualTo(cancelled);
        assertThat(pages(alice, "mine=true&", 3, 8, List.of(3, 3, 2))).isEqualTo(alices);
        assertThat(pages(bob, "mine=true&", 3, 7, List.of(3, 3, 1))).isEqualTo(bobs);
        assertThat(pages(alice, "owner=bob&", 4, 7, List.of(4, 3))).isEqualTo(bobs);
    }

    @Test
    void aSweepsRunsArePagedInTheSweepsOrder() {
        List<String> runIds = submitted.subList(SINGLE_RUNS, submitted.size());
        assertThat(runIds).containsExactly(sweepId + "-000", sweepId + "-001", sweepId + "-002");
        assertThat(pages(alice, "sweep=" + sweepId + "&", 2, 3, List.of(2, 1))).isEqualTo(runIds);
        assertThat(pages(bob, "sweep=" + sweepId + "&mine=true&", 1, 3, List.of(1, 1, 1))).isEqualTo(runIds);
        // Another owner's filter leaves each page of the sweep empty; the total is still the sweep's.
        assertThat(pages(alice, "sweep=" + sweepId + "&mine=true&", 2, 3, List.of(0, 0))).isEmpty();
    }

    @Test
    void aStateAndAnOwnerTogetherFilterTheOwnersPages() {
        // The owner's index is paged (total: all the owner's runs) and each page filtered by state,
        // so a page may hold fewer runs than the limit; read to the total, the pages hold each of
        // the owner's runs in that state once, newest first.
        List<String> alicesQueued = new ArrayList<>();
        List<String> alicesCancelled = new ArrayList<>();
        for (int i = submitted.size() - 1; i >= 0; i--) {
            if (OWNERS.get(i).equals("alice")) {
                (CANCELLED.contains(i) ? alicesCancelled : alicesQueued).add(submitted.get(i));
            }
        }
        // alice's runs newest first, c for cancelled: 11 9c 8 | 6 5 3 | 1c 0 in pages of 3.
        assertThat(pages(alice, "mine=true&state=QUEUED&", 3, 8, List.of(2, 3, 1))).isEqualTo(alicesQueued);
        assertThat(pages(alice, "mine=true&state=CANCELLED&", 3, 8, List.of(1, 0, 1))).isEqualTo(alicesCancelled);
        assertThat(pages(bob, "owner=alice&state=CANCELLED&", 3, 8, List.of(1, 0, 1))).isEqualTo(alicesCancelled);
    }

    /**
     * Reads a listing page by page ({@code limit} each, from offset 0 until the offset reaches the
     * total), checking each page's sizes, its total and its echoed offset and limit, that no run
     * is on two pages, and that the page after the last is empty; returns the runs in page order.
     */
    private static List<String> pages(Http http, String filter, int limit, long total, List<Integer> sizes) {
        List<String> all = new ArrayList<>();
        List<Integer> seenSizes = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        int offset = 0;
        for (; offset < total; offset += limit) {
            JsonNode page = page(http, filter + "offset=" + offset + "&limit=" + limit);
            assertThat(page.path("total").asLong()).as(filter + " total at offset " + offset).isEqualTo(total);
            assertThat(page.path("offset").asInt()).isEqualTo(offset);
            assertThat(page.path("limit").asInt()).isEqualTo(limit);
            List<String> ids = ids(page);
            seenSizes.add(ids.size());
            for (String id : ids) {
                assertThat(seen.add(id)).as(filter + " " + id + " on two pages").isTrue();
            }
            all.addAll(ids);
        }
        assertThat(seenSizes).as(filter + " page sizes").isEqualTo(sizes);
        JsonNode after = page(http, filter + "offset=" + offset + "&limit=" + limit);
        assertThat(after.path("runs").size()).as(filter + " the page after the last").isZero();
        assertThat(after.path("total").asLong()).isEqualTo(total);
        return all;
    }

    private static JsonNode page(Http http, String query) {
        Http.Answer answer = http.get("/api/v1/runs?" + query);
        assertThat(answer.status()).as(query + ": " + answer.body()).isEqualTo(200);
        return answer.json();
    }

    private static List<String> ids(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.path("runs").forEach(r -> ids.add(r.path("id").asText()));
        return ids;
    }

    private static List<String> reversed(List<String> list) {
        List<String> r = new ArrayList<>(list);
        Collections.reverse(r);
        return r;
    }
}
