#!/usr/bin/env bash
# test_slots_cli.sh -- end-to-end checks of `lotus-sim slots`: a short run of every policy
# in text and --json mode, the JSON's own consistency (completed + dropped = tasks, classes
# summing to completed), determinism by --seed, queue orders (--order) as a sweep dimension,
# and command-line errors with exit status 2.
#
# Usage: test_slots_cli.sh LOTUS_SIM DEMO_TRACE_DIR
# Every run must also be free of sanitizer reports, so the ASan build can run this script.
# The last line is "N passed, M failed"; the exit status is 1 if any check failed.
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LOTUS_SIM DEMO_TRACE_DIR" >&2
    exit 2
fi
sim=$1
demo=$2

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

run slots --help
check "--help exits 0" [ "$rc" -eq 0 ]
check "--help names the workloads" contains "$out" "w-d, w-e, w-d_l, w-e_l (synthetic"
check "--help names the semi-synthetic workloads" contains "$out" "w-b, w-c,"

for policy in priority fcfs wasp hybrid; do
    run slots --workload w-e --hours 2 --policy "$policy" --memory lsf
    check "$policy: exit 0" [ "$rc" -eq 0 ]
    check "$policy: table" contains "$out" "completed"
    run slots --workload w-e --hours 2 --policy "$policy" --memory lsf --json
    check "$policy --json: exit 0" [ "$rc" -eq 0 ]
    check "$policy --json: one object" contains "$out" '"completed":'
    # the JSON's own consistency needs python3 (not in the Debian packages lotus installs)
    command -v python3 >/dev/null 2>&1 || continue
    check "$policy --json: consistent" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["completed"] + j["dropped"] == j["tasks"] > 1000, j
assert sum(c["completed"] for c in j["classes"].values()) == j["completed"]
assert j["ne"] >= j["ne_priority"] >= 0 and j["energy_kwh"] > 0
if j["policy"] == "fcfs": assert j["ne_priority"] == 0
' "$out"
done

run slots --workload w-d --hours 3 --evict rnd2 --seed 7 --json
first=$out
run slots --workload w-d --hours 3 --evict rnd2 --seed 7 --json
check "same seed, same metrics" [ "$(echo "$first" | sed 's/"wall_s":[^,}]*//')" = \
    "$(echo "$out" | sed 's/"wall_s":[^,}]*//')" ]
run slots --workload w-d --hours 3 --evict rnd2 --seed 8 --json
check "another seed, another workload" [ "$first" != "$out" ]

run slots --workload w-d --hours 2 --out "$tmp/o/run" --json
check "--out: exit 0" [ "$rc" -eq 0 ]
check "--out: summary.json" [ -s "$tmp/o/run/summary.json" ]
check "--out: tasks.csv header" contains "$(head -1 "$tmp/o/run/tasks.csv")" "id,priority,arrival_s"
tasks=$(echo "$out" | sed 's/.*"tasks":\([0-9]*\).*/\1/')
check "--out: a row per task" [ "$(($(wc -l <"$tmp/o/run/tasks.csv") - 1))" -eq "$tasks" ]
check "--out: no temporary file left" [ -z "$(find "$tmp/o" -name '*.tmp')" ]
check "--out: report.html" contains "$(cat "$tmp/o/run/report.html")" "lotus-sim slots report"
check "--out: no report temporary directory left" [ -z "$(find "$tmp/o" -name '.report-*')" ]
if command -v gnuplot >/dev/null 2>&1; then
    # four plots, each drawn or noted as without data (no eviction here: no eviction plot)
    check "--out: the report's plots" [ "$(grep -c '<svg' "$tmp/o/run/report.html")" -eq 3 ]
    check "--out: the eviction plot's note" contains "$(cat "$tmp/o/run/report.html")" 'no run has data'
else
    check "--out: the report says gnuplot is missing" contains "$err" "has no plots"
fi

# A sweep: every combination is one run, side by side; HYBRID with 0 sticky slots is WASP.
run slots --workload w-e --hours 2 --policy wasp,hybrid --sticky 0,200 --memory lsf \
    --out "$tmp/sweep"
check "sweep: exit 0" [ "$rc" -eq 0 ]
check "sweep: side by side" contains "$(head -2 <<<"$out")" "wasp      hybrid-s0    hybrid-s200"
check "sweep: a directory per run" [ -s "$tmp/sweep/wasp/summary.json" ] && \
    [ -s "$tmp/sweep/hybrid-s0/tasks.csv" ] && [ -s "$tmp/sweep/hybrid-s200/tasks.csv" ]
