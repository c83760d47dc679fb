#!/usr/bin/env bash
# test_place_cli.sh -- checks of `lotus-sim place` on the score fixtures.
#
# Usage: test_place_cli.sh LOTUS_SIM FIXTURES_DIR   (FIXTURES_DIR is tests/fixtures)
#
# For every policy: the first task goes where `lotus-sim score` chooses for it alone; the
# sequence is deterministic; --json and CSV agree. A one-machine cluster fills up after a
# hand-computed number of tasks; bad inputs name the file and the JSON path.
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
tasks=$fx/tasks.json

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# The first task of tasks.json alone, for `score`.
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))[0], open(sys.argv[2], "w"))' \
    "$tasks" "$tmp/task0.json"

run score --list-policies
policies=$out
for p in $policies; do
    run place --policy "$p" --cluster "$cluster" --tasks "$tasks"
    check "$p: exits 0" [ "$rc" -eq 0 ]
    check "$p: header and one row per task" [ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ]
    check "$p: the 4-cpu task fits nowhere" contains "$out" "3,4,"
    first=$(printf '%s\n' "$out" | sed -n 2p | cut -d, -f3)
    csv=$out
    run place --policy "$p" --cluster "$cluster" --tasks "$tasks"
    check "$p: the same answer twice" [ "$out" = "$csv" ]
    run score --policy "$p" --cluster "$cluster" --task "$tmp/task0.json"
    check "$p: the first task goes where score chooses ($first)" contains "$out" "chosen: $first "
    run place --policy "$p" --cluster "$cluster" --tasks "$tasks" --json
    check "$p: --json exits 0" [ "$rc" -eq 0 ]
    check "$p: --json agrees with CSV" python3 - "$tmp/out" "$csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [l.split(",") for l in sys.argv[2].splitlines()[1:]]
assert [p["machine"] or "" for p in d["placements"]] == [r[2] for r in rows], (d, rows)
assert d["placed"] + d["unplaced"] == len(rows)
PY
done

# One machine of 1 cpu: tasks of 0.375 cpu fit twice (0.75), the third does not; a later
# 0.25 task still fits (0.25 left): unplaced tasks change nothing.
cat >"$tmp/one.json" <<'J'
{"machines": [{"name": "m", "capacity": {"cpu": 1, "mem": 1, "disk": 1}}]}
J
cat >"$tmp/seq.json" <<'J'
[{"id": 1, "request": {"cpu": 0.375, "mem": 0.1, "disk": 0}},
 {"id": 2, "request": {"cpu": 0.375, "mem": 0.1, "disk": 0}},
 {"id": 3, "request": {"cpu": 0.375, "mem": 0.1, "disk": 0}},
 {"id": 4, "request": {"cpu": 0.25, "mem": 0.1, "disk": 0}},
 {"id": 5, "request": {"cpu": 0.01, "mem": 0.1, "disk": 0}}]
J
run place --policy firstfit --cluster "$tmp/one.json" --tasks "$tmp/seq.json"
check "fill-up: exits 0" [ "$rc" -eq 0 ]
check "fill-up: placements m,m,-,m,- (got $out)" \
    [ "$(printf '%s\n' "$out" | tail -n +2 | cut -d, -f3 | tr '\n' ' ')" = "m m  m  " ]

# Bad inputs.
echo '[{"id": 1, "request": {"cpu": "x", "mem": 0, "disk": 0}}]' >"$tmp/bad.json"
run place --policy bestfit1 --cluster "$cluster" --tasks "$tmp/bad.json"
check "bad task: exits 1" [ "$rc" -eq 1 ]
check "bad task: names file and path (got '$err')" contains "$err" "$tmp/bad.json: \$[0].request.cpu"
echo '{"id": 1}' >"$tmp/obj.json"
run place --policy bestfit1 --cluster "$cluster" --tasks "$tmp/obj.json"
check "not an array: exits 1" [ "$rc" -eq 1 ]
check "not an array: says so (got '$err')" contains "$err" "expected an array of tasks"
run place --policy nosuch --cluster "$cluster" --tasks "$tasks"
check "unknown policy: exits 2" [ "$rc" -eq 2 ]
run place --cluster "$cluster" --tasks "$tasks"
check "missing --policy: exits 2" [ "$rc" -eq 2 ]
for h in --help -h; do
    run place $h
    check "place $h exits 0 (got $rc)" [ "$rc" -eq 0 ]
    check "place $h shows an example" contains "$out" "example:"
    check "place $h shows the seed's default" contains "$out" "(default 1)"
done
run place --list-policies
check "place --list-policies exits 0" [ "$rc" -eq 0 ]
check "place --list-policies is score's" [ "$out" = "$policies" ]
run place --policy bestfit --cluster "$cluster" --tasks "$tasks"
check "mistyped policy exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "mistyped policy: did you mean ($err)" contains "$err" "unknown policy 'bestfit' (did you mean bestfit1?)"
check "mistyped policy: hint" contains "$err" "lotus-sim: try 'lotus-sim place --list-policies'"
run place --policy bestfit1 --cluster "$cluster" --task "$tasks"
check "--task for --tasks exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "--task for --tasks: did you mean ($err)" contains "$err" "unknown option '--task' (did you mean --tasks?)"
check "--task for --tasks: one prefix per line" [ "$(printf '%s\n' "$err" | grep -c '^lotus-sim: ')" -eq 2 ]
run place --policy bestfit1 --cluster "$cluster" --tasks "$tasks" --seed=-1
check "--seed=-1 exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "--seed=-1 is named" contains "$err" "invalid value '-1' for --seed"

finish
