#!/usr/bin/env bash
# betser.sh -- regenerates lotus's side of Betser's what-if (docs/reproduction.md, "Betser"):
# Bob's job (Betser's use case, tests/data/whatif/bob.json) and an 8 GB variant
# (bob-8gb.json), injected at a uniform instant in [1 h, 2 h] of the sample parts (Method I),
# with the running tasks' remaining lives resampled (Method III), at several shrink levels,
# under the priority order and an SLA order, each priced by two by-deadline SLAs that differ
# only in the penalty (-1 and -3), on the same replicas.
#
# usage: tests/repro/betser.sh [--bin PATH] [--out DIR] [--replicas N] [-j N]
#   --bin       lotus-sim (default build/lotus-sim)
#   --out       where the runs go (default out/betser); earlier runs there are replaced
#   --replicas  replicas per run (default 100)
#   -j          parallel replicas (default 2)
#
# Prints one line per job, order, shrink level and SLA: P(d <= 60 s), p50 and p90 of the
# start delay, E[reward], P(reward < 0), from each run's summary.json. The sample parts are
# ../shared/data/clusterdata-2011-2 (LOTUS_SAMPLE_TRACE overrides).
#
# SPDX-License-Identifier: MIT
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/lotus-sim
out=out/betser
replicas=100
jobs=2
while [ $# -gt 0 ]; do
    case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "betser.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || { echo "betser.sh: no lotus-sim at '$bin' (build first, or --bin)" >&2; exit 2; }
trace=${LOTUS_SAMPLE_TRACE:-$root/../shared/data/clusterdata-2011-2}
[ -d "$trace/task_events" ] || { echo "betser.sh: no trace at '$trace'" >&2; exit 2; }
command -v python3 >/dev/null || { echo "betser.sh: python3 is needed for the table" >&2; exit 2; }

sla=(--sla pen1=by-deadline:pen=-1,d1=60s,d2=120s --sla pen3=by-deadline:pen=-3,d1=60s,d2=120s)
for job in bob-8gb bob; do
    shrink=100,90,80
    [ "$job" = bob ] && shrink=100,90
    for order in priority sla-slope; do
        "$bin" whatif --trace "$trace" --job "$root/tests/data/whatif/$job.json" \
            --at random:1h:2h --replicas "$replicas" --seed 1 --resample-running \
            --shrink "$shrink" "${sla[@]}" --order "$order" -j "$jobs" \
            --out "$out/$job-$order" --force --quiet
    done
done

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print("job      order      shrink  P(d<=60s)  p50 (s)  p90 (s)  sla   E[reward]  P(r<0)")
for job in ("bob-8gb", "bob"):
    for order in ("priority", "sla-slope"):
        d = json.load(open(f"{out}/{job}-{order}/summary.json"))
        for lv in d["levels"]:
            q = lv["delay_quantiles_s"]
            for s in lv["sla"]:
                bound = "<=" if s["expected_reward_is_upper_bound"] else "  "
                print(f"{job:8s} {order:10s} {lv['shrink_pct']:5.0f} %  {s['p_start_within_knee']:9.2f}"
                      f"  {q['p50']:7.1f}  {q['p90']:7.1f}  {s['sla']:5s} {bound}{s['expected_reward']:7.3f}"
                      f"  {s['p_reward_negative']:6.2f}")
PY
