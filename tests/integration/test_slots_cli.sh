#!/usr/bin/env bash
# test_slots_cli.sh -- end-to-end checks of `lotus-sim slots`: a short run of every policy
# in text and --json mode, the JSON's own consistency (completed + dropped = tasks, classes
# summing to completed), determinism by --seed, and command-line errors with exit status 2.
#
# Usage: test_slots_cli.sh LOTUS_SIM
# Every run must also be free of sanitizer reports, so the ASan build can run this script.
# The last line is "N passed, M failed"; the exit status is 1 if any check failed.
#
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 LOTUS_SIM" >&2
    exit 2
fi
sim=$1

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

run slots --help
check "--help exits 0" [ "$rc" -eq 0 ]
check "--help names the workloads" contains "$out" "w-d, w-e, w-d_l, w-e_l"

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
: >"$tmp/file"
run slots --workload w-d --hours 1 --out "$tmp/file/x"
check "--out under a file: exit 1" [ "$rc" -eq 1 ]
check "--out under a file: says so" contains "$err" "cannot create directory"

bad() { # bad EXPECTED-TEXT ARGS...: exit 2 and the message on stderr
    local want=$1
    shift
    run slots "$@"
    check "slots $*: exit 2" [ "$rc" -eq 2 ]
    check "slots $*: says '$want'" contains "$err" "$want"
}
bad "--workload is required"
bad "unknown workload 'w-x'" --workload w-x
bad "unknown option '--frob'" --workload w-d --frob
bad "--policy 'lifo'" --workload w-d --policy lifo
bad "--evict 'foo'" --workload w-d --evict foo
bad "threshold must be >= 1" --workload w-d --evict mrs0
bad "--memory 'some'" --workload w-d --memory some
bad "--slots 'sc5'" --workload w-d --slots sc5
bad "--servers 'big'" --workload w-d --servers big
bad "--sticky applies to --policy hybrid only" --workload w-d --sticky 5
bad "the cluster has 3072 slots" --workload w-d --policy hybrid --sticky 5000
bad "--hours 0" --workload w-d --hours 0
bad "missing value for --seed" --workload w-d --seed

finish
