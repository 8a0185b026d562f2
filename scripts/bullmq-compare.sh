#!/usr/bin/env bash
# dispatch-throughput against BullMQ like for like (issue 22): one redis-server, started from the
# binary our benchmarks start (RedisServerCopy in the benchmarks jar), serves both; each pair runs
# BullMQ's no-op jobs (scripts/bullmq/dispatch.mjs) and our dispatch-throughput with the same task
# count, every record kept, the order swapped every other pair so that drift in the machine's load
# falls on both; FLUSHALL before every run so each starts from an empty Redis. Prints one row per
# pair and a last line of JSON with the median ratio ours/BullMQ (above 1: ours faster); the logs,
# our results and that line (bullmq-compare.json) go to bench-results/bullmq-compare/.
# See docs/benchmarks.md, "Against BullMQ (issue 22)".
#
# usage: scripts/bullmq-compare.sh [PAIRS]          PAIRS default 3
#
# Needs node (18 or later) and npm (runs `npm ci` in scripts/bullmq when its node_modules are
# missing), python3, and scheduler-bench/target/benchmarks.jar, which this script does not build:
#   ./mvnw -B -DskipTests package -pl scheduler-bench -am
# Environment:
#   BULLMQ_COMPARE_TASKS  tasks (and jobs) measured per run (default 50000)
#   BENCH_JAVA_OPTS       JVM options of our run, after "-Xms1g -Xmx2g" (a later -Xms or -Xmx wins)
#   BENCH_PARAMS          extra BenchMain options for our run, e.g. "-p dispatch-throughput.warmupRounds=4"
#   BULLMQ_OPTS           extra dispatch.mjs options, e.g. "--concurrency 128"
set -euo pipefail

cd "$(dirname "$0")/.."
PAIRS=${1:-3}
if ! [[ $PAIRS =~ ^[1-9][0-9]*$ ]]; then
    sed -n '2,20p' "$0" >&2
    exit 2
fi
TASKS=${BULLMQ_COMPARE_TASKS:-50000}
JAR=scheduler-bench/target/benchmarks.jar
OUT=bench-results/bullmq-compare
JAVA=${JAVA:-java}
read -r -a JAVA_OPTS <<< "-Xms1g -Xmx2g ${BENCH_JAVA_OPTS:-}"
read -r -a PARAMS <<< "${BENCH_PARAMS:-}"
read -r -a BULLMQ_EXTRA <<< "${BULLMQ_OPTS:-}"

if [[ ! -f $JAR ]] || ! unzip -l "$JAR" 'io/rlscheduler/bench/RedisServerCopy.class' > /dev/null 2>&1; then
    echo "bullmq-compare: $JAR is missing or older than this script; build it with" >&2
    echo "  ./mvnw -B -DskipTests package -pl scheduler-bench -am" >&2
    exit 2
fi
for tool in node npm python3; do
    command -v "$tool" > /dev/null || { echo "bullmq-compare: $tool is needed" >&2; exit 2; }
