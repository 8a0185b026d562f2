package io.rlscheduler.master.internal.auth;

import io.rlscheduler.protocol.RejectReason;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** The hellos a master refused since it started, by reason. Thread-safe and lock-free. */
public final class HelloRefusals {

    private final Map<RejectReason, LongAdder> counts = new EnumMap<>(RejectReason.class);

    public HelloRefusals() {
        for (RejectReason reason : RejectReason.values()) {
            if (reason != RejectReason.UNRECOGNIZED) {
                counts.put(reason, new LongAdder());
            }
        }
    }

    /** Counts one refusal. */
    public void count(RejectReason reason) {
        LongAdder n = counts.get(reason);
        if (n != null) {
            n.increment();
        }
    }

    /** Returns the refusals by reason: every reason present, zero where none; unmodifiable. */
    public Map<RejectReason, Long> snapshot() {
        Map<RejectReason, Long> out = new EnumMap<>(RejectReason.class);
        counts.forEach((reason, n) -> out.put(reason, n.sum()));
        return Collections.unmodifiableMap(out);
    }
}