check "sweep: one report" contains "$(cat "$tmp/sweep/report.html")" "hybrid-s200"
check "sweep: hybrid-s0 equals wasp" cmp -s "$tmp/sweep/wasp/tasks.csv" "$tmp/sweep/hybrid-s0/tasks.csv"
differ() { ! cmp -s "$1" "$2"; }
check "sweep: hybrid-s200 differs" differ "$tmp/sweep/wasp/tasks.csv" "$tmp/sweep/hybrid-s200/tasks.csv"
check "sweep: the run named in its summary" contains "$(cat "$tmp/sweep/hybrid-s200/summary.json")" '"run": "hybrid-s200"'
check "sweep: the sticky pool in its summary" contains "$(cat "$tmp/sweep/hybrid-s200/summary.json")" '"sticky": 200'
run slots --workload w-e --hours 1 --evict mrs,lrs --json
check "sweep --json: a line per run" [ "$(wc -l <<<"$out")" -eq 2 ]
check "sweep --json: named by eviction policy" contains "$out" '"run":"priority-lrs"'
check "no progress bar off a terminal" [ -z "$(tr -d '\n' <<<"$err")" ]
if command -v script >/dev/null 2>&1; then # util-linux: a terminal for the progress bar
    bar=$(script -qec "'$sim' slots --workload w-e --hours 15 --policy wasp,hybrid" /dev/null 2>&1 | tr '\r' '\n')
    check "progress bar on a terminal" contains "$bar" "run 2/2 hybrid | sim "
    bar=$(script -qec "'$sim' slots --workload w-e --hours 15 --policy wasp,hybrid --quiet" /dev/null 2>&1 | tr '\r' '\n')
    check "--quiet: no progress bar" [ "$(grep -c 'run 2/2' <<<"$bar")" -eq 0 ]
fi
: >"$tmp/file"
run slots --workload w-d --hours 1 --out "$tmp/file/x"
check "--out under a file: exit 1" [ "$rc" -eq 1 ]
check "--out under a file: says so" contains "$err" "cannot create directory"

# W-A from a hand-made task_events part: (1,0) submitted before the trace, (2,0) runs 20..120 s
# at cpu 0.1 (demand 10), (3,0) never finishes, (4,0) is evicted and finishes 80..90 s at 0.5
# (demand 5, from its last SCHEDULE).
mkdir -p "$tmp/wa/task_events"
h=70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=
cat >"$tmp/wa/task_events/part-00000-of-00001.csv" <<EOT
0,,1,0,,0,$h,0,0,0.1,0.1,0,
10000000,,2,0,,0,$h,0,4,0.1,0.05,0,
20000000,,2,0,5,1,$h,0,4,0.1,0.05,0,
30000000,,3,0,,0,$h,0,9,0.2,0.1,0,
40000000,,3,0,6,1,$h,0,9,0.2,0.1,0,
50000000,,4,0,,0,$h,0,0,0.5,0.2,0,
60000000,,4,0,7,1,$h,0,0,0.5,0.2,0,
70000000,,4,0,7,2,$h,0,0,0.5,0.2,0,
80000000,,4,0,8,1,$h,0,0,0.5,0.2,0,
90000000,,4,0,8,4,$h,0,0,0.5,0.2,0,
120000000,,2,0,5,4,$h,0,4,0.1,0.05,0,
EOT
run slots --trace "$tmp/wa" --json --out "$tmp/wa-out"
check "w-a hand trace: exit 0" [ "$rc" -eq 0 ]
check "w-a hand trace: the counts" contains "$err" "2 kept (1 submitted before the trace, 1 unfinished"
check "w-a hand trace: two tasks" contains "$out" '"tasks":2,'
check "w-a hand trace: task 0" contains "$(sed -n 2p "$tmp/wa-out/tasks.csv")" "0,4,10.000000,10,0.05,"
check "w-a hand trace: task 1" contains "$(sed -n 3p "$tmp/wa-out/tasks.csv")" "1,0,50.000000,5,0.2,"