done
if [[ ! -f scripts/bullmq/node_modules/bullmq/package.json ]]; then
    echo "# installing BullMQ (npm ci in scripts/bullmq)"
    (cd scripts/bullmq && npm ci --no-audit --no-fund)
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bullmq-compare.XXXXXX")
REDIS_PID=
cleanup() {
    if [[ -n $REDIS_PID ]]; then
        kill "$REDIS_PID" 2> /dev/null || true
        wait "$REDIS_PID" 2> /dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The redis-server that dispatch-throughput starts by itself, with EmbeddedRedis's settings except
# persistence: AOF off, as dispatch-throughput switches it (its default aof=off); a server named by
# REDIS_URL is left as it is, so this one must start that way.
REDIS_VERSION=$("$JAVA" -cp "$JAR" io.rlscheduler.bench.RedisServerCopy "$WORK/redis-server")
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/data"
"$WORK/redis-server" --port "$PORT" --bind 127.0.0.1 --dir "$WORK/data" --appendonly no --save "" \
    --protected-mode no --maxmemory-policy noeviction --daemonize no > "$WORK/data/redis.log" 2>&1 &
REDIS_PID=$!

redis() { # one inline command; prints the first line of the reply
    local reply
    exec 9<> "/dev/tcp/127.0.0.1/$PORT" || return 1
    printf '%s\r\n' "$*" >&9
    IFS= read -r -t 10 reply <&9 || true
    exec 9>&-
    printf '%s\n' "${reply%$'\r'}"
}
for _ in $(seq 100); do
    [[ $(redis PING 2> /dev/null) == +PONG ]] && break
    sleep 0.1
done
[[ $(redis PING 2> /dev/null) == +PONG ]] || { echo "bullmq-compare: redis-server did not start:" >&2; cat "$WORK/data/redis.log" >&2; exit 1; }
export REDIS_URL="redis://127.0.0.1:$PORT"

rm -rf "$OUT"
mkdir -p "$OUT"
echo "# $(date '+%F %T'): $PAIRS pairs of $TASKS tasks; $REDIS_VERSION on port $PORT (AOF off); load average $(cut -d' ' -f1-3 /proc/loadavg)"

empty() {
    [[ $(redis FLUSHALL) == +OK ]] || { echo "bullmq-compare: FLUSHALL failed" >&2; exit 1; }
    [[ $(redis DBSIZE) == :0 ]] || { echo "bullmq-compare: Redis not empty after FLUSHALL" >&2; exit 1; }
}

run_bullmq() { # pair
    local log="$OUT/bullmq-$1.log"
    empty
    echo "# $(date +%T) pair $1: BullMQ (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    node scripts/bullmq/dispatch.mjs --port "$PORT" --tasks "$TASKS" --warmup 5000 "${BULLMQ_EXTRA[@]}" > "$log" 2>&1 \
        || { echo "bullmq-compare: BullMQ run of pair $1 failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
    grep '^{"name":"bullmq-dispatch"' "$log" | tail -1 > "$OUT/bullmq-$1.json"
}

run_ours() { # pair
    local log="$OUT/ours-$1.log"
    empty
    echo "# $(date +%T) pair $1: dispatch-throughput (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    "$JAVA" "${JAVA_OPTS[@]}" -cp "$JAR" io.rlscheduler.bench.BenchMain --out "$OUT/ours-$1" \
        -p "dispatch-throughput.tasks=$TASKS" "${PARAMS[@]}" dispatch-throughput > "$log" 2>&1 \
        || { echo "bullmq-compare: dispatch-throughput run of pair $1 failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
}

for ((i = 1; i <= PAIRS; i++)); do
    if (( i % 2 == 1 )); then
        run_bullmq "$i"; run_ours "$i"
    else
        run_ours "$i"; run_bullmq "$i"
    fi
done
empty

python3 - "$OUT" "$PAIRS" "$TASKS" "$REDIS_VERSION" <<'PY'
import json, os, statistics, sys
out, pairs, tasks, redis = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = []
for i in range(1, pairs + 1):
    with open(os.path.join(out, f"bullmq-{i}.json")) as f:
        bull = json.load(f)
    with open(os.path.join(out, f"ours-{i}", "dispatch-throughput.json")) as f:
        ours = json.load(f)
    rows.append((i, "BullMQ first" if i % 2 else "ours first", bull, ours))
print("| pair | order | BullMQ jobs/s | ours tasks/s | ours/BullMQ | load before (BullMQ; ours) |")
print("|---:|---|---:|---:|---:|---|")
for i, order, bull, ours in rows:
    load_ours = ours["params"].get("machine", {}).get("load_average_before", "")
    print(f"| {i} | {order} | {bull['jobs_per_s']:,.0f} | {ours['value']:,.0f} | {ours['value'] / bull['jobs_per_s']:.2f} |"
          f" {bull['load_average_before']}; {load_ours} |")
ratios = [ours["value"] / bull["jobs_per_s"] for _, _, bull, ours in rows]
summary = {
    "name": "bullmq-compare", "tasks": tasks, "pairs": pairs,
    "bullmq_jobs_per_s": [bull["jobs_per_s"] for _, _, bull, _ in rows],
    "ours_tasks_per_s": [ours["value"] for _, _, _, ours in rows],
    "ratios": [round(r, 3) for r in ratios],
    "median_ratio": round(statistics.median(ratios), 3),
    "median_bullmq_jobs_per_s": statistics.median(bull["jobs_per_s"] for _, _, bull, _ in rows),
    "median_ours_tasks_per_s": statistics.median(ours["value"] for _, _, _, ours in rows),
    "bullmq": rows[0][2]["bullmq"], "node": rows[0][2]["node"], "redis": redis,
    "bullmq_workers": rows[0][2]["workers"], "bullmq_concurrency": rows[0][2]["concurrency"],
    "ours_workers_x_slots": f"{rows[0][3]['params'].get('workers')} x {rows[0][3]['params'].get('slots')}",
}
line = json.dumps(summary)
with open(os.path.join(out, "bullmq-compare.json"), "w") as f:
    f.write(line + "\n")
print(line)
PY
echo "# $(date '+%F %T'): done; load average $(cut -d' ' -f1-3 /proc/loadavg); logs in $OUT/"
