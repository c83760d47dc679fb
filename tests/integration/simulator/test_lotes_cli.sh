#!/usr/bin/env bash
# test_lotes_cli.sh -- end-to-end checks of `lotus-sim lotes`: a short sweep of LoTES and the
# greedy benchmarks in text and --json mode, determinism by --seed, --out files written whole,
# MapReduce jobs, `lotes tables` for the paper's data center and for a cluster snapshot with a
# classes file (and the tables file read back by a run), and command-line and file errors.
#
# Usage: test_lotes_cli.sh LOTUS_SIM FIXTURES_DIR   (FIXTURES_DIR is tests/fixtures)
# Every run must also be free of sanitizer reports, so the ASan build can run this script.
# The last line is "N passed, M failed"; the exit status is 1 if any check failed.
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LOTUS_SIM FIXTURES_DIR" >&2
    exit 2
fi
sim=$1
fx=$2

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

short=(--machines-per-config 20 --hours 40 --warmup 10 --drain 100 --seeds 2)

run lotes --help
check "--help exits 0" [ "$rc" -eq 0 ]
check "--help names the policies" contains "$out" "greedy-jsq"

run lotes "${short[@]}" --load 0.5,0.9 --policy lotes,greedy,greedy-jsq
check "sweep: exit 0" [ "$rc" -eq 0 ]
check "sweep: the cluster" contains "$out" "200 machines in 10 configurations, 8 classes"
check "sweep: a row per point" [ "$(grep -cE '^(lotes|greedy|greedy-jsq) ' <<<"$out")" -eq 6 ]

run lotes "${short[@]}" --load 0.7 --json
check "--json: exit 0" [ "$rc" -eq 0 ]
check "--json: a line per point" [ "$(wc -l <<<"$out")" -eq 2 ]
first=$out
run lotes "${short[@]}" --load 0.7 --json
check "same seed, same figures" [ "$first" = "$out" ]
run lotes "${short[@]}" --load 0.7 --json --seed 9
check "another seed, other figures" [ "$first" != "$out" ]
if command -v python3 >/dev/null 2>&1; then
    check "--json: consistent" python3 -c '
import json, sys
for line in sys.argv[1].splitlines():
    j = json.loads(line)
    assert j["seeds"] == 2 and j["measured"] > 1000, j
    assert j["response_h"] > j["waiting_h"] >= 0, j
    assert set(j["classes"]) == {str(k) for k in range(1, 9)}, j
' "$first"
fi

run lotes "${short[@]}" --load 0.6 --policy lotes --out "$tmp/o"
check "--out: exit 0" [ "$rc" -eq 0 ]
check "--out: results.csv, a row per run" [ "$(($(wc -l <"$tmp/o/results.csv") - 1))" -eq 2 ]
check "--out: summary.json" contains "$(cat "$tmp/o/summary.json")" '"lambda_alloc"'
check "--out: nothing half-written" [ -z "$(find "$tmp/o" -name '*.tmp')" ]

run lotes "${short[@]}" --load 0.5 --mapreduce --maps 4 --reduces 2 --json
check "--mapreduce: exit 0" [ "$rc" -eq 0 ]
check "--mapreduce: flagged" contains "$out" '"mapreduce":true'

run lotes --machines-per-config 50 --hours 20 --warmup 5 --seeds 1 --load 0.8 --policy lotes \
    --active 90
check "--active: exit 0" [ "$rc" -eq 0 ]
check "--active: 450 of 500 machines planned" contains "$out" "450 machines in 10 configurations"
check "--active: the load's reference" contains "$out" "90 % of the machines on: loads are relative to all machines' lambda* 1063.2"

run lotes tables --paper --machines-per-config 20 --out "$tmp/paper.json"
check "tables --paper: exit 0" [ "$rc" -eq 0 ]
check "tables --paper: lambda*" contains "$err" "lambda* 425.299 (allocation LP)"
check "tables --paper: the format" contains "$(head -c 200 "$tmp/paper.json")" "lotus-lotes-tables"
run lotes --tables "$tmp/paper.json" --hours 20 --warmup 5 --seeds 1 --load 0.5 --policy lotes
check "a run on a tables file: exit 0" [ "$rc" -eq 0 ]
check "a run on a tables file: its machines" contains "$out" "200 machines in 10 configurations"

cat >"$tmp/classes.json" <<'EOT'
{"classes": [{"name": "small", "alpha": 0.7, "mu": 4, "cpu": 0.05, "mem": 0.05},
             {"name": "big", "alpha": 0.3, "mu": 0.5, "cpu": 0.3, "mem": 0.2}]}
