#!/usr/bin/env bash
# test_queue_cli.sh -- `lotus-sim queue`: Simon & McGalliard's single-pool model, every order
# side by side (docs/queue.md "lotus-sim queue", docs/cli.md).
#
# Usage: test_queue_cli.sh LOTUS_SIM SOURCE_DIR
#
# A workload worked by hand (tests/data/queue/hand.csv, below) under each fixed order, each
# backfill mode and fractional dispatch, checked in the table on stdout and in summary.json;
# the SWF reader's skips and the header's core count; every refusal with its exit status and
# message; --force and existing outputs; determinism by --seed; the outputs' shape and the
# report. The last line is "N passed, M failed".
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LOTUS_SIM SOURCE_DIR" >&2
    exit 2
fi
sim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the script cds
data=$2/tests/data/queue

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

cd "$tmp"

# jq-like: the value at a path of a JSON file, printed by Python (%.6g for numbers).
jget() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("/"):
    v = v[int(k)] if isinstance(v, list) else v[k]
print("%.6g" % v if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
EOF
}

# row LABEL: the table's row on stdout whose label starts with LABEL, squeezed.
row() {
    grep -F "$1" <<<"$out" | head -1 | tr -s ' '
}

# ---- the hand-worked workload ------------------------------------------------------------
# C = 4 cores; all jobs arrive at t = 0 (ids 0..3): A (2 cores, 10 s), B (4, 5 s), C (1, 20 s),
# D (2, 10 s). Work W = 20 + 20 + 20 + 20 = 80 core-s; utilisation = 80 / (4 M).
# Rigid dispatch, no backfill:
#   fcfs A,B,C,D: t0 A; B (4) blocks. t10 A ends, B runs to 15. t15 C (to 35), D (to 25).
#        waits 0,10,15,15: total 40, mean 10, p50 10, p90 = p99 = 15; M 35, U 57.14 %;
#        responses 10,15,35,25: mean 21.25; bounded slowdown (tau 10) 1,1.5,1.75,2.5: 1.688;
#        expansion factor 1,3,1.75,2.5: 2.062; events 4 arrivals + 4 ends = 8.
#   sjf B,A,D,C (A and D tie at 10 s: lower id): t0 B to 5; t5 A, D to 15; t15 C to 35.
#        waits 0,5,5,15: total 25, p50 5; M 35.
#   ljf C,A,D,B: t0 C (to 20), A (to 10); D (2) blocks on 1 free core. t10 D to 20; B blocks.
#        t20 B to 25. waits 0,0,10,20: total 30; M 25, U 80 %.
#   largest B,A,D,C: as sjf (25, M 35). smallest C,A,D,B: as ljf (30, M 25).
# fcfs with backfill:
#   easy: t0 A; head B's shadow time 10 (A ends), extra 0. C: 0+20 > 10 and 1 > 0: no.
#        D: 0+10 <= 10: starts. t10 B to 15; t15 C to 35. waits 0,10,15,0: total 25; M 35.
#   relaxed:0.5: bound 10 + 0.5 (10 - 0) = 15: C no, D yes: as easy (25, M 35).
#   relaxed:1: bound 20: C (0+20 <= 20) starts; D needs 2 of 1 free. t10 A ends: shadow 20
#        (C ends), bound 40: D to 20. t20 B to 25. waits 0,20,0,10: total 30; M 25.
#   greedy: t0 A, C; t10 D; t20 B: as relaxed:1 (30, M 25).
# fcfs, fractional dispatch (the default): t0 A (2 cores), 2 of B's 4 tasks (to 5). t5 B's
#   other 2 tasks (to 10). t10 C (to 30), D (to 20). starts 0,0,10,10: total 20; M 30,
#   U 66.67 %; responses 10,10,30,20: mean 17.5; events 4 + 5 pieces = 9.
hand=$data/hand.csv

run queue --workload "$hand" --cores 4 --dispatch rigid --order fcfs,sjf,ljf,largest,smallest \
    --out rigid
