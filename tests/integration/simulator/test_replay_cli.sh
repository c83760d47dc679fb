#!/usr/bin/env bash
# test_replay_cli.sh -- end-to-end checks of `lotus-sim replay` and `lotus-sim tx` on the
# bundled demo subset of the Google 2011 trace (docs/simulator.md, docs/cli.md).
#
# Usage: test_replay_cli.sh LOTUS_SIM SOURCE_DIR
#
# Runs two policies on the demo and checks the table, every documented output file and its
# CSV header, that no .tmp file is left and that a second run with the same seed writes the
# same bytes; runs `tx` with two fractions and checks tx.csv; then feeds bad input (a missing
# directory, a truncated gzip part, malformed lines, backwards time across parts, an unknown
# policy, a bad --machines-fraction) and checks the exit status, the message and that no output
# file is left. Every run must be free of sanitizer reports, so the ASan build can run this.
# The last line is "N passed, M failed"; the exit status is 1 if any check failed.
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LOTUS_SIM SOURCE_DIR" >&2
    exit 2
fi
sim=$1
demo=$2/tests/data/clusterdata-2011-2-demo

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# no_files DIR: DIR holds no regular file at any depth (directories may remain).
no_files() {
    [ -z "$(find "$1" -type f 2>/dev/null)" ]
}

first_line_is() {
    [ -f "$1" ] && [ "$(head -n 1 "$1")" = "$2" ]
}

# ---- replay: two policies on the demo ------------------------------------------------------

tasks_hdr='job_id,task_index,priority,sched_class,cpu,mem,disk,arrival_s,start_s,end_s,outcome,requeues,machine'
ts_hdr='time_s,machines_online,tasks_running,tasks_queued,util_cpu,util_mem,util_disk,unused_machines,frag5,frag10,frag25,frag50,completed,requeues'
wait_hdr='priority,quantile,waiting_s'

o1=$tmp/r1
run replay --trace "$demo" --policy bestfit1,sos10 -j 2 --out "$o1" --quiet
check "replay exits 0 (got $rc: $err)" [ "$rc" -eq 0 ]
header=$(printf '%s\n' "$out" | head -n 1)
check "the table names bestfit1" contains "$header" bestfit1
check "the table names sos10" contains "$header" sos10
for p in bestfit1 sos10; do
    check "$p/summary.json is JSON with the policy" \
        sh -c "grep -q '\"policy\": \"$p\"' '$o1/$p/summary.json'"
    check "$p/tasks.csv header" first_line_is "$o1/$p/tasks.csv" "$tasks_hdr"
    check "$p/timeseries.csv header" first_line_is "$o1/$p/timeseries.csv" "$ts_hdr"
    check "$p/waiting.csv header" first_line_is "$o1/$p/waiting.csv" "$wait_hdr"
    check "$p/tasks.csv has task rows" [ "$(wc -l <"$o1/$p/tasks.csv")" -gt 1 ]
done
check "report.html exists" [ -s "$o1/report.html" ]
check "no .tmp file left" [ -z "$(find "$o1" -name '*.tmp')" ]

# The same seed (the default, 1) again: the same bytes.
o2=$tmp/r2
run replay --trace "$demo" --policy bestfit1,sos10 -j 2 --out "$o2" --quiet
check "second replay exits 0" [ "$rc" -eq 0 ]
for p in bestfit1 sos10; do
    for f in summary.json tasks.csv timeseries.csv; do
        check "$p/$f identical across runs" cmp -s "$o1/$p/$f" "$o2/$p/$f"
    done
done

# ---- tx -------------------------------------------------------------------------------------

# T(x) with 50 % and 100 % of the machines. T(100) >= T(50) is NOT required: a greedy policy
# on a subset of the machines may complete more tasks (different queueing), so only the shape
# of the output is checked: a T(x) table on stdout and tx.csv with an integer T per x.
ox=$tmp/tx
run tx --trace "$demo" --policy firstfit --x 50,100 --out "$ox" --quiet
check "tx exits 0 (got $rc: $err)" [ "$rc" -eq 0 ]
check "tx prints a T(x) table" contains "$out" "T(x)"
check "tx prints the policy" contains "$out" firstfit
check "tx.csv exists" [ -s "$ox/tx.csv" ]
# T is the column named tasks_completed (long form) or firstfit (one column per policy).
tx_value() {
    awk -F, -v x="$1" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == "tasks_completed" || $i == "firstfit") c = i; next }
        $1 == x && c { print $c; exit }' "$ox/tx.csv"
}
t50=$(tx_value 50)
t100=$(tx_value 100)
check "tx.csv T(50) is an integer (got '$t50')" sh -c "printf '%s' '$t50' | grep -qxE '[0-9]+'"
check "tx.csv T(100) is an integer (got '$t100')" sh -c "printf '%s' '$t100' | grep -qxE '[0-9]+'"
check "no .tmp file left by tx" [ -z "$(find "$ox" -name '*.tmp')" ]

# ---- bad input ------------------------------------------------------------------------------

