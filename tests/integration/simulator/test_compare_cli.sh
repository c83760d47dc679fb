#!/usr/bin/env bash
# test_compare_cli.sh -- Stein et al.'s comparison tables: `lotus-sim compare DIR...` on
# hand-made tx directories whose counts are known by hand, and `tx --compare` on the bundled
# demo subset with a failed run (docs/simulator.md "Stein et al.'s comparison tables",
# docs/cli.md).
#
# Usage: test_compare_cli.sh LOTUS_SIM SOURCE_DIR
#
# Two hand-made sweeps, pooled: h1 with two seeds (one run failed, with a stale summary.json
# of an earlier sweep left in its place, which must not be read), h2 with one. Every count of
# compare.csv below is worked out in the comments. Then the refusals, and tx --compare's
# files equal, byte for byte, what compare writes from the same directory. The last line is
# "N passed, M failed".
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LOTUS_SIM SOURCE_DIR" >&2
    exit 2
fi
sim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the script cds
demo=$2/tests/data/clusterdata-2011-2-demo

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

cd "$tmp"

# summary DIR REL TASKS USEFUL: a run's summary.json with the two values compare reads.
summary() {
    mkdir -p "$1/$2"
    printf '{"tasks": {"completed": %s}, "metrics": {"useful_work_s": %s}}\n' "$3" "$4" \
        >"$1/$2/summary.json"
}

# h1, two seeds. Cases (x, seed): tasks bestfit3 / randfirstfit, useful bestfit3 / randfirstfit
#   (85,1)  100 /  99    1000 / 1000
#   (85,2)   50 / nan    left out (randfirstfit failed)
#   (20,1)   10 /  20       5 /    6
#   (20,2)   30 /  30       7 /    7
mkdir h1
cat >h1/tx.csv <<'EOF'
x,policy,seed,tasks_completed,jobs_completed
85,bestfit3,1,100,1
85,bestfit3,2,50,1
85,randfirstfit,1,99,1
85,randfirstfit,2,nan,nan
20,bestfit3,1,10,1
20,bestfit3,2,30,1
20,randfirstfit,1,20,1
20,randfirstfit,2,30,1
EOF
summary h1 x85/bestfit3/seed1 100 1000
summary h1 x85/bestfit3/seed2 50 500
summary h1 x85/randfirstfit/seed1 99 1000
summary h1 x85/randfirstfit/seed2 1e9 1e9 # stale: an earlier sweep's, kept when the run failed
summary h1 x20/bestfit3/seed1 10 5
summary h1 x20/bestfit3/seed2 30 7
summary h1 x20/randfirstfit/seed1 20 6
summary h1 x20/randfirstfit/seed2 30 7
# h2, one seed, the policies in the other order:
#   x=90      5 /  10     100 /  99
#   x=80      0 /   0       0 /   0
mkdir h2
cat >h2/tx.csv <<'EOF'
x,policy,tasks_completed,jobs_completed
90,randfirstfit,10,1
90,bestfit3,5,1
80,randfirstfit,0,0
80,bestfit3,0,0
EOF
summary h2 x90/randfirstfit 10 99
summary h2 x90/bestfit3 5 100
summary h2 x80/randfirstfit 0 0
summary h2 x80/bestfit3 0 0

