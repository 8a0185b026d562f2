#!/usr/bin/env bash
# A/B of end-to-end benchmarks: runs them from two benchmark jars alternately on this machine
# (A, B, A, B, ... with the order swapped every other pair, so drift in the machine's load falls
# on both), writes each run's results under bench-ab/<a|b>-<pair>/, then prints one row per run
# and the median ratio of B to A per benchmark, oriented so that above 1 means B is better
# (tasks/s and lines/s: B/A; latencies: A/B). See docs/benchmarks.md.
#
# usage: scripts/bench-ab.sh A.jar B.jar PAIRS name...
#   e.g. scripts/bench-ab.sh /tmp/old/benchmarks.jar scheduler-bench/target/benchmarks.jar 3 \
#            dispatch-throughput dispatch-latency log-stream
# Environment: BENCH_PARAMS and BENCH_JAVA_OPTS as for scripts/bench.sh; BENCH_A_PARAMS and
#   BENCH_B_PARAMS are added to A's and B's runs only (one jar as both, BENCH_B_PARAMS="-p tls=true":
#   TLS against plaintext).
set -euo pipefail

cd "$(dirname "$0")/.."
if [[ $# -lt 4 ]]; then
    sed -n '2,15p' "$0" >&2
    exit 2
fi
A=$1 B=$2 PAIRS=$3
shift 3
NAMES=("$@")
JAVA=${JAVA:-java}
read -r -a JAVA_OPTS <<< "-Xms1g -Xmx2g ${BENCH_JAVA_OPTS:-}"
read -r -a PARAMS <<< "${BENCH_PARAMS:-}"
read -r -a A_PARAMS <<< "${BENCH_A_PARAMS:-}"
read -r -a B_PARAMS <<< "${BENCH_B_PARAMS:-}"
OUT=bench-ab
rm -rf "$OUT"
mkdir -p "$OUT"

run() { # label jar pair
    local own
    if [[ $1 == a ]]; then own=("${A_PARAMS[@]}"); else own=("${B_PARAMS[@]}"); fi
    echo "# $(date +%T) run $1 pair $3 ($2 ${own[*]})"
    "$JAVA" "${JAVA_OPTS[@]}" -cp "$2" io.rlscheduler.bench.BenchMain --out "$OUT/$1-$3" "${PARAMS[@]}" "${own[@]}" "${NAMES[@]}" \
        > "$OUT/$1-$3.log" 2>&1 || { echo "bench-ab: run $1 pair $3 failed; see $OUT/$1-$3.log" >&2; exit 1; }
}

for ((i = 1; i <= PAIRS; i++)); do
    if (( i % 2 == 1 )); then
        run a "$A" "$i"; run b "$B" "$i"
    else
        run b "$B" "$i"; run a "$A" "$i"
    fi
done

python3 - "$OUT" "$PAIRS" "${NAMES[@]}" <<'PY'
import json, os, statistics, sys
out, pairs, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(label, i, name):
    with open(os.path.join(out, f"{label}-{i}", f"{name}.json")) as f:
        return json.load(f)
def master_us(r):
    groups = (r.get("params", {}).get("cpu") or {}).get("jvm_us_per_task_by_thread") or {}
    total = sum(v for k, v in groups.items() if "master" in k)
    return round(total, 1) if total else None
print("| benchmark | run | value | unit | JVM µs/task | Redis µs/task | master threads µs/task |")
print("|---|---|---:|---|---:|---:|---:|")
for name in names:
    ratios = []
    for i in range(1, pairs + 1):
        row = {}
        for label in ("a", "b"):
            r = load(label, i, name)
            row[label] = r
            cpu = r.get("params", {}).get("cpu") or {}
            print(f"| {name} | {label}{i} | {r['value']} | {r['unit']} | {cpu.get('jvm_us_per_task', '')} |"
                  f" {cpu.get('redis_us_per_task', '')} | {master_us(r) or ''} |")
        a, b = row["a"]["value"], row["b"]["value"]
        lower_is_better = row["a"]["unit"] in ("ms", "s", "us", "µs")
        ratios.append(a / b if lower_is_better else b / a)
    print(f"| {name} | median B vs A | {statistics.median(ratios):.3f} | (above 1: B better) | | | |")
PY
