#!/usr/bin/env bash
# test_score_cli.sh -- end-to-end checks of `lotus-sim score` on the fixtures in score/.
#
# Usage: test_score_cli.sh LOTUS_SIM FIXTURES_DIR   (FIXTURES_DIR is tests/fixtures)
#
# Runs --list-policies, every policy on the example cluster in text and --json mode, the
# DESIGN.md section 4 sum-of-squares example, a task that fits nowhere, every case under
# score/invalid/ and a few command-line errors. An invalid case is a directory holding
# cluster.json and/or task.json (the example's are used for the one missing), optionally
# `policy` (the policy name; default bestfit1) and `status` (the exact exit status), and
# `error`: a substring that stderr must contain. Adding a case adds no shell.
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
fx=$2/score
cluster=$fx/cluster.json
task=$fx/task.json
n_policies=14

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

not() {
    ! "$@"
}

# is_json FILE: valid JSON (python3, else jq, else a shape check).
is_json() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -m json.tool "$1" >/dev/null
    elif command -v jq >/dev/null 2>&1; then
        jq -e . "$1" >/dev/null
    else
        [ "$(head -c 1 "$1")" = "{" ] && grep -q '"chosen"' "$1"
    fi
}

# json_consistent FILE N_MACHINES: scores in rank order, chosen = the first of them, and
# feasible + infeasible = N_MACHINES. Needs python3; true without it.
json_consistent() {
    command -v python3 >/dev/null 2>&1 || return 0
    python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["scores"]
assert set(d) == {"policy", "task", "scores", "infeasible", "chosen"}, sorted(d)
assert all((a["score"], a["index"]) < (b["score"], b["index"]) for a, b in zip(s, s[1:])), s
assert len(s) + d["infeasible"] == int(sys.argv[2]), (len(s), d["infeasible"])
assert d["chosen"] == (s[0] if s else None), (d["chosen"], s[:1])
EOF
}

# ---- policies ----
run score --list-policies
check "--list-policies exits 0" [ "$rc" -eq 0 ]
check "--list-policies prints $n_policies names" [ "$(printf '%s\n' "$out" | wc -l)" -eq $n_policies ]
check "--list-policies includes sos10" grep -qx sos10 "$tmp/out"
check "--list-policies includes brfs-norm" grep -qx brfs-norm "$tmp/out"
policies=$out

n_machines=6 # in $cluster
for p in $policies; do
    run score --policy "$p" --cluster "$cluster" --task "$task"
    check "$p: text exits 0" [ "$rc" -eq 0 ]
    check "$p: text has a chosen line" grep -qE '^chosen: ' "$tmp/out"
    check "$p: text counts infeasible machines" grep -qE "^infeasible: [0-9]+ of $n_machines machines" "$tmp/out"
    text_chosen=$(sed -n 's/^chosen: \([^ ]*\) .*/\1/p' "$tmp/out")

    run score --policy "$p" --cluster "$cluster" --task "$task" --json
    check "$p: --json exits 0" [ "$rc" -eq 0 ]
    cp "$tmp/out" "$tmp/$p.json"
    check "$p: --json prints valid JSON" is_json "$tmp/$p.json"
    check "$p: --json is consistent" json_consistent "$tmp/$p.json" "$n_machines"
    check "$p: --json and text choose the same machine" \
        contains "$out" "\"machine\": \"$text_chosen\""
done

# ---- DESIGN.md section 4: 1-D sum of squares ----
run score --policy sos10 --cluster "$fx/sos-example/cluster.json" --task "$fx/sos-example/task.json"
check "sos example exits 0" [ "$rc" -eq 0 ]
check "sos example chooses M1 with score 6" contains "$out" "chosen: M1 (index 0, score 6)"
check "sos example ranks M1 first with 6" grep -qE '^ +1  M1 +0 +6 ' "$tmp/out"
check "sos example lists M2 with 6" grep -qE '^ +2  M2 +1 +6 ' "$tmp/out"
check "sos example lists M3 with 8" grep -qE '^ +3  M3 +2 +8 ' "$tmp/out"
check "sos example does not list M4" not grep -qE '  M4  ' "$tmp/out"
check "sos example has M4 infeasible" contains "$out" "infeasible: 1 of 4 machines"

# ---- a task that fits nowhere is an answer ----
run score --policy bestfit1 --cluster "$cluster" --task "$fx/task-too-big.json"
check "too-big task exits 0" [ "$rc" -eq 0 ]
check "too-big task prints chosen: none" contains "$out" "chosen: none"
check "too-big task has all machines infeasible" contains "$out" "infeasible: $n_machines of $n_machines machines"
run score --policy bestfit1 --cluster "$cluster" --task "$fx/task-too-big.json" --json
check "too-big task --json exits 0" [ "$rc" -eq 0 ]
check "too-big task --json has chosen null" contains "$out" '"chosen": null'

# ---- invalid inputs ----
for d in "$fx"/invalid/*/; do
    d=${d%/}
    name=${d##*/}
    c=$cluster
    t=$task
    p=bestfit1
    [ -f "$d/cluster.json" ] && c=$d/cluster.json
    [ -f "$d/task.json" ] && t=$d/task.json
    [ -f "$d/policy" ] && p=$(cat "$d/policy")
    run score --policy "$p" --cluster "$c" --task "$t"
    check "invalid/$name: exits non-zero" [ "$rc" -ne 0 ]
    if [ -f "$d/status" ]; then
        check "invalid/$name: exits $(cat "$d/status") (got $rc)" [ "$rc" -eq "$(cat "$d/status")" ]
    fi
    check "invalid/$name: stderr has '$(cat "$d/error")' (got '$err')" \
        contains "$err" "$(cat "$d/error")"
    check "invalid/$name: nothing on stdout" [ -z "$out" ]