run compare h1 h2 --out p
check "compare of two DIRs exits 0 ($err)" [ "$rc" -eq 0 ]
check "it counts 6 cases ($out)" contains "$out" "6 cases (x, seed) from 2 tx sweeps: h1 h2"
check "it says a case was left out" contains "$out" "throughput (tasks completed), all x: 5 cases, 1 left out (a run failed)"
csv=$(cat p/compare.csv)
# Throughput, all x (5 cases): randfirstfit best at (20,1) (20,2) 90 80, >= 99 % also at
# (85,1) (99 of 100); ratios .99 1 1 1 1. bestfit3 best at (85,1) (20,2) 80; ratios 1 .5 1 .5 1.
check "throughput all: randfirstfit 4/5 ($csv)" contains "$csv" "throughput,all,randfirstfit,5,4,5,0.998000,31,37"
check "throughput all: bestfit3 3/3, after it" contains "$csv" "0.998000,31,37
throughput,all,bestfit3,5,3,3,0.800000,12,38"
# 80-90 (x = 85, 90 and 80, both ends in): (85,1), 90, 80 counted, (85,2) left out.
check "throughput 80-90: randfirstfit 2/3" contains "$csv" "throughput,80-90,randfirstfit,3,2,3,0.996667,11,16"
check "throughput 80-90: bestfit3 2/2" contains "$csv" "throughput,80-90,bestfit3,3,2,2,0.833333,10,20"
# Useful work, all x: bestfit3 best at (85,1) (20,2) 90 80; randfirstfit at (85,1) (20,1)
# (20,2) 80, >= 99 % at 90 too (99 of 100); bestfit3's 5 of 6 is below 99 %.
check "useful all: randfirstfit 4/5" contains "$csv" "useful_work,all,randfirstfit,5,4,5,0.998000,264,306"
check "useful all: bestfit3 4/4" contains "$csv" "useful_work,all,bestfit3,5,4,4,0.966667,294,318"
js=$(tr -d ' \n' <p/compare.json)
# Throughput: lotus and the slides both put randfirstfit first: +1; useful work over all x:
# lotus randfirstfit first, the slides bestfit3 (294 > 264): -1.
check "spearman +1 for throughput ($js)" contains "$js" '"metric":"throughput","range":"all","cases":5,"left_out":1,"policies_compared":2,"spearman":1.0'
check "spearman -1 for useful work over all x" contains "$js" '"metric":"useful_work","range":"all","cases":5,"left_out":1,"policies_compared":2,"spearman":-1.0'

# ---- refusals ------------------------------------------------------------------------------

run compare h1 h2 --out p
check "existing outputs need --force (got $rc)" [ "$rc" -eq 1 ]
check "and it says so ($err)" contains "$err" "--force"
run compare h1 h2 --out p --force
check "--force replaces them ($err)" [ "$rc" -eq 0 ]
run compare h1 h2
check "several DIRs without --out: usage error (got $rc)" [ "$rc" -eq 2 ]
run compare
check "no DIR: usage error (got $rc)" [ "$rc" -eq 2 ]
run compare nosuch --out q
check "a DIR without tx.csv exits 1 ($err)" [ "$rc" -eq 1 ]
check "and names the file" contains "$err" "nosuch/tx.csv"
mkdir h3
printf 'x,policy,tasks_completed,jobs_completed\n90,bestfit3,5,1\n90,firstfit,5,1\n' >h3/tx.csv
summary h3 x90/bestfit3 5 1
summary h3 x90/firstfit 5 1
run compare h1 h3 --out q
check "a DIR with another policy exits 1 ($err)" [ "$rc" -eq 1 ]
check "and names it" contains "$err" "policy 'firstfit' is not in the first DIR's sweep"
mkdir h4
printf 'x,policy,tasks_completed,jobs_completed\n90,bestfit3,5,1\n' >h4/tx.csv
summary h4 x90/bestfit3 5 1
run compare h1 h4 --out q
check "a DIR missing a policy exits 1 ($err)" [ "$rc" -eq 1 ]
check "and names it" contains "$err" "has no run of 'randfirstfit'"
rm h2/x90/bestfit3/summary.json
run compare h2 --out q
check "a done run without summary.json exits 1 ($err)" [ "$rc" -eq 1 ]
check "and names it" contains "$err" "h2/x90/bestfit3/summary.json"
check "the refusals wrote nothing" [ ! -e q/compare.csv ]

# ---- tx --compare on the demo, one policy failing: tx's files == compare's ---------------------

export LOTUS_SIM_TEST_FAIL=random
run tx --trace "$demo" --policy firstfit,random,bestfit3 --x 85,100 --until 1h --compare \
    --out t --quiet --no-report
unset LOTUS_SIM_TEST_FAIL
check "tx with a failed policy exits 1 (got $rc)" [ "$rc" -eq 1 ]
check "it still prints the tables, every case left out ($out)" contains "$out" "throughput (tasks completed), all x: 0 cases, 2 left out (a run failed)"
check "compare.csv written" [ -s t/compare.csv ]
cp t/compare.csv t.csv
cp t/compare.json t.json
run compare t --force
check "compare of tx's DIR exits 0 ($err)" [ "$rc" -eq 0 ]
check "compare.csv == tx --compare's, byte for byte" cmp -s t.csv t/compare.csv
check "compare.json == tx --compare's, byte for byte" cmp -s t.json t/compare.json
run tx --trace "$demo" --policy firstfit,random,bestfit3 --x 85,100 --until 1h --out n --quiet \
    --no-report
check "without --compare, no compare.csv" [ ! -e n/compare.csv ]
check "and no table ($out)" test "${out#*Spearman}" = "$out"

finish
