#!/usr/bin/env bash
# test_whatif_cli.sh -- `lotus-sim whatif` (docs/whatif.md): every usage error with its exit
# status and message, a job file error naming the file and JSON path, a run on the demo trace
# and its files (censored replicas in the denominator), determinism by --seed, --out and
# --force, Method II's refusal on a 3-hour trace; SLA rewards by hand (started and censored),
# common random numbers, the hint, cdf_reward.csv, --until-complete, --order sla-reward against
# priority, report.html. The last line is "N passed, M failed".
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
usage "bad --sla kind" "--sla: unknown SLA kind 'soon'" "${base[@]}" --at 10 --sla soon
usage "bad --sla knees" "--sla: " "${base[@]}" --at 10 --sla a=by-deadline:d1=2h,d2=1h
check "bad --sla knees: the text" contains "$err" "d1=2h,d2=1h"
usage "bad --sla name" "--sla: 'a b=by-deadline'" "${base[@]}" --at 10 --sla 'a b=by-deadline'
usage "--sla name twice" "the name 'a' is given twice" "${base[@]}" --at 10 --sla a=by-deadline --sla a=cheap-and-simple
usage "SLA order without --sla" "--order sla-reward needs --sla" "${base[@]}" --at 10 --order sla-reward
usage "bad --order" "--order: 'sjf'" "${base[@]}" --at 10 --order sjf --sla by-deadline
usage "bad --sla-scope" "--sla-scope: 'all'" "${base[@]}" --at 10 --order sla-reward --sla by-deadline --sla-scope all

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
check "replicas.csv header" [ "$(head -1 o1/replicas.csv)" = "replica,seed,t_inj_s,shrink_pct,machines_kept,start_delay_s,censored,reason,queued_at_inj,running_at_inj,tasks_started,completion_delay_s,sla,reward,reward_censored" ]
check "no --sla: no reward" [ "$(tail -n +2 o1/replicas.csv | cut -d, -f12- | sort -u)" = ",,," ]
check "no --sla: no cdf_reward.csv" [ ! -e o1/cdf_reward.csv ]
check "report.html" grep -q '<svg' o1/report.html
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

# SLA rewards by hand: a fixed instant (the job starts within a second there once the running
# tasks get new lives); d read back, r(d) computed here.
# a: by-deadline with d1 = 0, d2 = 10 s: r = 1 - 0.2 d on the slope;
# b: cheap-and-simple d0 = 0, k = 1/s: r = 0.1 + 0.9 exp(-d); e: example1 target 2x = 1200 s,
# prices 2 and 1: 3 tasks x 0.02 cpu x 600 s = 0.01 cpu-h off peak (Sunday evening) = 0.01.
run "${base[@]}" --at 1000 --resample-running --out s1 --sla a=by-deadline:d1=0,d2=10 --sla b=cheap-and-simple:d0=0,k=1 --sla e=example1:target=2x,peak=2,offpeak=1 --until-complete
check "sla run: exit 0" [ "$rc" -eq 0 ]
check "sla run: table" contains "$out" "E[reward]"
check "sla rows: 6 x 3" [ "$(wc -l <s1/replicas.csv)" -eq 19 ]
check "rewards by hand" python3 -c '
import csv, math
for r in csv.DictReader(open("s1/replicas.csv")):
    d = float(r["start_delay_s"]); v = float(r["reward"])
    assert r["censored"] == "0" and r["reward_censored"] == "0" and 0 < d < 10, r
    want = {"a": 1 - 0.2 * d, "b": 0.1 + 0.9 * math.exp(-d), "e": 0.01}[r["sla"]]
    assert abs(v - want) < 1e-6, (r, want)
    c = float(r["completion_delay_s"])
    assert c >= d + 600 - 1e-6, r
'
check "sla run: Nx resolved" python3 -c '
import json
j = json.load(open("s1/summary.json"))
assert j["sla_times_relative_to_s"] == 600 and j["slas"][2]["parameters"]["target_s"] == 1200
assert all("hint" not in s for l in j["levels"] for s in l["sla"])
'
check "cdf_reward.csv: 101 rows per setting" [ "$(grep -c ',a,' s1/cdf_reward.csv)" -eq 101 ]
# Censored rewards: not started within 60 s, so r(60): a = 1 - 2 (30 / 90) = 1/3, an upper
# bound (r still falls until 120 s); p = by-deadline d2 = 50 s: exactly -1, and the hint.
run whatif --trace "$demo" --job wait.json --replicas 3 --at 100 --horizon 60 --start all --out s2 --sla a=by-deadline:d1=30,d2=120 --sla p=by-deadline:d1=10,d2=50
check "censored sla: exit 0" [ "$rc" -eq 0 ]
check "censored sla: hint on stdout" contains "$out" "expected reward negative: do not offer this SLA"
check "censored rewards: r(H)" python3 -c '
import csv, json
rows = list(csv.DictReader(open("s2/replicas.csv")))
assert len(rows) == 6
for r in rows:
    assert r["censored"] == "1" and r["reward_censored"] == "1" and r["completion_delay_s"] == ""
    want = {"a": 1 / 3, "p": -1.0}[r["sla"]]
    assert abs(float(r["reward"]) - want) < 1e-6, r