check "hand: exit 0 ($err)" [ "$rc" -eq 0 ]
check "hand: header row" contains "$(row order)" "order fcfs sjf ljf largest smallest"
check "hand: makespan row, the paper's Wait" \
    contains "$(row makespan)" "makespan (the paper's \"Wait\") [s] 35.00 35.00 25.00 35.00 25.00"
check "hand: utilisation row" contains "$(row utilisation)" "[%] 57.14 57.14 80.00 57.14 80.00"
check "hand: total wait row" contains "$(row 'total wait')" "40.00 25.00 30.00 25.00 30.00"
check "hand: p50 wait row" contains "$(row 'p50 wait')" "10.00 5.00 0.00 5.00 0.00"
check "hand: mean response row" contains "$(row 'mean response')" "21.25 17.50 18.75 17.50 18.75"
check "hand: bounded slowdown row" contains "$(row 'bounded slowdown')" "1.688 1.438 1.625"
check "hand: expansion factor row" contains "$(row 'expansion factor')" "2.062 1.438 2.250"
check "hand: events row" contains "$(row events)" "events 8 8 8 8 8"
check "hand: the inputs' facts" contains "$out" "4 of 4 data lines read; 0 skipped"
check "hand: C and where it came from" contains "$out" "C = 4 (--cores); widest job 4"
check "hand: the estimate mode" contains "$out" "estimates  exact"
check "summary: fcfs total wait" [ "$(jget rigid/summary.json orders/0/metrics/total_wait_s)" = 40 ]
check "summary: fcfs makespan" [ "$(jget rigid/summary.json orders/0/metrics/makespan_s)" = 35 ]
check "summary: fcfs p90" [ "$(jget rigid/summary.json orders/0/metrics/wait_p90_s)" = 15 ]
check "summary: fcfs bounded slowdown" [ "$(jget rigid/summary.json orders/0/metrics/bsld_mean)" = 1.6875 ]
check "summary: fcfs expansion factor" [ "$(jget rigid/summary.json orders/0/metrics/xf_mean)" = 2.0625 ]
check "summary: ljf utilisation" [ "$(jget rigid/summary.json orders/2/metrics/utilisation)" = 0.8 ]
check "summary: sjf's triplet" [ "$(jget rigid/summary.json orders/1/gamma)" = -1 ]
check "summary: the command" [ "$(jget rigid/summary.json command)" = queue ]
check "summary: the parameters" [ "$(jget rigid/summary.json parameters/dispatch)" = rigid ]
check "summary: the input's jobs" [ "$(jget rigid/summary.json input/jobs)" = 4 ]
check "summary: the version" [ -n "$(jget rigid/summary.json lotus_version)" ]
check "table.csv: long form" [ "$(grep -c '' rigid/table.csv)" -eq $((1 + 5 * 11)) ]
check "table.csv: a row" grep -qx 'ljf,total_wait_s,30' rigid/table.csv
check "jobs.csv: header" [ "$(head -1 rigid/sjf/jobs.csv)" = "id,arrival_s,tasks,runtime_s,estimate_s,start_s,end_s,wait_s" ]
check "jobs.csv: sjf's job C" grep -qx '2,0,1,20,20,15,35,15' rigid/sjf/jobs.csv
check "timeseries.csv: header" [ "$(head -1 rigid/fcfs/timeseries.csv)" = "time_s,busy_cores,utilisation,jobs_running,jobs_queued" ]
check "timeseries.csv: fcfs at 15" grep -qx '15,3,0.75,2,0' rigid/fcfs/timeseries.csv
check "timeseries.csv: ends idle" [ "$(tail -1 rigid/fcfs/timeseries.csv)" = "35,0,0,0,0" ]

