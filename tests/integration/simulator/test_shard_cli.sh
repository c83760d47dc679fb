#!/usr/bin/env bash
# test_shard_cli.sh -- `replay`/`tx` --shard I/N and `lotus-sim merge` on the bundled demo
# subset (docs/simulator.md "Sweeps on a cluster", docs/cli.md).
#
# Usage: test_shard_cli.sh LOTUS_SIM SOURCE_DIR
#
# The contract: the shards of a sweep, merged, are exactly the unsharded run. replay with
# three policies in 2 shards sharing one --out, and tx with two policies and two x in 3 shards
# in separate directories merged into a new --out, are compared byte for byte with the
# unsharded runs: stdout, and every file (summary.json, the CSVs, report.html, tx.csv; with
# --compare compare.csv and compare.json); the merged directory holds, besides, only the
# shard files. Then the refusals: bad --shard values (exit 2), a missing shard, a shard given
# twice, shards with different options (--compare included) and with different N (exit 1,
# the message names the problem), and a shard whose run failed writes no shard file. The last line is "N passed, M failed".
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

# same_tree A B: the files of A and of B are the same, byte for byte, ignoring B's shard
# files (B is a merged directory).
same_tree() {
    diff -r -x 'shard-*-of-*.json' "$1" "$2" >"$tmp/diff" 2>&1
}

cd "$tmp"
pols=firstfit,bestfit1,sos10

# ---- replay: 2 shards on one --out, merged in place ---------------------------------------

# The unsharded run writes to m too (the report's command box shows --out), then moves to u.
run replay --trace "$demo" --policy $pols --out m --quiet
check "unsharded replay exits 0 ($err)" [ "$rc" -eq 0 ]
unsharded=$(printf '%s\n' "$out" | sed 's|^report: m/|report: u/|; s|^outputs: m/|outputs: u/|')
mv m u
run replay --trace "$demo" --policy $pols --out m --quiet --shard 0/2
check "replay shard 0/2 exits 0 ($err)" [ "$rc" -eq 0 ]
check "shard 0/2 ran runs 0 and 2" contains "$out" "2 of 3 runs: m/firstfit, m/sos10"
check "shard 0/2 wrote no report" [ ! -e m/report.html ]
check "shard 0/2 wrote its shard file" [ -s m/shard-0-of-2.json ]
run merge m
check "merge of one shard of two exits 1 (got $rc)" [ "$rc" -eq 1 ]
check "merge names the missing shard ($err)" contains "$err" "shard 1/2 is missing"
run replay --trace "$demo" --policy $pols --out m --quiet --shard 1/2
check "replay shard 1/2 exits 0 ($err)" [ "$rc" -eq 0 ]
run merge m
check "merge exits 0 ($err)" [ "$rc" -eq 0 ]
# The paths on stdout are --out's: the same text with u for m.
check "merged stdout == unsharded stdout" [ "$(printf '%s\n' "$out" | sed 's|^report: m/|report: u/|; s|^outputs: m/|outputs: u/|')" = "$unsharded" ]
check "merged replay == unsharded, byte for byte" same_tree u m
check "the merged tree has report.html" [ -s m/report.html ]
check "only the shard files are extra" [ "$(find m -type f | wc -l)" -eq $(($(find u -type f | wc -l) + 2)) ]

# ---- tx: 3 shards in separate directories, merged into a new --out ---------------------------

# The unsharded run writes to tm (the report's command box shows --out, and merge names its
# --out there), then moves to tu.
run tx --trace "$demo" --policy firstfit,bestfit1 --x 50,100 --out tm --quiet
check "unsharded tx exits 0 ($err)" [ "$rc" -eq 0 ]
unsharded=$(printf '%s\n' "$out" | sed 's|tm/|tu/|g')
mv tm tu
for i in 0 1 2; do
    run tx --trace "$demo" --policy firstfit,bestfit1 --x 50,100 --out "t$i" --quiet --shard "$i/3"
    check "tx shard $i/3 exits 0 ($err)" [ "$rc" -eq 0 ]
done
check "tx shard 0/3 ran runs 0 and 3" contains "$(cat t0/shard-0-of-3.json)" '"x100/bestfit1"'
run merge t0 t1 t2 --out tm
check "tx merge exits 0 ($err)" [ "$rc" -eq 0 ]
check "merged tx stdout == unsharded stdout" [ "$(printf '%s\n' "$out" | sed 's|tm/|tu/|g')" = "$unsharded" ]
check "merged tx == unsharded, byte for byte" same_tree tu tm
check "merged tx.csv == unsharded" cmp -s tu/tx.csv tm/tx.csv
check "merged tx report.html == unsharded" cmp -s tu/report.html tm/report.html
check "merged tx report shows merge's --out" contains "$(cat tm/report.html)" "--out tm --quiet</code>"
run merge t0 t1 t2 --out tm
check "merging again into the same --out needs --force (got $rc)" [ "$rc" -eq 1 ]
check "and says so ($err)" contains "$err" "--force"
run merge t2 t1 t0 --out tm --force
check "merge --force exits 0, DIR order free ($err)" [ "$rc" -eq 0 ]
check "and gives the same tree" same_tree tu tm

