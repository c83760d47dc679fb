#!/usr/bin/env bash
# stein.sh -- regenerates lotus's side of Stein, Henzinger and Radovanovic's comparison tables
# (docs/reproduction.md, "Stein, Henzinger and Radovanovic"): the slides' eleven policies, every
# x of T(x), several seeds, on the bundled demo and on the sample parts, under seven starts and
# scheduler models, each pooled over the two traces with `lotus-sim compare`.
#
# usage: tests/repro/stein.sh [--bin PATH] [--out DIR] [--seeds N] [-j N] [--configs LIST]
#   --bin      lotus-sim (default build/lotus-sim)
#   --out      where the sweeps go (default out/stein); an existing sweep is kept and reused
#   --seeds    seeds per (policy, x) (default 3)
#   -j         parallel runs (default 2)
#   --configs  comma-separated subset of the configurations below (default all)
#
# Prints one line per configuration and table: the cases, Spearman's rho with the slides, and
# the three policies most often best, from DIR/<config>/compare.csv and compare.json.
# The sample parts are ../shared/data/clusterdata-2011-2 (LOTUS_SAMPLE_TRACE overrides); a
# machine without them runs the demo only.
#
# SPDX-License-Identifier: MIT
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/lotus-sim
out=out/stein
seeds=3
jobs=2
configs=repack,trace,repack-bands,trace-bands,trace-prod,repack-oc,trace-oc-bands
while [ $# -gt 0 ]; do
    case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "stein.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || { echo "stein.sh: no lotus-sim at '$bin' (build first, or --bin)" >&2; exit 2; }

policies=randfirstfit,firstfit,bestfit1,bestfit2,bestfit3,bestfit4,epvm,epvm2,sos10,sos20,random
demo=$root/tests/data/clusterdata-2011-2-demo
sample=${LOTUS_SAMPLE_TRACE:-$root/../shared/data/clusterdata-2011-2}
traces="demo"
[ -d "$sample/task_events" ] && traces="demo sample"

# The options of each configuration (docs/simulator.md: "Initial state", "Preemption",
# "Overcommit").
options() {
    case $1 in
    repack) echo "--initial-state repack" ;;
    trace) echo "--initial-state trace" ;;
    repack-bands) echo "--initial-state repack --preempt bands" ;;
    trace-bands) echo "--initial-state trace --preempt bands" ;;
    trace-prod) echo "--initial-state trace --preempt prod" ;;
    repack-oc) echo "--initial-state repack --overcommit cpu=1.5,mem=1.15" ;;
    trace-oc-bands) echo "--initial-state trace --preempt bands --overcommit cpu=2,mem=2" ;;
    *) echo "stein.sh: unknown configuration '$1'" >&2; return 2 ;;
    esac
}

# The three policies most often best in one table of a compare.csv ("name:count ...").
top3() {
    awk -F, -v m="$2" -v r="$3" '$1 == m && $2 == r && $5 > 0 { print $5, $3 }' "$1" |
        sort -k1,1nr -k2,2 | head -3 | awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 }'
}

mkdir -p "$out"
for c in ${configs//,/ }; do
    opts=$(options "$c")
    dirs=()
    for t in $traces; do
        dir=$out/$c-$t
        trace=$demo
        [ "$t" = sample ] && trace=$sample
        if [ ! -s "$dir/compare.json" ]; then
            # shellcheck disable=SC2086 # opts is a list of options
            "$bin" tx --trace "$trace" --policy "$policies" --seeds "$seeds" -j "$jobs" --compare \
                --no-report --quiet --force --out "$dir" $opts >"$dir.log" 2>&1 ||
                { echo "stein.sh: $c on $t failed, see $dir.log" >&2; exit 1; }
        fi
        dirs+=("$dir")
    done
    "$bin" compare "${dirs[@]}" --out "$out/$c" --force >"$out/$c.log" 2>&1 ||
        { echo "stein.sh: compare of $c failed, see $out/$c.log" >&2; exit 1; }
    for m in throughput useful_work; do
        for r in all 80-90; do
            rho=$(tr -d '\n ' <"$out/$c/compare.json" |
                grep -o "\"metric\":\"$m\",\"range\":\"$r\",[^}]*" | grep -o '"spearman":[^,}]*' |
                cut -d: -f2)
            cases=$(awk -F, -v m="$m" -v r="$r" '$1 == m && $2 == r { print $4; exit }' \
                "$out/$c/compare.csv")
            printf '%-15s %-11s %-5s cases %-4s rho %-9s best: %s\n' "$c" "$m" "$r" "$cases" \
                "$rho" "$(top3 "$out/$c/compare.csv" "$m" "$r")"
        done
    done
done