for mode in "easy 25.00 35.00" "relaxed:0.5 25.00 35.00" "relaxed:1 30.00 25.00" "greedy 30.00 25.00" \
    "none 40.00 35.00"; do
    set -- $mode
    run queue --workload "$hand" --cores 4 --dispatch rigid --backfill "$1" --order fcfs \
        --out "bf" --force --no-report
    check "backfill $1: exit 0" [ "$rc" -eq 0 ]
    check "backfill $1: total wait $2" contains "$(row 'total wait')" "total wait [s] $2"
    check "backfill $1: makespan $3" contains "$(row makespan)" "[s] $3"
done

run queue --workload "$hand" --cores 4 --order fcfs --out frac --no-report
check "fractional (default): exit 0" [ "$rc" -eq 0 ]
check "fractional: total wait 20, makespan 30" \
    contains "$(row 'total wait')$(row makespan)" "total wait [s] 20.00makespan (the paper's \"Wait\") [s] 30.00"
check "fractional: utilisation" contains "$(row utilisation)" "66.67"
check "fractional: events 9" contains "$(row events)" "events 9"
check "fractional: the dispatch fact" contains "$out" "fractional, backfill none"
check "--no-report: no report" [ ! -e frac/report.html ]
check "fractional: B starts with its first task" grep -qx '1,0,4,5,5,0,10,0' frac/fcfs/jobs.csv

# composite:0,1,0 is fcfs schedule for schedule (SM6), as a column of its own.
run queue --workload "$hand" --cores 4 --dispatch rigid --order fcfs,composite:0,1,0 --out comp --no-report
check "composite: exit 0 ($err)" [ "$rc" -eq 0 ]
check "composite: its directory" [ -s comp/composite_0_1_0/jobs.csv ]
check "composite:0,1,0 = fcfs" cmp -s comp/fcfs/jobs.csv comp/composite_0_1_0/jobs.csv

# ---- SWF: the header's C, the skips ----------------------------------------------------------
run queue --workload "$data/example.swf" --order fcfs --out swf --no-report
check "swf: exit 0 ($err)" [ "$rc" -eq 0 ]
check "swf: C from MaxProcs" contains "$out" "C = 64 (the SWF header's MaxProcs)"
check "swf: the skips" contains "$out" "5 of 10 data lines read; 3 skipped (2 run time <= 0, 1 no processor count), 2 partial-execution lines"
check "swf: summary's skips" [ "$(jget swf/summary.json input/skipped_runtime)" = 2 ]
run queue --workload "$data/example.swf" --order fcfs --cores 32 --dispatch rigid --out swf2
check "swf: a job wider than C exits 1" [ "$rc" -eq 1 ]
check "swf: ... at its line and field ($err)" contains "$err" "example.swf:20:5: field 5 (allocated processors): '64' is more than the 32 cores"
check "swf: nothing written" [ ! -e swf2 ] && [ ! -e swf2.tmp ]
run queue --workload "$data/example.swf" --order fcfs --cores 32 --out swf3 --no-report
check "swf: wider than C is fine under fractional" [ "$rc" -eq 0 ]

