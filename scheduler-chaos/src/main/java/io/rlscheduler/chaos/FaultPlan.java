package io.rlscheduler.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * When the faults of a chaos phase come and which kind each is, drawn from the run's seeded
 * random source before the phase starts: an action every 2 to 5 s, about 45% worker kills, 30%
 * freezes and 25% leader kills, and every kind at least once (a Redis restart exactly once, and
 * only when Redis may be restarted), those in the first 70% of the phase. Immutable.
 */
final class FaultPlan {

    /** A kind of fault. */
    enum Fault { KILL_WORKER, FREEZE_WORKER, KILL_LEADER, RESTART_REDIS }

    private final List<Long> atMillis;
    private final List<Fault> kinds;

    private FaultPlan(List<Long> atMillis, List<Fault> kinds) {
        this.atMillis = List.copyOf(atMillis);
        this.kinds = List.copyOf(kinds);
    }

    /** Draws the plan of a phase of length {@code phase}; {@code restartRedis}: whether Redis may be restarted. */
    static FaultPlan draw(Random rnd, Duration phase, boolean restartRedis) {
        long phaseMillis = phase.toMillis();
        List<Long> times = new ArrayList<>();
        for (long t = 2000 + rnd.nextInt(3001); t < phaseMillis - 1000; t += 2000 + rnd.nextInt(3001)) {
            times.add(t);
        }
        List<Fault> kinds = new ArrayList<>();
        for (int i = 0; i < times.size(); i++) {
            int r = rnd.nextInt(100);
            kinds.add(r < 45 ? Fault.KILL_WORKER : r < 75 ? Fault.FREEZE_WORKER : Fault.KILL_LEADER);
        }
        List<Fault> mandatory = new ArrayList<>(List.of(Fault.KILL_WORKER, Fault.FREEZE_WORKER, Fault.KILL_LEADER));
        if (restartRedis) {
            mandatory.add(Fault.RESTART_REDIS);
        }
        List<Integer> slots = new ArrayList<>();
        int early = Math.max(mandatory.size(), (int) (times.size() * 0.7));
        for (int i = 0; i < Math.min(early, times.size()); i++) {
            slots.add(i);
        }
        Collections.shuffle(slots, rnd);
        for (int i = 0; i < mandatory.size() && i < slots.size(); i++) {
            kinds.set(slots.get(i), mandatory.get(i));
        }
        return new FaultPlan(times, kinds);
    }

    /** Returns how many actions the plan holds. */
    int size() {
        return atMillis.size();
    }

    /** Returns when action {@code i} comes, in ms after the phase starts; non-decreasing in {@code i}. */
    long atMillis(int i) {
        return atMillis.get(i);
    }

    /** Returns the kind of action {@code i}. */
    Fault kind(int i) {
        return kinds.get(i);
    }

    /** Returns the kinds in order. */
    List<Fault> kinds() {
        return kinds;
    }
}
