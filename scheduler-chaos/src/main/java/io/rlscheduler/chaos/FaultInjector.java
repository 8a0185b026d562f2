package io.rlscheduler.chaos;

import io.rlscheduler.testkit.TestRedis;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * Runs a {@link FaultPlan} on the cluster: at each planned time one of {@code kill -9} a worker
 * JVM and restart it (same worker id) 0.5 to 3 s later; freeze a worker ({@code SIGSTOP}) for
 * 3.5 to 6 s, longer than the task lease, then thaw it; {@code kill -9} the leader master and
 * restart it 1 to 3 s later (it comes back as a standby); kill Redis ({@code kill -9}) and
 * restart it 0.5 to 2.5 s later. At least one worker is always running and not frozen, and a
 * master is only killed while the other one is up; an action that would break that is skipped.
 * When the phase ends, what is still to be undone is undone at once. Used by the run's thread only.
 */
final class FaultInjector {

    private static final long TICK_MILLIS = 50;

    /** An action to take later: a restart or a thaw. */
    private record Timed(long atNanos, String what, Runnable action) {
    }

    private final ChaosCluster cluster;
    private final Random rnd;
    private final RunLog log;
    private final PriorityQueue<Timed> pending = new PriorityQueue<>(Comparator.comparingLong(Timed::atNanos));
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    /** {@code rnd}: the run's random source, which picks the victims and the delays. */
    FaultInjector(ChaosCluster cluster, Random rnd, RunLog log) {
        this.cluster = cluster;
        this.rnd = rnd;
        this.log = log;
    }

    /**
     * Runs the plan for {@code phase}, or until {@code deadline} (a {@link System#nanoTime()}),
     * watching the processes meanwhile; then undoes every pending fault.
     */
    void run(FaultPlan plan, Duration phase, long deadline) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + phase.toNanos();
        log.say("chaos: %d fault actions planned over %d s", plan.size(), phase.toSeconds());
        int next = 0;
        while (System.nanoTime() - end < 0 && System.nanoTime() - deadline < 0) {
            runDue();
            cluster.pollProcesses();
            if (next < plan.size() && System.nanoTime() - (start + plan.atMillis(next) * 1_000_000) >= 0) {
                inject(plan.kind(next));
                next++;
            }
            Thread.sleep(TICK_MILLIS);
        }
        log.say("chaos phase over: stopping faults; bringing back what is down");
        while (!pending.isEmpty()) {
            Timed t = pending.poll();
            log.say("  now: %s", t.what());
            t.action().run();
        }
    }

    /** Returns how often each kind of fault was injected, by description, in the order first injected. */
    Map<String, Integer> counts() {
        return counts;
    }

    private void runDue() {
        while (!pending.isEmpty() && System.nanoTime() - pending.peek().atNanos() >= 0) {
            pending.poll().action().run();
        }
    }

    private void inject(FaultPlan.Fault fault) {
        switch (fault) {
            case KILL_WORKER -> killWorker();
            case FREEZE_WORKER -> freezeWorker();
            case KILL_LEADER -> killLeader();
            case RESTART_REDIS -> restartRedis();
            default -> throw new IllegalStateException(fault.name());
        }
    }

    private void killWorker() {
        Optional<ClusterProcess> victim = pickWorker("kill -9 worker");
        if (victim.isEmpty()) {
            return;
        }
        ClusterProcess w = victim.get();
        long delay = 500 + rnd.nextInt(2501);
        log.say("kill -9 worker %s (pid %d, running %d task processes); restart in %.1f s", w.name(), w.jvm().pid(),
                w.jvm().descendants().size(), delay / 1000.0);
        w.kill();
        count("kill -9 worker");
        later(delay, "restart worker " + w.name(), () -> {
            log.say("restart worker %s", w.name());
            w.start();
        });
    }

    private void freezeWorker() {
        Optional<ClusterProcess> victim = pickWorker("freeze worker");
        if (victim.isEmpty()) {
            return;
        }
        ClusterProcess w = victim.get();
        long length = 3500 + rnd.nextInt(2501);
        log.say("freeze (SIGSTOP) worker %s (pid %d) for %.1f s", w.name(), w.jvm().pid(), length / 1000.0);
        w.freeze();
        count("freeze worker");
        later(length, "thaw worker " + w.name(), () -> {
            log.say("thaw (SIGCONT) worker %s", w.name());
            w.thaw();
        });
    }

    /** Picks a worker to stop, at random among those up and unfrozen, unless that would leave none running. */
    private Optional<ClusterProcess> pickWorker(String what) {
        List<ClusterProcess> up = cluster.upWorkers();
        if (up.size() < 2) {
            log.say("skip %s: only %d worker(s) up and unfrozen", what, up.size());
            return Optional.empty();
        }
        return Optional.of(up.get(rnd.nextInt(up.size())));
    }

    private void killLeader() {
        if (cluster.masters().stream().anyMatch(m -> m.state() != ClusterProcess.State.UP)) {
            log.say("skip kill leader: a master is not up yet");
            return;
        }
        Optional<ClusterProcess> leader = cluster.currentLeader();
        if (leader.isEmpty()) {
            log.say("skip kill leader: no master says it leads");
            return;
        }
        ClusterProcess m = leader.get();
        long delay = 1000 + rnd.nextInt(2001);
        log.say("kill -9 leader master %s (%s, pid %d); restart in %.1f s", m.name(), m.masterId(), m.jvm().pid(),
                delay / 1000.0);
        m.kill();
        count("kill -9 leader master");
        later(delay, "restart master " + m.name(), () -> {
            log.say("restart master %s on port %d", m.name(), m.port());
            m.start();
        });
    }

    private void restartRedis() {
        TestRedis redis = cluster.redis();
        long down = 500 + rnd.nextInt(2001);
        log.say("kill -9 redis-server (pid %d); restart in %.1f s", redis.pid(), down / 1000.0);
        redis.kill();
        count("kill -9 and restart redis");
        later(down, "restart redis", () -> {
            redis.restart();
            log.say("redis restarted from its AOF (pid %d)", redis.pid());
        });
    }

    private void later(long delayMillis, String what, Runnable action) {
        pending.add(new Timed(System.nanoTime() + delayMillis * 1_000_000, what, action));
    }

    private void count(String what) {
        counts.merge(what, 1, Integer::sum);
    }
}