# ---- refusals --------------------------------------------------------------------------------
run queue --workload "$hand" --cores 4 --order sjff
check "bad order: exit 2" [ "$rc" -eq 2 ]
check "bad order: did you mean ($err)" contains "$err" "--order: unknown queue order 'sjff' (known: "
check "bad order: the suggestion" contains "$err" "(did you mean sjf?)"
run queue --workload "$hand" --cores 4 --order fcfs,zzzzzz
check "bad order: the known list ($err)" contains "$err" "fcfs, sjf, ljf, largest, smallest"
run queue --workload "$hand" --cores 4 --order fcfs,fcfs
check "order twice: exit 2" [ "$rc" -eq 2 ]
run queue --workload "$hand" --cores 4 --order composite:1,2
check "bad composite: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "composite"
run queue --workload "$hand"
check "--cores missing for CSV: exit 2" [ "$rc" -eq 2 ]
check "--cores missing: named ($err)" contains "$err" "--cores C is required with a CSV workload"
run queue --workload gen:n=10
check "--cores missing for gen: exit 2" [ "$rc" -eq 2 ]
run queue --workload "$data/jobs.csv" --cores 8 --dispatch rigid --out wide
check "job wider than C: exit 1" [ "$rc" -eq 1 ]
check "job wider than C: its line ($err)" contains "$err" "jobs.csv:6:2: tasks: 16 is more than the 8 cores"
run queue --workload "$hand" --cores 4 --estimate noisy:x
check "bad --estimate: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "noisy:x"
run queue --workload gen:n=10 --cores 64 --estimate field
check "field on gen: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "--estimate field"
run queue --workload "$hand" --cores 4 --backfill easy
check "backfill with fractional: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "--dispatch rigid"
run queue --workload "$hand" --cores 4 --dispatch rigd
check "bad --dispatch: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "rigd"
run queue --workload "$hand" --cores 4 --backfill relaxed:-1 --dispatch rigid
check "bad relaxed:F: exit 2" [ "$rc" -eq 2 ]
run queue --workload jobs.txt --cores 4
check "unknown format: exit 2 ($err)" [ "$rc" -eq 2 ]
run queue --workload gen:n=10,tasks=1..128 --cores 64
check "gen wider than C: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "--workload"
run queue --workload missing.csv --cores 4
check "missing file: exit 1 ($err)" [ "$rc" -eq 1 ] && contains "$err" "missing.csv"
run queue --workload "$hand" --cores 0
check "--cores 0: exit 2" [ "$rc" -eq 2 ]
run queue --worklaod "$hand"
check "mistyped option: did you mean ($err)" [ "$rc" -eq 2 ] && contains "$err" "did you mean --workload?"
run queue --help
check "--help: exit 0" [ "$rc" -eq 0 ]
check "--help: the synopsis" contains "$out" "usage: lotus-sim queue --workload FILE|gen[:SPEC]"
check "--help: the default orders" contains "$out" "ljf,largest,sjf,smallest,fcfs"
run help queue
check "help queue" [ "$rc" -eq 0 ] && contains "$out" "--reprioritise"
run --help
check "top-level help lists queue" contains "$out" "  queue "

# ---- existing outputs, --force -------------------------------------------------------------
run queue --workload "$hand" --cores 4 --order sjf --out rigid
check "existing --out: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "--force"
check "existing --out: kept" [ -d rigid/ljf ]
run queue --workload "$hand" --cores 4 --order sjf --out rigid/ --force --no-report
check "--force: exit 0 ($err)" [ "$rc" -eq 0 ]
check "--force: replaced whole" [ ! -e rigid/ljf ] && [ -s rigid/sjf/jobs.csv ] && [ ! -e rigid/report.html ]
check "--force: no staging left" [ ! -e rigid.tmp ] && [ ! -e rigid.old ]
mkdir other && : >other/precious
run queue --workload "$hand" --cores 4 --order sjf --out other --force
check "--force on another directory: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "not a lotus-sim queue result"
check "--force on another directory: untouched" [ -e other/precious ]
mkdir empty
run queue --workload "$hand" --cores 4 --order sjf --out empty --force --no-report
check "--force on an empty directory" [ "$rc" -eq 0 ] && [ -s empty/summary.json ]

# ---- determinism: gen and noisy estimates by --seed ----------------------------------------
g="gen:n=300,load=0.95,tasks=1..32"
run queue --workload "$g" --cores 64 --estimate noisy:1 --seed 7 --dispatch rigid --backfill easy --out s1 --no-report
check "gen noisy: exit 0 ($err)" [ "$rc" -eq 0 ]
run queue --workload "$g" --cores 64 --estimate noisy:1 --seed 7 --dispatch rigid --backfill easy --out s2 --no-report
run queue --workload "$g" --cores 64 --estimate noisy:1 --seed 8 --dispatch rigid --backfill easy --out s3 --no-report
check "same seed: same table" cmp -s s1/table.csv s2/table.csv
check "same seed: same schedules" cmp -s s1/sjf/jobs.csv s2/sjf/jobs.csv
differ() { ! cmp -s "$1" "$2"; }
check "another seed: other jobs" differ s1/fcfs/jobs.csv s3/fcfs/jobs.csv
check "noisy: estimates differ from run times" \
    [ "$(awk -F, 'NR > 1 && $4 != $5' s1/fcfs/jobs.csv | wc -l)" -gt 250 ]