j = json.load(open("s2/summary.json"))
a, p = j["levels"][0]["sla"]
assert a["expected_reward_is_upper_bound"] and not p["expected_reward_is_upper_bound"]
assert "hint" not in a and p["hint"] == "expected reward negative: do not offer this SLA"
assert abs(p["p_reward_negative"] - 1) < 1e-12 and p["p_start_within_knee"] == 0
'
# Common random numbers, cdf_reward.csv, and sla-reward against priority, replica by replica.
cat >mid.json <<'J'
{"priority":9,"tasks":[{"count":4,"cpu":0.3,"mem":0.2,"disk":0,"duration_s":600}]}
J
crn=(whatif --trace "$demo" --job mid.json --replicas 8 -j 2 --at random --shrink 50 --resample-running --sla x=by-deadline:d1=1,d2=60 --sla y=by-deadline:pen=-3,d1=1,d2=60 --horizon 1h)
run "${crn[@]}" --out c1
check "crn: exit 0" [ "$rc" -eq 0 ]
run "${crn[@]}" --out c2 --order sla-reward
check "sla order: exit 0" [ "$rc" -eq 0 ]
check "sla order: the note" contains "$out" "sla-reward, sla-deadline and sla-slope rank it alike"
run "${crn[@]}" --out c3 --sla-scope sla-first
check "--sla-scope without SLA order: warning" contains "$err" "--sla-scope does not apply"
check "crn and orders" python3 -c '
import csv
def rows(d):
    return list(csv.DictReader(open(d + "/replicas.csv")))
def delay(r):
    return float(r["start_delay_s"]) if r["start_delay_s"] else float("inf")
p, s = rows("c1"), rows("c2")
assert len(p) == 16 and len(s) == 16
for k in range(0, 16, 2):  # the two settings of one replica: same start
    assert p[k]["sla"] == "x" and p[k + 1]["sla"] == "y"
    assert p[k]["start_delay_s"] == p[k + 1]["start_delay_s"] and p[k]["seed"] == p[k + 1]["seed"]
for a, b in zip(p, s):
    assert a["seed"] == b["seed"] and a["t_inj_s"] == b["t_inj_s"]
    assert delay(b) <= delay(a), (a, b)
assert any(delay(b) < delay(a) for a, b in zip(p, s))  # ranking first matters here
cdf = {}
for r in csv.DictReader(open("c1/cdf_reward.csv")):
    cdf.setdefault(r["sla"], []).append(float(r["value"]))
for name, v in cdf.items():
    assert len(v) == 101 and all(x <= y for x, y in zip(v, v[1:])), name
    assert v[-1] == max(float(r["reward"]) for r in p if r["sla"] == name)
'
# --sla @FILE (an SLA file: the same settings as the texts) and, with --sla-annotate and an SLA
# order, each setting its own set of replicas on the same seeds.
cat >slas.json <<'J'
{"slas": [{"name": "x", "shape": "by-deadline", "d1": 1, "d2": "1m"},
          {"name": "y", "shape": "by-deadline", "pen": -3, "d1": "1s", "d2": 60}]}
J
printf '{"slas": [{"name": "x", "shape": "by-deadline", "d1": "2h", "d2": "1h"}]}' >badsla.json
cat >ann.json <<'J'
{"rules": [{"name": "prod", "band": "prod", "sla": "by-deadline:d1=5m,d2=30m"},
           {"name": "rest", "sla": {"shape": "by-deadline", "d1": "2x", "d2": "4x"}}]}
J
crnf=(whatif --trace "$demo" --job mid.json --replicas 8 -j 2 --at random --shrink 50 --resample-running --sla @slas.json --horizon 1h)
run "${crnf[@]}" --out c4
check "--sla @FILE: exit 0 ($err)" [ "$rc" -eq 0 ]
check "--sla @FILE: the same rows as the texts" [ "$(cut -d, -f1-15 c4/replicas.csv)" = "$(cut -d, -f1-15 c1/replicas.csv)" ]
usage "bad SLA file" 'badsla.json: $.slas[0].d2: SLA '"'x'"': d1 (7200 s) must be <= d2 (3600 s)' "${base[@]}" --at 10 --sla @badsla.json
usage "SLA file name twice" "the name 'x' is given twice" "${base[@]}" --at 10 --sla @slas.json --sla x=by-deadline
run "${crnf[@]}" --out c5 --sla-annotate ann.json
check "--sla-annotate without SLA order: warning" contains "$err" "--sla-annotate does not apply without an SLA order"
check "--sla-annotate without SLA order: as before" [ "$(cut -d, -f1-15 c5/replicas.csv)" = "$(cut -d, -f1-15 c1/replicas.csv)" ]
run "${crnf[@]}" --out c6 --order sla-deadline --sla-annotate ann.json --sla-scope sla-first --reprioritise 60s
check "per-setting replicas: exit 0 ($err)" [ "$rc" -eq 0 ]
check "per-setting replicas: the note" contains "$out" "each --sla setting is simulated as its own set of replicas"
check "per-setting replicas: cdf_start.csv has the setting" [ "$(head -1 c6/cdf_start.csv)" = "shrink_pct,sla,quantile,value" ]
check "per-setting replicas: the report's start CDF per setting" contains "$(cat c6/report.html)" \
    "one curve per SLA setting and --shrink level"
check "per-setting replicas: the report's table per setting" contains "$(cat c6/report.html)" \
    "<tr><th>SLA</th><th>shrink</th>"
check "per-setting replicas: common random numbers" python3 -c '
import csv, json
p = list(csv.DictReader(open("c6/replicas.csv")))
assert len(p) == 16
for k in range(0, 16, 2):  # the two settings of one replica: its seed, instant, machines
    a, b = p[k], p[k + 1]
    assert a["sla"] == "x" and b["sla"] == "y"
    for f in ("seed", "t_inj_s", "machines_kept", "queued_at_inj", "running_at_inj"):
        assert a[f] == b[f], (f, a, b)
j = json.load(open("c6/summary.json"))
assert all("start" in s for s in j["levels"][0]["sla"])
'
check "report: reward panels" python3 -c '
h = open("c1/report.html").read()
assert h.count("<svg") == 4 and "P(not started by H)" in h and "mock-up" in h
'

finish
