#!/usr/bin/env bash
# Runs rl-scheduler's benchmarks and writes one bench-results/<name>.json per benchmark:
#   {"name", "unit", "value", "baseline": {"name", "value"}, "ratio", "params": {...}}
# then prints a table of them. See docs/benchmarks.md.
#
# usage: scripts/bench.sh [name...]       all benchmarks when no name is given
#
#   end-to-end (io.rlscheduler.bench.BenchMain):  dispatch-throughput dispatch-latency log-stream failover heartbeats
#                                                 checkpoint-directory checkpoint-s3 resume fair-share http
#     log-stream     one python task's lines/s into the master's log file and a live follower (python3 needed)
#     failover       worker JVM killed mid-task -> task RUNNING elsewhere, s, against the task lease
#     heartbeats     10,000 simulated workers on one master in its own JVM; needs ~11,000 open files per JVM
#     checkpoint-directory  a 1 GiB checkpoint's commit into the directory store, GiB/s, against cp -r
#     checkpoint-s3  the same into the S3 store (s3proxy in the JVM), against the AWS SDK's transfer manager
#     fair-share     a colleague's 5 tasks behind another owner's sweep of 2,000: their waits in task lengths; and
#                    dispatch throughput and latency with 8 owners and limits against one owner without
#     http           submissions/s through the HTTP API against the Java API (same concurrency), live log
#                    over SSE against the Java follower, 1,000 SSE followers of one run: the server's CPU
#     resume         worker JVM killed -> next attempt's script started elsewhere after restoring a 1 GiB
#                    checkpoint, s, against the same failover without one (python3 needed)
#   JMH micro-benchmarks, converted to the same shape:
#     codec          CodecBenchmark: our frame codec vs Netty's stock protobuf codec (heartbeat payload)
#     lease-scripts  LeaseScriptBenchmark: a one-task claim vs a plain SET round trip
#   related: scripts/bench-ab.sh (two jars, alternating pairs); scripts/bullmq-compare.sh
#            (dispatch-throughput against BullMQ on one redis-server, alternating pairs; node needed)
#
# Environment:
#   BENCH_PARAMS     extra BenchMain options, e.g. "-p dispatch-throughput.tasks=5000 -p dispatch-latency.duration=5"
#                    ("-p log-stream.lines=100000 -p failover.runs=2 -p heartbeats.workers=500
#                    -p heartbeats.duration=10" shortens the three slowest; "-p sizeMiB=256" the artifact ones;
#                    "-p tls=true" runs dispatch-throughput, dispatch-latency and log-stream over TLS)
#   BENCH_JMH_OPTS   JMH run settings (default "-f 1 -wi 2 -w 2s -i 3 -r 2s": shorter than the annotations'
#                    3 x 2 s warmup + 5 x 2 s measurement, to keep the whole run under 10 minutes on 2 cores)
#   BENCH_JAVA_OPTS  JVM options of BenchMain, after "-Xms1g -Xmx2g" (a later -Xms or -Xmx wins)
#   BENCH_REBUILD=1  rebuild the jar even if it exists
#   MVNW_OPTS        extra Maven options for the build, e.g. "-o"
#   REDIS_URL        use this Redis instead of starting redis-server (its settings are left alone)
set -euo pipefail

cd "$(dirname "$0")/.."
JAR=scheduler-bench/target/benchmarks.jar
OUT=bench-results
JAVA=${JAVA:-java}
read -r -a JAVA_OPTS <<< "-Xms1g -Xmx2g ${BENCH_JAVA_OPTS:-}"
read -r -a JMH_OPTS <<< "${BENCH_JMH_OPTS:--f 1 -wi 2 -w 2s -i 3 -r 2s}"
read -r -a PARAMS <<< "${BENCH_PARAMS:-}"
read -r -a MVN_EXTRA <<< "${MVNW_OPTS:-}"

if [[ ! -f "$JAR" || "${BENCH_REBUILD:-0}" == 1 ]]; then
    echo "# building $JAR"
    ./mvnw -q -B "${MVN_EXTRA[@]}" -DskipTests -pl scheduler-bench -am package
fi

main() {
    "$JAVA" "${JAVA_OPTS[@]}" -cp "$JAR" io.rlscheduler.bench.BenchMain --out "$OUT" "$@"
}

mapfile -t E2E < <(main --names)
JMH_NAMES=(codec lease-scripts)

if [[ $# -eq 0 ]]; then
    NAMES=("${E2E[@]}" "${JMH_NAMES[@]}")
else
    NAMES=("$@")
fi

e2e=()
jmh=()
for name in "${NAMES[@]}"; do
    if [[ " ${E2E[*]} " == *" $name "* ]]; then
        e2e+=("$name")
    elif [[ " ${JMH_NAMES[*]} " == *" $name "* ]]; then
        jmh+=("$name")
    else
        echo "bench.sh: unknown benchmark '$name'; known: ${E2E[*]} ${JMH_NAMES[*]}" >&2
        exit 2
    fi
done

mkdir -p "$OUT"
failed=()
began=$SECONDS

if [[ ${#e2e[@]} -gt 0 ]]; then
    main "${PARAMS[@]}" "${e2e[@]}" || failed+=("end-to-end")
fi

for name in "${jmh[@]}"; do
    case "$name" in
        codec) class=CodecBenchmark ;;
        lease-scripts) class=LeaseScriptBenchmark ;;
    esac
    echo "# ---- $name: JMH $class ${JMH_OPTS[*]}"
    report="$OUT/$name-jmh.json"
    if "$JAVA" -jar "$JAR" "$class" "${JMH_OPTS[@]}" -rf json -rff "$report" \
            && main --from-jmh "$name" "$report"; then
        :
    else
        failed+=("$name")
    fi
done

echo
echo "# all done in $((SECONDS - began)) s; results in $OUT/"
main --table "${NAMES[@]}" || true
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "bench.sh: failed: ${failed[*]}" >&2
    exit 1
fi