check "summary: the seed" [ "$(jget s1/summary.json parameters/seed)" = 7 ]

# ---- the report ------------------------------------------------------------------------------
run queue --workload "$hand" --cores 4 --dispatch rigid --order fcfs,sjf --out rep
page=$(cat rep/report.html)
check "report: the command box" contains "$page" '<code class="cmd">lotus-sim queue --workload'
check "report: the table" contains "$page" "makespan (the paper&#39;s &quot;Wait&quot;) [s]"
check "report: an order's section" contains "$page" "sjf: utilisation and jobs running"
check "report: no temporary directory left" [ -z "$(find rep -name '.report-*')" ]
if command -v gnuplot >/dev/null 2>&1; then
    check "report: the overlay and one plot per order" [ "$(grep -c '<svg' rep/report.html)" -eq 3 ]
    check "report: jobs running on the right axis" contains "$page" "jobs running (right)"
else
    check "report: the note" contains "$page" "gnuplot was not found"
fi
rc=0
PATH=/nonexistent "$sim" queue --workload "$hand" --cores 4 --order fcfs --out nognuplot \
    >/dev/null 2>nog.err || rc=$?
check "no gnuplot: exit 0" [ "$rc" -eq 0 ]
check "no gnuplot: the note" contains "$(cat nognuplot/report.html)" "gnuplot was not found"
check "no gnuplot: warned" grep -q "has no plots" nog.err

# ---- SIGINT leaves nothing half-written ------------------------------------------------------
"$sim" queue --workload gen:n=400000 --cores 1000 --out sig >/dev/null 2>sig.err &
pid=$!
sleep 0.3
kill -INT "$pid" 2>/dev/null || true
st=0
wait "$pid" || st=$?
check "SIGINT: no staging directory left" [ ! -e sig.tmp ]
if [ "$st" -ne 0 ]; then
    check "SIGINT: died by the signal ($st)" [ "$st" -eq 130 ]
    check "SIGINT: no output" [ ! -e sig ]
    check "SIGINT: said so" grep -q "interrupted (SIGINT)" sig.err
fi
# Once the staging directory exists: it goes, and an earlier result stays as it was.
cp -r rigid sig2
"$sim" queue --workload gen:n=400000 --cores 1000 --out sig2 --force >/dev/null 2>sig2.err &
pid=$!
for _ in $(seq 600); do
    [ -e sig2.tmp ] && break
    sleep 0.05
done
kill -INT "$pid" 2>/dev/null || true
st=0
wait "$pid" || st=$?
check "SIGINT while writing: no staging directory left" [ ! -e sig2.tmp ] && [ ! -e sig2.old ]
if [ "$st" -ne 0 ]; then
    check "SIGINT while writing: died by the signal ($st)" [ "$st" -eq 130 ]
    check "SIGINT while writing: the earlier result kept" cmp -s rigid/summary.json sig2/summary.json
    check "SIGINT while writing: said so" grep -q "removed the unfinished 'sig2.tmp'" sig2.err
fi

# ---- the self-tuning orders (lt_qtune.h; docs/queue.md "Self-tuning") ----------------------
# dynamic-static runs every triplet of the grid on the whole workload and keeps the cheapest:
# its makespan is at most every fixed order's, all five being grid points (SM5); -j splits the
# triplets over processes and must not change a byte.
gen=gen:n=60,load=0.9,tasks=1..16
run queue --workload "$gen" --cores 32 --dispatch rigid -j 1 \
    --order fcfs,sjf,ljf,largest,smallest,dynamic-static:-1:1:0.5,dynamic:-1:1:0.5:mean-wait \
    --out st1 --no-report --quiet
