#!/usr/bin/env bash
# Chaos run: Redis (AOF), two masters and three workers as separate processes (each worker its own
# run root, all one directory store), at least 40 short train.py tasks, and meanwhile random
# kill -9 / restarts of workers, a frozen worker (SIGSTOP/SIGCONT), the leader master killed, Redis
# killed and restarted. Then it checks from the task records, the checkpoints committed, the log
# files and the tasks' own marks that every task succeeded exactly once, none was lost or
# duplicated, no two attempts of a task ran at the same time, and every resumed attempt started
# from the newest checkpoint committed before the failure, its episode count going on from there.
#
# Last line: "chaos: N tasks, N succeeded exactly once, 0 lost, 0 duplicated, 0 overlapping,
# M resumed from another worker's checkpoint"; exit code 0 only then. Seeded: a failing run prints
# its seed; replay it with --seed N.
#
#   scripts/chaos.sh [--seed N] [--tasks N] [--duration-s N] [--budget-s N] [--workdir PATH]
#   scripts/chaos.sh --help
#
# Bounded: the whole run (build excluded) is stopped after 5 minutes. With REDIS_URL set it uses
# that server and does not restart it. The harness is the scheduler-chaos module (built here into
# scheduler-chaos/target/rl-scheduler-chaos.jar when that jar is missing); see ChaosChecks's
# javadoc for the exact checks.
set -euo pipefail

cd "$(dirname "$0")/.."
JAR=scheduler-chaos/target/rl-scheduler-chaos.jar
if [[ ! -f "$JAR" ]]; then
    ./mvnw -q -B -DskipTests -pl scheduler-chaos -am package
fi
# SIGTERM at 300 s lets the run stop every process it started (shutdown hook); SIGKILL 20 s later.
status=0
timeout --kill-after=20 300 java -jar "$JAR" "$@" || status=$?
if [[ $status -eq 124 ]]; then
    echo "chaos: stopped after 5 minutes (timeout)" >&2
fi
exit $status