EOT
run lotes tables --paper --machines-per-config 10
check "tables --paper, too few machines: exit 1" [ "$rc" -eq 1 ]
check "tables --paper, too few machines: says which class" contains "$err" "class '1' has no machine after rounding"
run lotes tables --cluster "$fx/score/cluster.json" --classes "$tmp/classes.json"
check "tables --cluster: exit 0" [ "$rc" -eq 0 ]
check "tables --cluster: JSON on stdout" contains "$out" '"lotus-lotes-tables"'
check "tables --cluster: the classes" contains "$out" '"big"'

echo '{"classes": [{"name": "x", "alpha": 1, "mu": 1, "cpu": -1, "mem": 1}]}' >"$tmp/bad.json"
run lotes tables --cluster "$fx/score/cluster.json" --classes "$tmp/bad.json"
check "bad classes: exit 1" [ "$rc" -eq 1 ]
check "bad classes: the JSON path" contains "$err" '$.classes[0].cpu: expected a number >= 0'
echo '{"format": "lotus-lotes-tables", "version": 1}' >"$tmp/badt.json"
run lotes --tables "$tmp/badt.json" --seeds 1 --hours 2 --warmup 1
check "bad tables file: exit 1" [ "$rc" -eq 1 ]
check "bad tables file: named" contains "$err" "$tmp/badt.json"
run lotes --tables "$tmp/none.json"
check "missing tables file: exit 1" [ "$rc" -eq 1 ]

bad() { # bad EXPECTED-TEXT ARGS...: exit 2 and the message on stderr
    local want=$1
    shift
    run lotes "$@"
    check "lotes $*: exit 2" [ "$rc" -eq 2 ]
    check "lotes $*: says '$want'" contains "$err" "$want"
}
bad "unknown 'fifo' (known: lotes, greedy, greedy-jsq)" --policy lotes,fifo
bad "'lotes' is given twice" --policy lotes,lotes
bad "--load '0.5,,0.9'" --load 0.5,,0.9
bad "--seeds 0" --seeds 0
bad "--active 101 is not a percentage" --active 101
bad "--active 0 leaves no machine on" --active 0
bad "--warmup 50 must be below --hours 40" --hours 40 --warmup 50
bad "unknown option '--frob'" --frob
bad "give --paper, or --cluster" tables
bad "give --paper, or --cluster" tables --paper --cluster x.json

bad "--load '0.5,': an empty item" --load 0.5,
bad "did you mean greedy?" --policy gredy
bad "did you mean --seeds?" --sedes 3
bad "--hours: '3x' is not a duration" --hours 3x
bad "unknown option '--frob'" tables --paper --frob

# --help and -h for both commands, tables included (it exited 2).
for c in "" tables; do
    for h in --help -h; do
        # shellcheck disable=SC2086 # $c is empty or one word
        run lotes $c $h
        check "lotes $c $h exits 0 (got $rc)" [ "$rc" -eq 0 ]
        check "lotes $c $h shows a default" contains "$out" "(default"
        check "lotes $c $h shows an example" contains "$out" "example:"
    done
done

# Durations: --hours 6000m --warmup 1200m --drain 2d is --hours 100 --warmup 20 --drain 48.
small="--machines-per-config 20 --seeds 1 --load 0.5 --json --quiet"
# shellcheck disable=SC2086
run lotes $small --hours 6000m --warmup 1200m --drain 2d
a=$out
# shellcheck disable=SC2086
run lotes $small --hours 100 --warmup 20 --drain 48
check "durations with units are the same hours" [ "$a" = "$out" ]

# Not applicable: --maps without --mapreduce; --machines-per-config with --tables.
# shellcheck disable=SC2086
run lotes $small --hours 100 --warmup 20 --drain 48 --maps 10
check "--maps without --mapreduce warns ($err)" contains "$err" "warning: --maps does not apply without --mapreduce"
run lotes tables --paper --machines-per-config 20 --out "$tmp/t.json"
check "tables for --tables (got $rc)" [ "$rc" -eq 0 ]
# shellcheck disable=SC2086
run lotes $small --hours 100 --warmup 20 --drain 48 --tables "$tmp/t.json" --machines-per-config 50
check "--machines-per-config with --tables warns ($err)" contains "$err" "warning: --machines-per-config does not apply with --tables"

finish