# ---- tx over seeds: the run list is x, then policy, then seed; tx_ci.csv merged too ---------

run tx --trace "$demo" --policy firstfit,random --x 50 --seeds 2 --until 1h --out sm --quiet
check "unsharded tx --seeds 2 exits 0 ($err)" [ "$rc" -eq 0 ]
unsharded=$(printf '%s\n' "$out" | sed 's|sm/|su/|g')
mv sm su
for i in 0 1; do
    run tx --trace "$demo" --policy firstfit,random --x 50 --seeds 2 --until 1h --out "s$i" \
        --quiet --shard "$i/2"
    check "tx --seeds 2 shard $i/2 exits 0 ($err)" [ "$rc" -eq 0 ]
done
check "shard 1/2 holds seed 2 of firstfit" contains "$(cat s1/shard-1-of-2.json)" '"x50/firstfit/seed2"'
run merge s0 s1 --out sm
check "merge of the seeded shards exits 0 ($err)" [ "$rc" -eq 0 ]
check "merged seeded stdout == unsharded" [ "$(printf '%s\n' "$out" | sed 's|sm/|su/|g')" = "$unsharded" ]
check "merged seeded tx == unsharded, byte for byte (tx.csv, tx_ci.csv)" same_tree su sm
run tx --trace "$demo" --policy firstfit,random --x 50 --seeds 3 --until 1h --out s3 --quiet --shard 1/2
run merge s0 s3 --out sm3
check "shards of different --seeds are refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names seeds ($err)" contains "$err" "'seeds' differs"
run tx --trace "$demo" --policy firstfit,random --x 50 --seeds 2 --until 1h --out s4 --quiet \
    --shard 1/2 --initial-state repack
run merge s0 s4 --out sm4
check "shards of different --initial-state are refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names initial_state ($err)" contains "$err" "'initial_state' differs"

# ---- tx --compare: compare.csv, compare.json and the report's section merged too ------------

run tx --trace "$demo" --policy firstfit,random,bestfit3 --x 50,85 --seeds 2 --until 1h --compare \
    --out cm --quiet
check "unsharded tx --compare exits 0 ($err)" [ "$rc" -eq 0 ]
check "it prints the comparison ($out)" contains "$out" "Spearman with the slides"
unsharded=$(printf '%s\n' "$out" | sed 's|cm/|cu/|g')
mv cm cu
for i in 0 1 2; do
    run tx --trace "$demo" --policy firstfit,random,bestfit3 --x 50,85 --seeds 2 --until 1h \
        --compare --out "c$i" --quiet --shard "$i/3"
    check "tx --compare shard $i/3 exits 0 ($err)" [ "$rc" -eq 0 ]
done
check "the shard file records compare" contains "$(cat c0/shard-0-of-3.json)" '"compare": true'
run merge c0 c1 c2 --out cm
check "merge of the --compare shards exits 0 ($err)" [ "$rc" -eq 0 ]
check "merged --compare stdout == unsharded" [ "$(printf '%s\n' "$out" | sed 's|cm/|cu/|g')" = "$unsharded" ]
check "merged --compare tx == unsharded, byte for byte" same_tree cu cm
check "compare.csv is there" [ -s cm/compare.csv ] && check "compare.json is there" [ -s cm/compare.json ]
check "the report has the comparison" contains "$(cat cm/report.html)" "Stein et al.'s comparison tables"
run tx --trace "$demo" --policy firstfit,random,bestfit3 --x 50,85 --seeds 2 --until 1h \
    --out c5 --quiet --shard 1/3
run merge c0 c5 c2 --out cm5
check "shards with and without --compare are refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names compare ($err)" contains "$err" "'compare' differs"

# ---- preemption and overcommit are part of the sweep: merged == unsharded; a shard without
# them is refused ----

run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --preempt bands --evict lrs \
    --overcommit cpu=2,mem=1.5 --out pm --quiet --no-report
check "unsharded preempting replay exits 0 ($err)" [ "$rc" -eq 0 ]
mv pm pu
for i in 0 1; do
    run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --preempt bands --evict lrs \
        --overcommit cpu=2,mem=1.5 --out pm --quiet --no-report --shard "$i/2"
    check "preempting shard $i/2 exits 0 ($err)" [ "$rc" -eq 0 ]