check "self-tuning: exit 0 ($err)" [ "$rc" -eq 0 ]
best=$(jget st1/summary.json orders/5/metrics/makespan_s)
for k in 0 1 2 3 4; do
    m=$(jget st1/summary.json orders/$k/metrics/makespan_s)
    check "SM5: dynamic-static's makespan $best <= order $k's $m" \
        awk -v a="$best" -v b="$m" 'BEGIN { exit !(a <= b + 1e-9) }'
done
check "grid.csv: a header and 125 triplets" [ "$(wc -l <st1/dynamic-static_-1_1_0.5_makespan/grid.csv)" -eq 126 ]
check "summary.json names the kind" [ "$(jget st1/summary.json orders/5/kind)" = dynamic-static ]
check "retune.csv: re-tunings, cost mean-wait" \
    grep -q '^time_s,alpha,beta,gamma,mean-wait,changed' st1/dynamic_-1_1_0.5_mean-wait/retune.csv
check "the dynamic order re-tuned" [ "$(wc -l <st1/dynamic_-1_1_0.5_mean-wait/retune.csv)" -gt 2 ]
run queue --workload "$gen" --cores 32 --dispatch rigid -j 3 \
    --order fcfs,sjf,ljf,largest,smallest,dynamic-static:-1:1:0.5,dynamic:-1:1:0.5:mean-wait \
    --out st3 --no-report --quiet
check "-j 3: exit 0 ($err)" [ "$rc" -eq 0 ]
for f in table.csv dynamic-static_-1_1_0.5_makespan/grid.csv dynamic-static_-1_1_0.5_makespan/jobs.csv \
    dynamic_-1_1_0.5_mean-wait/jobs.csv; do
    check "-j 3 == -j 1: $f" cmp -s "st1/$f" "st3/$f"
done
run queue --workload "$gen" --cores 32 --dispatch rigid --order dynamic:-1:1:0.5 --retune 1h \
    --out st4 --no-report --quiet
check "--retune 1h: fewer re-tunings than at every completion" \
    [ "$(wc -l <st4/dynamic_-1_1_0.5_makespan/retune.csv)" -lt "$(wc -l <st1/dynamic_-1_1_0.5_mean-wait/retune.csv)" ]
for bad in dynamic:-1:1:0 dynamic:1:-1:0.5 dynamic-static:fast dynamic:alg1:speed; do
    run queue --workload "$gen" --cores 32 --order "$bad" --out bad-st --quiet
    check "--order $bad is refused (got $rc)" [ "$rc" -eq 2 ]
    check "--order $bad is named ($err)" contains "$err" "$bad"
done
run queue --workload "$gen" --cores 32 --dispatch rigid --order fcfs,dynamic-static:-1:1:0.5 \
    --out st5 --quiet
check "report with a static search: exit 0 ($err)" [ "$rc" -eq 0 ]
check "the report has the search's section" grep -q "the search's cost over the grid" st5/report.html
if command -v gnuplot >/dev/null 2>&1; then
    check "the heat map marks the triplet chosen" grep -q "chosen (" st5/report.html
fi
run queue --workload "$gen" --cores 32 --order dynamic -j 0 --out bad-j --quiet
check "-j 0 is refused (got $rc)" [ "$rc" -eq 2 ]

# ---- --sla: Betser's rewards, the SLA orders ------------------------------------------------
# The hand workload, rigid, --sla by-deadline:d1=1x,d2=2x (d1 = the job's run time, rmax 1,
# pen -1). fcfs starts A,B,C,D at 0,10,15,15: A 1; B d 10 = d2: -1; C 15 <= 20: 1; D 15, half
# way from 10 to 20: 0. Total 1, mean 0.25, P(<0) 0.25; on time A, C (waits 0, 15: 7.5), late
# B, D (10, 15: 12.5). sla-deadline at t0: distances A 10, B 5, C 20, D 10: B [0,5); at 5 A
# and D (5 to go) [5,15); C at 15 (5 to go): every job on time, total 4, waits 0,5,5,15: 6.25.
run queue --workload "$hand" --cores 4 --dispatch rigid --order fcfs,sla-deadline,sla-slope:0 \
    --sla by-deadline:d1=1x,d2=2x --out sla