run slots --trace "$demo" --policy hybrid --memory lsf --json
check "w-a demo: exit 0" [ "$rc" -eq 0 ]
check "w-a demo: named w-a" contains "$out" '"workload":"w-a"'
check "w-a demo: thousands of tasks" contains "$err" "kept"
run slots --trace "$demo" --sample 10 --json
check "w-a demo, 10 %: exit 0" [ "$rc" -eq 0 ]
check "w-a demo, 10 %: sampled out" contains "$err" "sampled out"
# W-C: W-E's arrivals, each task drawn whole from the hand trace's two W-A tasks
run slots --workload w-c --trace "$tmp/wa" --hours 1 --json --out "$tmp/wc-out"
check "w-c from the hand trace: exit 0" [ "$rc" -eq 0 ]
check "w-c from the hand trace: named w-c" contains "$out" '"workload":"w-c"'
check "w-c from the hand trace: the pool" contains "$err" "W-A (the pool) from"
check "w-c: only the pool's two tasks" [ "$(tail -n +2 "$tmp/wc-out/tasks.csv" | cut -d, -f2,4,5 | sort -u | tr '\n' ' ')" = "0,5,0.2 4,10,0.05 " ]
check "w-c: W-E's arrival instants" [ "$(tail -n +2 "$tmp/wc-out/tasks.csv" | cut -d, -f3 | tr '\n' ' ')" = "$("$sim" slots --workload w-e --hours 1 --out "$tmp/we-out" >/dev/null 2>&1 && tail -n +2 "$tmp/we-out/tasks.csv" | cut -d, -f3 | tr '\n' ' ')" ]
run slots --workload w-b_l --trace "$demo" --hours 2 --sample 20 --json
check "w-b_l from the demo: exit 0" [ "$rc" -eq 0 ]
check "w-b_l from the demo: named" contains "$out" '"workload":"w-b_l"'
run slots --trace "$tmp/none"
check "missing trace: exit 1" [ "$rc" -eq 1 ]
check "missing trace: names it" contains "$err" "$tmp/none"

# Queue orders (--order): a sweep dimension, named only when not priority; fcfs and largest
# are first arrival (the default's outcomes), sjf changes them on W-E (tasks wait there).
run slots --workload w-e --hours 2 --order priority,sjf,fcfs,largest --out "$tmp/ord" --quiet
check "--order sweep: exit 0 ($err)" [ "$rc" -eq 0 ]
check "--order sweep: named by order" contains "$(head -2 <<<"$out")" \
    "priority   priority-sjf  priority-fcfs priority-largest"
check "--order sweep: a directory per run" [ -s "$tmp/ord/priority/tasks.csv" ] && \
    [ -s "$tmp/ord/priority-sjf/tasks.csv" ] && [ -s "$tmp/ord/priority-largest/tasks.csv" ]
check "--order: the order in summary.json" contains "$(cat "$tmp/ord/priority-sjf/summary.json")" '"order": "sjf"'
check "--order: no order in the default's summary.json" \
    [ "$(grep -c '"order"' "$tmp/ord/priority/summary.json")" -eq 0 ]
check "--order fcfs equals priority" cmp -s "$tmp/ord/priority/tasks.csv" "$tmp/ord/priority-fcfs/tasks.csv"
check "--order largest equals priority" cmp -s "$tmp/ord/priority/tasks.csv" "$tmp/ord/priority-largest/tasks.csv"
check "--order sjf differs" differ "$tmp/ord/priority/tasks.csv" "$tmp/ord/priority-sjf/tasks.csv"
check "--order largest: warns that all tie" contains "$err" \
    "warning: --order largest: every task takes one slot (size 1), so all tie"
run slots --workload w-e --hours 2 --order sjf --out "$tmp/ord1" --quiet
check "--order sjf alone: exit 0" [ "$rc" -eq 0 ]
check "--order sjf alone: same outcomes as in the sweep" cmp -s "$tmp/ord1/tasks.csv" "$tmp/ord/priority-sjf/tasks.csv"
check "--order sjf alone: the table says the order" contains "$(head -1 <<<"$out")" "policy priority, order sjf,"
run slots --workload w-e --hours 2 --policy fcfs --order sjf,composite:0,1,0 --reprioritise 30 --json --quiet
check "--policy fcfs --order: exit 0" [ "$rc" -eq 0 ]
check "--policy fcfs --order: a composite is one item" contains "$out" '"run":"fcfs-composite_0_1_0"'
check "--policy fcfs --order: the composite's name" contains "$out" '"order":"composite:0,1,0","reprioritise_s":30'
check "--reprioritise with a time-varying order: no warning" [ -z "$err" ]
run slots --workload w-e --hours 1 --order sjf --reprioritise 60 --json --quiet
check "--reprioritise without a time-varying order: runs" [ "$rc" -eq 0 ]
check "--reprioritise without a time-varying order: warns" contains "$err" \
    "warning: --reprioritise does not apply to these orders"
run slots --workload w-e --hours 1 --order sjf,ljf --evict mrs,lrs --json --quiet
check "--order x --evict: four runs" [ "$(wc -l <<<"$out")" -eq 4 ]
check "--order x --evict: named" contains "$out" '"run":"priority-lrs-ljf"'