done
run merge pm
check "merge of the preempting shards exits 0 ($err)" [ "$rc" -eq 0 ]
check "merged preempting replay == unsharded, byte for byte" same_tree pu pm
run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --out pn --quiet --no-report \
    --shard 1/2
cp pm/shard-0-of-2.json pn/
run merge pn
check "a shard without --preempt is refused beside one with it (got $rc)" [ "$rc" -eq 1 ]
check "the message names preempt ($err)" contains "$err" "'preempt' differs"
run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --preempt bands --evict lrs \
    --out po --quiet --no-report --shard 1/2
cp pm/shard-0-of-2.json po/
run merge po
check "a shard without --overcommit is refused beside one with it (got $rc)" [ "$rc" -eq 1 ]
check "the message names overcommit ($err)" contains "$err" "'overcommit' differs"

# ---- the queue options (--order, --backfill, --estimate) are part of the sweep -------------

run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --order sjf --backfill easy \
    --estimate noisy:0.5 --out qm --quiet --no-report
check "unsharded ordered replay exits 0 ($err)" [ "$rc" -eq 0 ]
check "summary.json records the queue" contains "$(cat qm/firstfit/summary.json)" '"backfill": "easy"'
mv qm qu
for i in 0 1; do
    run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --order sjf \
        --backfill easy --estimate noisy:0.5 --out qm --quiet --no-report --shard "$i/2"
    check "ordered shard $i/2 exits 0 ($err)" [ "$rc" -eq 0 ]
done
run merge qm
check "merge of the ordered shards exits 0 ($err)" [ "$rc" -eq 0 ]
check "merged ordered replay == unsharded, byte for byte" same_tree qu qm
run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --order sjf --out qn --quiet \
    --no-report --shard 1/2
cp qm/shard-0-of-2.json qn/
run merge qn
check "a shard without --backfill is refused beside one with it (got $rc)" [ "$rc" -eq 1 ]
check "the message names backfill ($err)" contains "$err" "'backfill' differs"
run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --out qd --quiet --no-report
check "a default replay's summary.json has no queue object" \
    bash -c '! grep -q "\"queue\"" qd/firstfit/summary.json'
for bad in "--order sjb" "--order composite:1,2" "--backfill eazy" "--estimate noisy:0" \
    "--estimate noisy" "--order sjf --preempt bands"; do
    # shellcheck disable=SC2086
    run replay --trace "$demo" --policy firstfit --out bad --quiet $bad
    check "'$bad' is a usage error (got $rc)" [ "$rc" -eq 2 ]
    check "'$bad' is named ($err)" contains "$err" "${bad%% *}"
done
run replay --trace "$demo" --policy firstfit --out bad --quiet --order sjb
check "an unknown order lists the known ones ($err)" contains "$err" "known: fcfs, sjf"
run replay --trace "$demo" --policy firstfit --out bad --quiet --order sla-slope
check "an SLA order is a usage error (got $rc)" [ "$rc" -eq 2 ]
check "an SLA order: the replay's tasks carry no SLA ($err)" contains "$err" \
    "--order sla-slope: the trace's tasks carry no SLA unless --sla-annotate FILE gives them one"

# ---- --sla-annotate: the annotation's content is part of the sweep -------------------------

cat >ann.json <<'EOF'
{"rules": [{"name": "prod", "band": "prod", "sla": "by-deadline:d1=5m,d2=30m"},
           {"name": "batch", "band": "batch",
            "sla": {"shape": "by-deadline", "pen": -1, "d1": "2x", "d2": "4x"}}]}
EOF
sed 's/5m/6m/' ann.json >ann2.json
printf '{"rules": [{"band": "gold", "sla": "by-deadline"}]}' >ann3.json
sla="--until 1h --order sla-deadline --reprioritise 60s --sla-annotate ann.json"
# shellcheck disable=SC2086
run replay --trace "$demo" --policy firstfit,bestfit1 $sla --out am --quiet --no-report
check "unsharded SLA-ordered replay exits 0 ($err)" [ "$rc" -eq 0 ]
check "its summary.json has the rules' rewards" contains "$(cat am/firstfit/summary.json)" \
    '"p_started_by_knee"'
check "its table has the rules' rows" contains "$out" "sla batch by knee %"
sla_unsharded=$(printf '%s\n' "$out" | sed 's|^outputs: am/|outputs: au/|')
mv am au
for i in 0 1; do
    # shellcheck disable=SC2086
    run replay --trace "$demo" --policy firstfit,bestfit1 $sla --out am --quiet --no-report \
        --shard "$i/2"
    check "SLA-ordered shard $i/2 exits 0 ($err)" [ "$rc" -eq 0 ]