# A missing trace directory: exit 1, the message names it.
ob=$tmp/bad-missing
run replay --trace "$tmp/nosuch" --policy firstfit --out "$ob" --quiet
check "missing directory exits 1 (got $rc)" [ "$rc" -eq 1 ]
check "missing directory is named ($err)" contains "$err" "$tmp/nosuch"
check "missing directory leaves no file" no_files "$ob"

# A copy of the demo whose second task_events part is cut in half: a truncated gzip.
cp -r "$demo" "$tmp/trunc"
part=$tmp/trunc/task_events/part-00001-of-00500.csv.gz
size=$(wc -c <"$part")
head -c $((size / 2)) "$part" >"$part.cut"
mv "$part.cut" "$part"
ob=$tmp/bad-trunc
run replay --trace "$tmp/trunc" --policy firstfit --out "$ob" --quiet
check "truncated gzip exits non-zero" [ "$rc" -ne 0 ]
check "truncated gzip names the part ($err)" contains "$err" "part-00001-of-00500.csv.gz"
check "truncated gzip leaves no summary.json" [ ! -e "$ob/firstfit/summary.json" ]
check "truncated gzip leaves no file" no_files "$ob"

# A small plain-text trace: one machine, task_events given per case.
# bad_trace NAME TASK_PART0 [TASK_PART1]: writes $tmp/NAME (one part, or two of two).
bad_trace() {
    local d=$tmp/$1
    mkdir -p "$d/machine_events" "$d/task_events"
    printf '0,1,0,,1,1\n' >"$d/machine_events/part-00000-of-00001.csv"
    if [ $# -eq 2 ]; then
        printf '%s' "$2" >"$d/task_events/part-00000-of-00001.csv"
    else
        printf '%s' "$2" >"$d/task_events/part-00000-of-00002.csv"
        printf '%s' "$3" >"$d/task_events/part-00001-of-00002.csv"
    fi
}

ok1='610000000,,1,0,,0,,0,0,0.1,0.1,0,'
ok2='620000000,,2,0,,0,,0,0,0.1,0.1,0,'

# bad_case NAME WHERE TEXT: runs the trace $tmp/NAME; expects a non-zero exit, WHERE
# (part:line:column) and TEXT in the message, and no file in the output directory.
bad_case() {
    local ob=$tmp/out-$1
    run replay --trace "$tmp/$1" --policy firstfit --out "$ob" --quiet
    check "$1 exits non-zero" [ "$rc" -ne 0 ]
    check "$1 message has '$2' ($err)" contains "$err" "$2"
    check "$1 message has '$3' ($err)" contains "$err" "$3"
    check "$1 leaves no file" no_files "$ob"
}

bad_trace columns "$ok1
620000000,,2,0,,0,,0,0,0.1,0.1
"
bad_case columns "task_events/part-00000-of-00001.csv:2:12:" "expected 13 fields, got 11"

bad_trace noint "$ok1
620000000,,x2,0,,0,,0,0,0.1,0.1,0,
"
bad_case noint "task_events/part-00000-of-00001.csv:2:3:" "'x2' is not an integer"

bad_trace evtype "$ok1
620000000,,2,0,,9,,0,0,0.1,0.1,0,
"
bad_case evtype "task_events/part-00000-of-00001.csv:2:6:" "'9' is not one of 0..8"

bad_trace backwards "$ok1
$ok2
" "615000000,,3,0,,0,,0,0,0.1,0.1,0,
"
bad_case backwards "task_events/part-00001-of-00002.csv:1:" "earlier than"

# Usage errors: exit 2.
run replay --trace "$demo" --policy firstfit,nosuch --out "$tmp/bad-policy" --quiet
check "unknown policy exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "unknown policy is named ($err)" contains "$err" "'nosuch'"
check "unknown policy lists the known ones" contains "$err" "known: firstfit"
check "unknown policy lists lotes too" contains "$err" "; or lotes"

# LoTES as the replay's dispatcher (Table 3's classes over the cell's configurations).
run replay --trace "$demo" --policy lotes,firstfit --out "$tmp/lotes" --quiet
check "lotes: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "lotes: its column" contains "$out" "lotes"
check "lotes: its summary" contains "$(cat "$tmp/lotes/lotes/summary.json")" '"policy": "lotes"'
run replay --trace "$demo" --policy lotes --out "$tmp/lotes2" --quiet
check "lotes: the same seed, the same summary" [ "$(sed '/wall/d;/seconds/d' "$tmp/lotes/lotes/summary.json" | md5sum)" = "$(sed '/wall/d;/seconds/d' "$tmp/lotes2/lotes/summary.json" | md5sum)" ]

for x in 0 101 abc -5; do
    run replay --trace "$demo" --policy firstfit --machines-fraction "$x" --out "$tmp/bad-x" \
        --quiet
    check "--machines-fraction $x exits 2 (got $rc)" [ "$rc" -eq 2 ]
    check "--machines-fraction $x is named ($err)" contains "$err" "--machines-fraction"
done

finish