bad() { # bad EXPECTED-TEXT ARGS...: exit 2 and the message on stderr
    local want=$1
    shift
    run slots "$@"
    check "slots $*: exit 2" [ "$rc" -eq 2 ]
    check "slots $*: says '$want'" contains "$err" "$want"
}
bad "give --workload NAME, --trace DIR (W-A), or both for w-b and w-c"
bad "--workload w-d is synthetic" --workload w-d --trace "$demo"
bad "--workload w-c draws its tasks from W-A's: give --trace DIR" --workload w-c
bad "--sample 10: a percentage 1..100, with --trace only" --workload w-d --sample 10
bad "--sample 0" --trace "$demo" --sample 0
bad "unknown workload 'w-x'" --workload w-x
bad "unknown option '--frob'" --workload w-d --frob
bad "unknown slot policy 'lifo' (known: priority, fcfs, wasp, hybrid)" --workload w-d --policy lifo
bad "unknown eviction policy 'foo' (known: mrs, lrs, rnd" --workload w-d --evict foo
bad "threshold must be >= 1" --workload w-d --evict mrs0
bad "unknown memory model 'some' (known: unlimited, lsf, lpf)" --workload w-d --memory some
bad "the threshold must be a whole number" --workload w-d --evict rnd5x
bad "--slots 'sc5'" --workload w-d --slots sc5
bad "--servers 'big'" --workload w-d --servers big
bad "--order sla-reward: the slot simulator's tasks carry no SLA" --workload w-d --order sjf,sla-reward
bad "--sticky applies to --policy hybrid only" --workload w-d --sticky 5
bad "the cluster has 3072 slots" --workload w-d --policy hybrid --sticky 5000
bad "--hours 0" --workload w-d --hours 0
bad "--policy 'wasp,,hybrid': an empty item" --workload w-d --policy wasp,,hybrid
bad "'wasp' is given twice" --workload w-d --policy wasp,wasp
bad "invalid value 'x' for --sticky" --workload w-d --policy hybrid --sticky 200,x
bad "missing value for --seed" --workload w-d --seed

bad "--policy 'priority,': an empty item" --workload w-d --policy priority,
bad "did you mean --policy?" --workload w-d --polcy wasp
bad "--hours: '90m' is not a whole number of hours" --workload w-d --hours 90m
bad "--hours: '2x' is not a duration" --workload w-d --hours 2x
bad "--order: unknown queue order 'lifo' (known: fcfs, sjf, ljf, largest, smallest, composite:A,B,G, sla-reward, sla-deadline, sla-slope[:H]); or priority" \
    --workload w-d --order sjf,lifo
bad "--order: composite order 'composite:1,2' needs three finite numbers" --workload w-d --order composite:1,2
bad "--order 'sjf,sjf': 'sjf' is given twice" --workload w-d --order sjf,sjf
bad "--order 'sjf,': an empty item" --workload w-d --order sjf,
bad "--reprioritise: 'x' is not a duration" --workload w-d --order composite:0,1,0 --reprioritise x

# --help and -h: exit 0, defaults and an example.
for h in --help -h; do
    run slots $h
    check "slots $h exits 0 (got $rc)" [ "$rc" -eq 0 ]
    check "slots $h shows a default" contains "$out" "(default 15)"
    check "slots $h shows an example" contains "$out" "example:"
done

# Durations: --hours 2h is --hours 2.
run slots --workload w-d --hours 2h --json --quiet
a=$(printf '%s' "$out" | sed 's/"wall_s":[^,}]*//')
run slots --workload w-d --hours 2 --json --quiet
b=$(printf '%s' "$out" | sed 's/"wall_s":[^,}]*//')
check "--hours 2h is --hours 2" [ "$a" = "$b" ]

# Not applicable: --hours with --trace alone.
run slots --trace "$demo" --sample 5 --hours 3 --json --quiet
check "--hours with --trace: runs (got $rc)" [ "$rc" -eq 0 ]
check "--hours with --trace: warns ($err)" contains "$err" "warning: --hours does not apply"

# --out: an existing result is refused without --force, replaced with it.
od=$tmp/slots-out
run slots --workload w-d --hours 1 --out "$od" --quiet
check "--out first run (got $rc: $err)" [ "$rc" -eq 0 ]
run slots --workload w-d --hours 1 --out "$od" --quiet
check "--out again: refused (got $rc)" [ "$rc" -eq 1 ]
check "--out again: names the file ($err)" contains "$err" "'$od/summary.json' and 2 more hold earlier results"
run slots --workload w-d --hours 1 --out "$od" --quiet --force
check "--out --force: replaced (got $rc: $err)" [ "$rc" -eq 0 ]
check "--out: no .tmp left" [ -z "$(find "$od" -name '*.tmp')" ]

finish
