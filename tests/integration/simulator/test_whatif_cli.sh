#!/usr/bin/env bash
# test_whatif_cli.sh -- `lotus-sim whatif` (docs/whatif.md): every usage error with its exit
# status and message, a job file error naming the file and JSON path, a run on the demo trace
# and its three files (censored replicas in the denominator), determinism by --seed, --out and
# --force, and Method II's refusal on a 3-hour trace. The last line is "N passed, M failed".
#
# Usage: test_whatif_cli.sh LOTUS_SIM SOURCE_DIR
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LOTUS_SIM SOURCE_DIR" >&2
    exit 2
fi
sim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
demo=$(cd "$2" && pwd)/tests/data/clusterdata-2011-2-demo

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

cd "$tmp"
cat >job.json <<'J'
{"name":"probe","priority":9,"sched_class":0,"tasks":[{"count":3,"cpu":0.02,"mem":0.02,"disk":0.001,"duration_s":600}]}
J
cat >bad.json <<'J'
{"priority":9,"tasks":[{"cpu":0.02,"mem":1.5,"disk":0,"duration_s":600}]}
J
base=(whatif --trace "$demo" --job job.json --replicas 6 -j 2)

# Usage errors: exit 2, the flag named.
usage() { # NAME PART ARGS...
    local name=$1 part=$2
    shift 2
    run "$@"
    check "$name: exit 2" [ "$rc" -eq 2 ]
    check "$name: says '$part'" contains "$err" "$part"
}
usage "no --at" "--at is required" whatif --trace "$demo" --job job.json
usage "no --job" "--job is required" whatif --trace "$demo" --at 10
usage "bad --at" "--at: 'soon'" "${base[@]}" --at soon
usage "bad --shrink" "--shrink: '0'" "${base[@]}" --at 10 --shrink 100,0
usage "repeated --shrink" "--shrink" "${base[@]}" --at 10 --shrink 90,90
usage "bad --start" "--start: 'some'" "${base[@]}" --at 10 --start some
usage "bad --replicas" "--replicas: 0" "${base[@]}" --at 10 --replicas 0
usage "bad -j" "-j: 0" "${base[@]}" --at 10 -j 0
usage "bad --preempt" "--preempt: 'all'" "${base[@]}" --at 10 --preempt all
usage "bad --policy" "unknown policy 'bestfit9'" "${base[@]}" --at 10 --policy bestfit9
usage "unknown option" "--replica" whatif --replica 3

# Input errors: exit 1, file and JSON path.
run whatif --trace "$demo" --job bad.json --at 10 --out o0
check "bad job: exit 1" [ "$rc" -eq 1 ]
check "bad job: file and path" contains "$err" "bad.json: \$.tasks[0].mem: must be a number > 0"
run "${base[@]}" --at day-random --out o0
check "day-random on 3 h: exit 1" [ "$rc" -eq 1 ]
check "day-random on 3 h: says why" contains "$err" "needs a trace of 2 whole days"
run "${base[@]}" --at 99999 --out o0
check "--at beyond the window" contains "$err" "after the trace's window"
check "no output after errors" [ ! -e o0 ]

# A run: Method I with two shrink levels.
run "${base[@]}" --at random --shrink 100,50 --resample-running --out o1
check "run: exit 0" [ "$rc" -eq 0 ]
check "run: table" contains "$out" "P(<=1h)"
check "replicas.csv rows" [ "$(wc -l <o1/replicas.csv)" -eq 13 ]
check "replicas.csv header" [ "$(head -1 o1/replicas.csv)" = "replica,seed,t_inj_s,shrink_pct,machines_kept,start_delay_s,censored,reason,queued_at_inj,running_at_inj,tasks_started" ]
check "cdf_start.csv header" [ "$(head -1 o1/cdf_start.csv)" = "shrink_pct,quantile,value" ]
check "summary.json" python3 -c '
import json, sys
j = json.load(open("o1/summary.json"))
assert j["command"] == "whatif" and len(j["levels"]) == 2 and len(j["replica_seeds"]) == 6
for l in j["levels"]:
    assert l["n"] == 6 and l["started"] + l["censored"] == 6
    assert abs(l["p_not_started_by_horizon"] - l["censored"] / 6) < 1e-12
'
# Same seed, same replicas; another seed, others.
run "${base[@]}" --at random --shrink 100,50 --resample-running --out o2
check "same seed: same replicas.csv" cmp -s o1/replicas.csv o2/replicas.csv
run "${base[@]}" --at random --shrink 100,50 --resample-running --out o3 --seed 2
check "other seed: other replicas.csv" bash -c '! cmp -s o1/replicas.csv o3/replicas.csv'
# Existing output: refused without --force, replaced with it.
run "${base[@]}" --at random --out o1
check "existing --out: exit 2" [ "$rc" -eq 2 ]
check "existing --out: --force named" contains "$err" "--force"
run "${base[@]}" --at 100 --out o1 --force
check "--force: exit 0" [ "$rc" -eq 0 ]
check "--force: replaced" bash -c '! cmp -s o1/replicas.csv o2/replicas.csv'
mkdir -p other && echo x >other/f
run "${base[@]}" --at 100 --out other --force
check "--force on a foreign dir: refused" [ "$rc" -eq 2 ]
# Censored replicas: a job that cannot start within 60 s; the CDF file has no row.
cat >wait.json <<'J'
{"priority":0,"tasks":[{"count":50,"cpu":0.5,"mem":0.5,"disk":0,"duration_s":600}]}
J
run whatif --trace "$demo" --job wait.json --replicas 3 --at random --horizon 60 --start all --out o4
check "censored: exit 0" [ "$rc" -eq 0 ]
check "censored: rows kept" [ "$(grep -c ',1,horizon,' o4/replicas.csv)" -eq 3 ]
check "censored: empty CDF" [ "$(wc -l <o4/cdf_start.csv)" -eq 1 ]
# No source of variance: the warning.
run "${base[@]}" --at 100 --out o5
check "all equal: warning" contains "$err" "every replica gave the same answer; no source of variance is on"

finish
