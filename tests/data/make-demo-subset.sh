#!/bin/sh
# make-demo-subset.sh -- builds tests/data/clusterdata-2011-2-demo/ from the real samples.
#
# Keeps about 10% of the machines of machine_events and about 10% of the jobs of
# task_events/job_events parts 00000-00001 (every event of a kept job), chosen by the same
# deterministic hash of the ID, so that the workload roughly matches the machines and the
# result is the same on every run. Parts keep their names and their order; rows keep their
# bytes. Output is gzip -n (no name or time stamp), so it is byte-reproducible.
#
# Usage: tests/data/make-demo-subset.sh [SRC [OUT]]
#   SRC defaults to ../shared/data/clusterdata-2011-2 (relative to the repository root),
#   OUT to tests/data/clusterdata-2011-2-demo.
# Source data: Google clusterdata-2011-2, CC-BY 4.0 (see OUT/README.md).
#
# SPDX-License-Identifier: MIT
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$root/../shared/data/clusterdata-2011-2}
out=${2:-$root/tests/data/clusterdata-2011-2-demo}

# keep(id): 1 for about one ID in ten. IDs reach ~6.3e9, so every intermediate value stays
# far below 2^53 and awk's doubles compute it exactly. Plain id % 10 would do for machines,
# but job sizes differ so much that a residue can hold 5% or 20% of the task rows; mixing
# with 7919 gives 11% of the task rows of parts 00000-00001.
filter() { # $1 = 1-based column of the ID
    awk -F, -v col="$1" '(($col % 1000003) * 7919) % 10 == 0'
}

subset() { # $1 = table, $2 = part file name, $3 = ID column
    mkdir -p "$out/$1"
    gzip -dc "$src/$1/$2" | filter "$3" | gzip -n -9 > "$out/$1/$2"
}

for t in machine_events task_events job_events; do
    test -d "$src/$t" || { echo "make-demo-subset.sh: no $src/$t" >&2; exit 1; }
done
rm -rf "$out/machine_events" "$out/task_events" "$out/job_events"
subset machine_events part-00000-of-00001.csv.gz 2
for p in part-00000-of-00500.csv.gz part-00001-of-00500.csv.gz; do
    subset task_events "$p" 3
    subset job_events "$p" 3
done

for f in "$out"/*/*.csv.gz; do
    printf '%s: %s rows, %s bytes\n' "${f#"$out"/}" "$(gzip -dc "$f" | wc -l)" "$(wc -c < "$f")"
done