check "--sla: exit 0 ($err)" [ "$rc" -eq 0 ]
check "--sla: the table's header" contains "$out" "SLA rewards (--sla by-deadline:d1=1x,d2=2x"
check "--sla: total reward" contains "$(row 'total reward')" "total reward [SWE-h] 1.000 4.000"
check "--sla: mean reward" contains "$(row 'mean reward')" "mean reward [SWE-h] 0.2500 1.0000"
check "--sla: P(reward < 0)" contains "$(row 'P(reward')" "P(reward < 0) 0.2500 0.0000"
check "--sla: started by d1" contains "$(row 'started by d1')" "2 4"
check "--sla: late" contains "$(row 'started after')" "2 0"
check "--sla: late jobs' wait apart" contains "$(row 'late [s]')" "late [s] 12.50 -"
check "--sla: on-time jobs' wait" contains "$(row 'on time [s]')" "on time [s] 7.50 6.25"
check "--sla: the fact" contains "$out" "by-deadline:d1=1x,d2=2x for every job (Nx: N times"
check "--sla: summary's parameter" [ "$(jget sla/summary.json parameters/sla)" = "by-deadline:d1=1x,d2=2x" ]
check "--sla: summary's total reward" [ "$(jget sla/summary.json orders/1/sla/total_reward)" = 4 ]
check "--sla: summary's late wait" [ "$(jget sla/summary.json orders/0/sla/late_wait_mean_s)" = 12.5 ]
check "--sla: table.csv" grep -qx 'fcfs,sla_p_negative,0.25' sla/table.csv
check "--sla: jobs.csv has the reward" [ "$(head -1 sla/fcfs/jobs.csv)" = "id,arrival_s,tasks,runtime_s,estimate_s,start_s,end_s,wait_s,reward" ]
check "--sla: fcfs's job B at d2" grep -qx '1,0,4,5,5,10,15,10,-1' sla/fcfs/jobs.csv
check "--sla: sla-deadline's job B first" grep -qx '1,0,4,5,5,0,5,0,1' sla/sla-deadline/jobs.csv
check "--sla: the report's SLA table" grep -q "<h2>SLA rewards</h2>" sla/report.html
check "no --sla: no SLA table" [ -z "$(grep -l "SLA rewards" rigid/report.html)" ]
run queue --workload "$hand" --cores 4 --order fcfs,sla-reward --out sla-bad
check "an SLA order without --sla: exit 2 ($err)" [ "$rc" -eq 2 ]
check "... names the flag" contains "$err" "--order sla-reward needs --sla SPEC"
run queue --workload "$hand" --cores 4 --order fcfs --sla deadline:d1=1h --out sla-bad
check "--sla with an unknown kind: exit 2" [ "$rc" -eq 2 ]
check "... lists the kinds ($err)" contains "$err" "--sla: unknown SLA kind 'deadline'"
run queue --workload "$hand" --cores 4 --order fcfs --sla by-deadline:d1=1h,d1=2h --out sla-bad
check "--sla with a key twice: exit 2 ($err)" [ "$rc" -eq 2 ] && contains "$err" "key 'd1' given twice"
run queue --workload "$hand" --cores 4 --order fcfs --sla by-deadline:d1=2x,d2=30 --out sla-bad
check "--sla d1 = 2x beyond d2 for one job: exit 2" [ "$rc" -eq 2 ]
check "... names the job ($err)" contains "$err" "--sla: job 2: SLA 'by-deadline:d1=2x,d2=30' for a job of estimated run time 20 s: d1 (40 s) must be <= d2 (30 s)"
check "... nothing written" [ ! -e sla-bad ]
run queue --workload "$hand" --cores 4 --order sla-slopes --sla by-deadline --out sla-bad
check "a misspelt SLA order suggests one ($err)" contains "$err" "did you mean sla-slope?"

finish