done

# ---- files and command line ----
run score --policy bestfit1 --cluster "$fx/no-such-cluster.json" --task "$task"
check "missing cluster file exits 1" [ "$rc" -eq 1 ]
check "missing cluster file is named" contains "$err" "$fx/no-such-cluster.json: cannot open file"
run score --policy bestfit1 --cluster "$cluster" --task "$fx/no-such-task.json"
check "missing task file exits 1" [ "$rc" -eq 1 ]
check "missing task file is named" contains "$err" "$fx/no-such-task.json: cannot open file"
run score --policy bestfit1 --task "$task"
check "missing --cluster exits 2" [ "$rc" -eq 2 ]
check "missing --cluster is named" contains "$err" "missing --cluster"
run score --policy random --cluster "$cluster" --task "$task" --seed 12x
check "bad --seed exits 2" [ "$rc" -eq 2 ]
check "bad --seed names flag and value" contains "$err" "invalid value '12x' for --seed"
run score --policy random --cluster "$cluster" --task "$task" --seed=18446744073709551615
check "largest --seed is accepted" [ "$rc" -eq 0 ]
run score --policy random --cluster "$cluster" --task "$task" --seed 7
first=$out
run score --policy random --cluster "$cluster" --task "$task" --seed 7
check "same --seed, same output" [ "$out" = "$first" ]
run frobnicate
check "unknown command exits 2" [ "$rc" -eq 2 ]
check "unknown command is named" contains "$err" "lotus-sim: unknown command 'frobnicate' (known: score, place, replay, tx, merge, compare, slots, lotes, queue, whatif)"
run --version
check "--version exits 0" [ "$rc" -eq 0 ]
check "--version prints the version" contains "$out" "lotus-sim "
run --help
check "--help exits 0 and lists score" [ "$rc" -eq 0 ]
check "--help lists score" contains "$out" "score"
run --help
check "--help names lotes as replay/tx only" contains "$out" "replay, tx     the placement policies and lotes"
check "--help lists the placement policies" contains "$out" "brfs-dot, brfs-norm"
run
check "no command exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "no command prints the usage on stderr" contains "$err" "usage: lotus-sim <command>"
check "no command: nothing on stdout" [ -z "$out" ]
run replya --trace x
check "mistyped command exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "mistyped command: did you mean ($err)" \
    contains "$err" "lotus-sim: unknown command 'replya' (did you mean replay?) (known: score,"
run help replay
check "help replay exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "help replay is replay --help" [ "$out" = "$("$sim" replay --help)" ]
run help lotes tables
check "help lotes tables is lotes tables --help" [ "$out" = "$("$sim" lotes tables --help)" ]
run help
check "help alone is --help" [ "$out" = "$("$sim" --help)" ]
run help nosuch
check "help of an unknown command exits 2 (got $rc)" [ "$rc" -eq 2 ]
for h in --help -h; do
    run score $h
    check "score $h exits 0 (got $rc)" [ "$rc" -eq 0 ]
    check "score $h shows the seed's default" contains "$out" "seed of the policy's random stream (default 1)"
    check "score $h shows an example" contains "$out" "example:"
    check "score $h: nothing on stderr" [ -z "$err" ]
done

# ---- the option table: suggestions, --list-policies alone ----
run score --polcy bestfit1 --cluster "$cluster" --task "$task"
check "mistyped option exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "mistyped option: did you mean ($err)" \
    contains "$err" "lotus-sim: unknown option '--polcy' (did you mean --policy?)"
check "mistyped option: one prefix per line" [ "$(printf '%s\n' "$err" | grep -c '^lotus-sim: ')" -eq 2 ]
run score --policy bestfit1 --cluster "$cluster" --taks="$task"
check "mistyped --task= suggests --task ($err)" contains "$err" "(did you mean --task?)"
run score --policy sos1 --cluster "$cluster" --task "$task"
check "mistyped policy exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "mistyped policy: did you mean ($err)" contains "$err" "unknown policy 'sos1' (did you mean sos10?)"
check "mistyped policy: hint" contains "$err" "lotus-sim: try 'lotus-sim score --list-policies'"
run score --policy lotes --cluster "$cluster" --task "$task"
check "lotes is not a placement policy (got $rc)" [ "$rc" -eq 2 ]
check "lotes: the known list has no lotes ($err)" contains "$err" "brfs-norm)"
run score --list-policies --policy bestfit1
check "--list-policies with --policy exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "--list-policies alone: says so" contains "$err" "--list-policies takes no other options"
run score --policy bestfit1 --cluster "$cluster" --task "$task" stray
check "a stray argument exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "a stray argument is named" contains "$err" "unexpected argument 'stray'"
run score --policy bestfit1 --cluster "$cluster" --task
check "a missing value exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "a missing value is named" contains "$err" "missing value for --task"
run score --policy=bestfit1 --cluster="$cluster" --task="$task"
check "--flag=VALUE works (got $rc)" [ "$rc" -eq 0 ]
check "--flag=VALUE: the same output" contains "$out" "chosen: a3 (index 2, score 0.125)"

finish