done
run merge am
check "merge of the SLA-ordered shards exits 0 ($err)" [ "$rc" -eq 0 ]
check "merged SLA stdout == unsharded stdout" \
    [ "$(printf '%s\n' "$out" | sed 's|^outputs: am/|outputs: au/|')" = "$sla_unsharded" ]
check "merged SLA-ordered replay == unsharded, byte for byte" same_tree au am
run replay --trace "$demo" --policy firstfit,bestfit1 --until 1h --order sla-deadline \
    --reprioritise 60s --sla-annotate ann2.json --out an --quiet --no-report --shard 1/2
cp am/shard-0-of-2.json an/
run merge an
check "a shard with another annotation is refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names the annotation ($err)" contains "$err" "'sla_annotate_sha' differs"
run replay --trace "$demo" --policy firstfit --until 1h --sla-annotate ann.json --out aw --quiet
check "--sla-annotate with priority order exits 0 ($err)" [ "$rc" -eq 0 ]
check "... warns that the order ignores the SLAs ($err)" contains "$err" \
    "warning: --order priority does not read the SLAs --sla-annotate gives; their rewards are still reported"
run replay --trace "$demo" --policy firstfit --until 1h --order sla-reward \
    --sla-annotate ann3.json --out bad --quiet
check "a bad annotation file is a usage error (got $rc)" [ "$rc" -eq 2 ]
check "... naming the file and the JSON path ($err)" contains "$err" \
    'ann3.json: $.rules[0].band: expected a band: free, batch or prod'
run replay --trace "$demo" --policy firstfit --until 1h --order sla-reward \
    --sla-annotate ann.json --sla-scope all --out bad --quiet
check "a bad --sla-scope is a usage error (got $rc)" [ "$rc" -eq 2 ]

# ---- refusals ------------------------------------------------------------------------------

for bad in 2/2 1 a/2 0/0 -1/2 1/2x 0/100001 ' 0/2'; do
    run tx --trace "$demo" --policy firstfit --x 50 --out bad --quiet --shard "$bad"
    check "--shard '$bad' is a usage error (got $rc)" [ "$rc" -eq 2 ]
    check "--shard '$bad' is named ($err)" contains "$err" "--shard"
done
check "bad --shard values wrote nothing" [ ! -e bad ]

run merge t0 t1 t1 t2 --out tm2
check "a shard given twice is refused (got $rc)" [ "$rc" -eq 1 ]
check "the message says twice ($err)" contains "$err" "given twice"
check "a refused merge writes nothing" [ ! -e tm2/tx.csv ]

cp -r t1 t1seed
run tx --trace "$demo" --policy firstfit,bestfit1 --x 50,100 --out t1seed --quiet --shard 1/3 --seed 2 --force
run merge t0 t1seed t2 --out tm2
check "shards with different seeds are refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names the seed ($err)" contains "$err" "'seed' differs"

cp -r t1 t1norep
run tx --trace "$demo" --policy firstfit,bestfit1 --x 50,100 --out t1norep --quiet --shard 1/3 --no-report --force
run merge t0 t1norep t2 --out tm2
check "shards with and without --no-report are refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names report ($err)" contains "$err" "'report' differs"

run tx --trace "$demo" --policy firstfit,bestfit1 --x 50,100 --out t4 --quiet --shard 1/4
run merge t0 t4 --out tm2
check "shards of different N are refused (got $rc)" [ "$rc" -eq 1 ]
check "the message names both N ($err)" contains "$err" "is a shard of 4 but"

run tx --trace "$demo" --policy firstfit,bestfit1,sos10 --x 50,100 --out t3p --quiet --shard 1/3
run merge t0 t3p t2 --out tm2
check "shards with different policies are refused ($err)" contains "$err" "'policies' differs"

run merge nosuch
check "a missing DIR exits 1 ($rc)" [ "$rc" -eq 1 ]
run merge u
check "a DIR without shard files exits 1 ($rc)" [ "$rc" -eq 1 ]
check "and says so ($err)" contains "$err" "no shard file"
run merge
check "merge without DIR is a usage error ($rc)" [ "$rc" -eq 2 ]

rm -rf m/sos10
run merge m
check "a shard's run removed: refused ($err)" contains "$err" "m/sos10/summary.json' is missing"

export LOTUS_SIM_TEST_FAIL=bestfit1
run replay --trace "$demo" --policy $pols --out f --quiet --shard 1/2
unset LOTUS_SIM_TEST_FAIL
check "a shard whose run failed exits 1 (got $rc)" [ "$rc" -eq 1 ]
check "and writes no shard file" [ ! -e f/shard-1-of-2.json ]
check "and says so ($err)" contains "$err" "no shard file written"

finish
