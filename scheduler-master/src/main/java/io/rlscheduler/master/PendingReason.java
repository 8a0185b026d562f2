package io.rlscheduler.master;

import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Why a task is still waiting in the queue, from {@link TaskHandle#whyPending()}: every reason that
 * applies ({@link #getReasons()}), the first of them the main one ({@link #getCode()}); judged from its
 * record, the registered workers, the tasks ahead of it and the leadership at the moment of the
 * call, by the rules a claim applies: the leader claims for the workers connected to it; a worker
 * fits a task when its labels include the task's selector and its free GPUs, CPU slots and memory
 * cover what the task asks for; a claim looks at the first {@code claimScanLimit} tasks of the
 * queue, in queue order, so tasks ahead that fit take the room first. An estimate: the leader
 * serves its workers in its own order, and everything may change a moment later. Immutable.
 */
public final class PendingReason {

    /** The kinds of reason, in the order they are checked. */
    public enum Code {
        /** The task is not queued (it runs, or ended): nothing holds it back. */
        NOT_QUEUED,
        /** No worker is live (IDLE or RUNNING by its leases): the task waits for one to register. */
        NO_LIVE_WORKER,
        /** No live worker has every label of the task's selector. */
        NO_WORKER_MATCHES_SELECTOR,
        /** Live workers match the selector, but none has as many GPUs, CPU slots or memory in all as the task asks for. */
        NO_WORKER_LARGE_ENOUGH,
        /**
         * It is parked, although live workers could run it: the counts of worker shapes in Redis
         * were out of date when a claim judged it (the key was edited or lost by hand). The next
         * registration (a restart) of one of those workers brings it back, or deleting the
         * {@code {ns}:shapes} key (the next claim counts them again).
         */
        PARKED,
        /**
         * Its owner is at one of its limits ({@code io.rlscheduler.core.OwnerLimits}): it holds as
         * many GPUs or runs as many tasks as it may, or the task asks for more GPUs than one task
         * of the owner may now. It waits for the owner's running tasks to end, or the limit to be raised.
         */
        OWNER_LIMIT,
        /**
         * A worker is reserved for it (it needs 2 or more GPUs and waited longer than the lab's
         * reserveAfter): that worker takes no new work that would use what it needs, and it starts
         * there once the work running on it has freed that.
         */
        RESERVED,
        /**
         * Workers that could run it are reserved for big tasks that waited long: they take only
         * work that leaves free what those tasks need, and it would not.
         */
        WORKER_RESERVED,
        /**
         * More of its owner's own tasks are ahead of it than a claim examines for a worker
         * ({@code claimScanLimit}): it waits for them to leave the queue.
         */
        BEHIND_IN_QUEUE,
        /** No master holds the leadership lease: nothing is dispatched until one does (a failover, or only standby-only masters). */
        NO_LEADER,
        /** The workers that could run it hold no connection to the leader (this master), which claims only for connected ones. */
        NOT_CONNECTED,
        /**
         * Workers large enough for it exist, but none has that much free now, or the tasks ahead of
         * it take what is free first: it waits for running tasks to end.
         */
        WAITING_FOR_CAPACITY,
        /** A worker has room for it now, after the tasks ahead of it: the leader's next dispatch round should assign it. */
        FITS_NOW
    }

    /** One reason, in words with its figures. Immutable. */
    public record Reason(Code code, String message) {
        @Override
        public String toString() {
            return code + ": " + message;
        }
    }

    private final String taskId;
    private final Code code;
    private final String message;
    private final long queuePosition;
    private final List<Reason> reasons;

    PendingReason(String taskId, Code code, String message, long queuePosition) {
        this(taskId, List.of(new Reason(code, message)), queuePosition);
    }

    PendingReason(String taskId, List<Reason> reasons, long queuePosition) {
        this.taskId = taskId;
        this.reasons = List.copyOf(reasons);
        this.code = reasons.get(0).code();
        this.message = reasons.get(0).message();
        this.queuePosition = queuePosition;
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }
    /** Returns the kind of the main reason: the first of {@link #getReasons()}. */
    public Code getCode() { return code; }
    /** Returns the main reason in words, with the figures behind it. */
    public String getMessage() { return message; }
    /**
     * Returns every reason that applies, the main one first: after the owner's limits and its place
     * in its own queue, the reservations, the leadership and connections, and last how the free
     * capacity stands (FITS_NOW only when nothing else holds it back). A task that no worker could
     * run, or that is parked or not queued, has that one reason.
     */
    public List<Reason> getReasons() { return reasons; }
    /** Returns how many tasks are ahead of it in the queue, or -1 when it is not queued. */
    public long getQueuePosition() { return queuePosition; }

    @Override
    public String toString() {
        return reasons.stream().map(Reason::toString).collect(Collectors.joining("; and "));
    }

    /**
     * What the judging master knows of dispatch: the leader's id ("" when nobody leads), whether
     * it is this master, and, if so, the workers connected to it ({@code workerId + "/" + session}).
     */
    record Dispatch(String leaderId, boolean self, java.util.Set<String> connected) {
    }

    /**
     * Where the task's owner stands in the sharing: its share (limits as they apply, held GPUs,
     * running tasks), every owner's, and how many of its own claimable tasks are ahead of it (-1
     * when it is not among them).
     */
    record Fair(io.rlscheduler.core.OwnerShare own, List<io.rlscheduler.core.OwnerShare> all, long ownerAhead,
                List<io.rlscheduler.core.Reservation> reservations, List<TaskRecord> reservedTasks) {
    }

    /**
     * Judges why {@code task} waits.
     *
     * @param task           its record
     * @param workers        every registered worker, with its state by the Redis clock
     * @param queuePosition  how many tasks are ahead of it in the queue; -1 when it is not there
     * @param claimScanLimit how many queued tasks a claim looks at
     * @param ahead          the queued tasks ahead of it, in queue order (read when it is within the scan limit)
     * @param dispatch       the leadership as this master knows it
     * @param parked         whether a claim parked it (no registered worker could run it)
     */
    static PendingReason judge(TaskRecord task, List<WorkerInfo> workers, long queuePosition, int claimScanLimit,
                               List<TaskRecord> ahead, Dispatch dispatch, boolean parked, Fair fair) {
        String parkedNote = parked ? "; it is parked: claims pass it over, so it holds nothing back, until a worker that"
                + " could run it registers" : "";
        String id = task.getTaskId();
        if (task.getState() != TaskState.QUEUED) {
            return new PendingReason(id, Code.NOT_QUEUED, "the task is " + task.getState() + ", not waiting in the queue", -1);
        }
        if (queuePosition < 0) {
            return new PendingReason(id, Code.NOT_QUEUED, "the task has just left the queue (claimed or cancelled a"
                    + " moment ago)", -1);
        }
        List<WorkerInfo> live = workers.stream()
                .filter(w -> w.getState() == WorkerState.IDLE || w.getState() == WorkerState.RUNNING).toList();
        if (live.isEmpty()) {
            return new PendingReason(id, Code.NO_LIVE_WORKER, workers.isEmpty() ? "no worker is registered"
                    : "no worker is live; registered: " + describe(workers, w -> w.getWorkerId() + " " + w.getState())
                    + parkedNote, queuePosition);
        }
        List<WorkerInfo> matching = live.stream().filter(w -> matches(task, w)).toList();
        if (matching.isEmpty()) {
            return new PendingReason(id, Code.NO_WORKER_MATCHES_SELECTOR, "no live worker has the labels "
                    + task.getSelector() + " it asks for; live workers' labels: "
                    + describe(live, w -> w.getWorkerId() + " " + w.getLabels()) + parkedNote, queuePosition);
        }
        String needs = needs(task);
        List<WorkerInfo> largeEnough = matching.stream().filter(w -> w.getGpuIds().size() >= task.getGpus()
                && w.getCpuSlots() >= task.getCpuSlots() && w.getMemoryBytes() >= task.getMemoryBytes()).toList();
        if (largeEnough.isEmpty()) {
            return new PendingReason(id, Code.NO_WORKER_LARGE_ENOUGH, "it needs " + needs + ", more than any live worker"
                    + (task.getSelector().isEmpty() ? "" : " with the labels " + task.getSelector()) + " has in all: "
                    + describe(matching, w -> w.getWorkerId() + " " + w.getGpuIds().size() + " GPUs, " + w.getCpuSlots()
                            + " CPU slots, " + w.getMemoryBytes() + " bytes") + parkedNote, queuePosition);
        }
        if (parked) {
            return new PendingReason(id, Code.PARKED, "it is parked as if no registered worker could run it, but "
                    + describe(largeEnough, WorkerInfo::getWorkerId) + " could: the worker shapes counted in Redis were out"
                    + " of date when a claim judged it (a worker registered by a process of an older version?); the next"
                    + " registration (a restart) of one of them brings it back, or DEL of the namespace's shapes key",
                    queuePosition);
        }
        List<Reason> reasons = new ArrayList<>();
        String limit = ownerLimit(task, fair.own());
        if (limit != null) {
            reasons.add(new Reason(Code.OWNER_LIMIT, limit));
        }
        if (fair.ownerAhead() >= claimScanLimit) {
            reasons.add(new Reason(Code.BEHIND_IN_QUEUE, fair.ownerAhead() + " of " + task.getOwner() + "'s own tasks"
                    + " are ahead of it, and a claim examines at most " + claimScanLimit + " tasks for a worker"
                    + " (claimScanLimit): it is considered once fewer are ahead. Those ahead that no live worker can"
                    + " run hold it back (see their own reasons); those that no registered worker could run do not:"
                    + " claims park them"));
        }
        // Reservations: the task's own, and those of the workers that could run it (they take only
        // what leaves free the reserved task's needs).
        java.util.Map<String, long[]> held = new java.util.HashMap<>();
        List<String> reservedFor = new ArrayList<>();
        for (int i = 0; i < fair.reservations().size(); i++) {
            io.rlscheduler.core.Reservation r = fair.reservations().get(i);
            TaskRecord t = fair.reservedTasks().get(i);
            if (r.getTaskId().equals(id)) {
                WorkerInfo w = live.stream().filter(x -> x.getWorkerId().equals(r.getWorkerId())).findFirst().orElse(null);
                reasons.add(new Reason(Code.RESERVED, r.getWorkerId() + " is reserved for it since " + clock(r.getSince())
                        + ": it starts there once " + task.getGpus() + " GPUs are free"
                        + (w == null ? "" : " (" + w.getFreeGpuIds().size() + " are now)")));
                continue;
            }
            if (t != null) {
                held.put(r.getWorkerId(), new long[] {t.getGpus(), t.getCpuSlots(), t.getMemoryBytes()});
                if (largeEnough.stream().anyMatch(w -> w.getWorkerId().equals(r.getWorkerId()))) {
                    reservedFor.add(r.getWorkerId() + " is reserved for task " + r.getTaskId() + " (" + r.getOwner() + ", "
                            + r.getGpus() + " GPUs) since " + clock(r.getSince()));
                }
            }
        }
        String order = fairOrder(task, fair);
        if (dispatch.leaderId() == null || dispatch.leaderId().isEmpty()) {
            reasons.add(new Reason(Code.NO_LEADER, "no master holds the leadership lease now: nothing is dispatched"
                    + " until one does"));
            return new PendingReason(id, reasons, queuePosition);
        }
        // The workers a claim serves: the leader's connected ones when this master leads (others are
        // not known here), and in queue order the tasks ahead take their room first.
        List<WorkerInfo> served = dispatch.self()
                ? live.stream().filter(w -> dispatch.connected().contains(w.getWorkerId() + "/" + w.getSessionId())).toList()
                : live;
        if (dispatch.self() && served.stream().noneMatch(largeEnough::contains)) {
            reasons.add(new Reason(Code.NOT_CONNECTED, "the workers that could run it (" + describe(largeEnough,
                    WorkerInfo::getWorkerId) + ") hold no connection to the leader, this master (" + dispatch.leaderId()
                    + "), which claims only for the workers connected to it"));
            return new PendingReason(id, reasons, queuePosition);
        }
        java.util.Map<WorkerInfo, long[]> free = new java.util.LinkedHashMap<>();
        boolean ownReservation = reasons.stream().anyMatch(r -> r.code() == Code.RESERVED);
        for (WorkerInfo w : served) {
            long[] left = {w.getFreeGpuIds().size(), w.getFreeCpuSlots(), w.getFreeMemoryBytes()};
            long[] hold = held.get(w.getWorkerId());
            if (hold != null) {
                // Only what is left beside the reserved task's needs may be taken.
                for (int d = 0; d < 3; d++) {
                    left[d] = Math.max(0, left[d] - hold[d]);
                }
            }
            free.put(w, left);
        }
        List<WorkerInfo> roomNow = fitting(task, free);
        if (!reservedFor.isEmpty() && roomNow.isEmpty() && !ownReservation) {
            reasons.add(new Reason(Code.WORKER_RESERVED, String.join("; ", reservedFor) + ": "
                    + (reservedFor.size() == 1 ? "it takes" : "they take") + " only work that leaves free what "
                    + (reservedFor.size() == 1 ? "that task needs" : "those tasks need")));
        }
        int takenAhead = 0;
        for (TaskRecord before : ahead) {
            if (!servedBefore(before, task, fair)) {
                continue;
            }
            List<WorkerInfo> fit = fitting(before, free);
            if (!fit.isEmpty()) {
                long[] left = free.get(fit.get(0));
                left[0] -= before.getGpus();
                left[1] -= before.getCpuSlots();
                left[2] -= before.getMemoryBytes();
                takenAhead++;
            }
        }
        List<WorkerInfo> room = fitting(task, free);
        if (room.isEmpty()) {
            String now = describe(largeEnough.stream().filter(free::containsKey).toList(), w -> w.getWorkerId() + " "
                    + w.getFreeGpuIds().size() + " GPUs, " + w.getFreeCpuSlots() + " CPU slots, " + w.getFreeMemoryBytes()
                    + " bytes free");
            reasons.add(new Reason(Code.WAITING_FOR_CAPACITY, (roomNow.isEmpty()
                    ? "it needs " + needs + "; the workers large enough for it have less free now: " + now
                    : "it needs " + needs + "; " + describe(roomNow, WorkerInfo::getWorkerId) + " ha" + (roomNow.size() == 1
                            ? "s" : "ve") + " that much free, but the " + takenAhead + " task" + (takenAhead == 1 ? "" : "s")
                            + " ahead of it that fit take the room first: " + now) + order));
            return new PendingReason(id, reasons, queuePosition);
        }
        if (!reasons.isEmpty()) {
            return new PendingReason(id, reasons, queuePosition);
        }
        String who = describe(room, WorkerInfo::getWorkerId) + " ha" + (room.size() == 1 ? "s" : "ve") + " room for it now ("
                + needs + "), after the " + queuePosition + " task" + (queuePosition == 1 ? "" : "s") + " ahead of it";
        return new PendingReason(id, Code.FITS_NOW, (dispatch.self()
                ? who + ": this master, the leader, should assign it at its next dispatch round"
                : who + ": the leader, " + dispatch.leaderId() + ", should assign it at its next dispatch round, if "
                        + (room.size() == 1 ? "that worker is" : "they are") + " connected to it") + order, queuePosition);
    }

    /** A time of day as a user reads it in the lab: HH:mm:ss UTC. */
    private static String clock(java.time.Instant at) {
        return java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'").withZone(java.time.ZoneOffset.UTC).format(at);
    }

    /** The owner limit that holds the task back, in words with its figures; null when none does. */
    private static String ownerLimit(TaskRecord task, io.rlscheduler.core.OwnerShare own) {
        io.rlscheduler.core.OwnerLimits l = own.getLimits();
        String owner = task.getOwner();
        if (l.getMaxGpusPerTask().isPresent() && task.getGpus() > l.getMaxGpusPerTask().getAsInt()) {
            return "it asks for " + task.getGpus() + " GPUs and " + owner + " may now ask for at most "
                    + l.getMaxGpusPerTask().getAsInt() + " per task (max_gpus_per_task, lowered after it was submitted):"
                    + " it waits until the limit is raised, or cancel it";
        }
        if (l.getMaxRunning().isPresent() && own.getRunning() >= l.getMaxRunning().getAsInt()) {
            return owner + " runs " + own.getRunning() + " of " + "its "
                    + l.getMaxRunning().getAsInt() + " tasks (max_running): it waits for one of them to end";
        }
        if (task.getGpus() > 0 && l.getMaxGpus().isPresent() && own.getHeldGpus() + task.getGpus() > l.getMaxGpus().getAsInt()) {
            return owner + " holds " + own.getHeldGpus() + " of its " + l.getMaxGpus().getAsInt() + " GPUs (max_gpus) and"
                    + " this task needs " + task.getGpus() + ": it waits for " + owner + "'s running tasks to free "
                    + (own.getHeldGpus() + task.getGpus() - l.getMaxGpus().getAsInt()) + " more";
        }
        return null;
    }

    /** Whether a claim serves {@code other} before {@code task}: higher priority, or the same and an owner ahead in the fair order, or the same owner's earlier task. */
    private static boolean servedBefore(TaskRecord other, TaskRecord task, Fair fair) {
        if (other.getPriority() != task.getPriority()) {
            return other.getPriority() > task.getPriority();
        }
        if (other.getOwner().equals(task.getOwner())) {
            return other.getSubmitSequence() < task.getSubmitSequence();
        }
        return fair.all().stream().filter(s -> s.getOwner().equals(other.getOwner())).findFirst()
                .map(s -> aheadOf(s, fair.own())).orElse(false);
    }

    private static boolean aheadOf(io.rlscheduler.core.OwnerShare s, io.rlscheduler.core.OwnerShare own) {
        int c = Double.compare(s.getUsagePerShare(), own.getUsagePerShare());
        return c < 0 || (c == 0 && s.getOwner().compareTo(own.getOwner()) < 0);
    }

    /** The owners with queued tasks that claims serve before the task's owner, with their usage, as a sentence; "" when none. */
    private static String fairOrder(TaskRecord task, Fair fair) {
        List<io.rlscheduler.core.OwnerShare> ahead = fair.all().stream()
                .filter(s -> s.getQueued() > 0 && !s.getOwner().equals(task.getOwner()) && aheadOf(s, fair.own()))
                .sorted(java.util.Comparator.comparingDouble(io.rlscheduler.core.OwnerShare::getUsagePerShare))
                .toList();
        if (ahead.isEmpty()) {
            return "";
        }
        List<String> named = new ArrayList<>();
        for (int i = 0; i < Math.min(5, ahead.size()); i++) {
            named.add(ahead.get(i).getOwner() + " " + hours(ahead.get(i).getUsage()) + " slot-h"
                    + (ahead.get(i).getWeight() == 1 ? "" : " at weight " + ahead.get(i).getWeight()));
        }
        return "; " + ahead.size() + " owner" + (ahead.size() == 1 ? " with less recent usage per share is" : "s with less"
                + " recent usage per share are") + " ahead of " + task.getOwner() + " (" + hours(fair.own().getUsage())
                + " slot-h" + (fair.own().getWeight() == 1 ? "" : " at weight " + fair.own().getWeight()) + "): "
                + String.join(", ", named) + (ahead.size() > 5 ? ", and " + (ahead.size() - 5) + " more" : "");
    }

    private static String hours(double slotSeconds) {
        return String.format(java.util.Locale.ROOT, "%.1f", slotSeconds / 3600);
    }

    private static boolean matches(TaskRecord task, WorkerInfo w) {
        return task.getSelector().entrySet().stream().allMatch(e -> e.getValue().equals(w.getLabels().get(e.getKey())));
    }

    /** The workers, in order, whose free capacity left ({GPUs, CPU slots, bytes}) covers the task and whose labels match. */
    private static List<WorkerInfo> fitting(TaskRecord task, java.util.Map<WorkerInfo, long[]> free) {
        List<WorkerInfo> fit = new ArrayList<>();
        free.forEach((w, left) -> {
            if (matches(task, w) && left[0] >= task.getGpus() && left[1] >= task.getCpuSlots()
                    && left[2] >= task.getMemoryBytes()) {
                fit.add(w);
            }
        });
        return fit;
    }

    private static String needs(TaskRecord task) {
        return task.getGpus() + " GPUs, " + task.getCpuSlots() + " CPU slots, " + task.getMemoryBytes() + " bytes";
    }

    /** Lists up to 10 workers, then how many more. */
    private static String describe(List<WorkerInfo> workers, java.util.function.Function<WorkerInfo, String> each) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < Math.min(10, workers.size()); i++) {
            parts.add(each.apply(workers.get(i)));
        }
        String listed = parts.stream().collect(Collectors.joining("; "));
        return workers.size() > 10 ? listed + "; and " + (workers.size() - 10) + " more" : listed;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PendingReason p && p.taskId.equals(taskId) && p.reasons.equals(reasons)
                && p.queuePosition == queuePosition;
    }

    @Override
    public int hashCode() {
        return Objects.hash(taskId, reasons, queuePosition);
    }
}
