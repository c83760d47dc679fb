#!/usr/bin/env bash
# bench_scheduler.sh -- pods per second through the real kube-scheduler with no extender, with
# lotus-extender and with a trivial Go extender, 1,000 pods on 500 and on 5,000 nodes; JSON
# lines on stdout (docs/benchmarks.md, "Scheduler throughput"). The code is
# tests/e2e/bench_test.go (TestSchedulerBench), on the e2e suite's control plane.
#
# Usage: tests/bench/bench_scheduler.sh [NODES,...]    (default 500,5000)
# Needs `make build e2e-build` first (make bench-scheduler does both).
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
go=$(bash "$root/tests/e2e/find-go")
cd "$root/tests/e2e"
LOTUS_E2E_BENCH=1 LOTUS_E2E_BENCH_NODES=${1:-500,5000} \
    LOTUS_BUILD=${LOTUS_BUILD:-$root/build} LOTUS_E2E_BIN=${LOTUS_E2E_BIN:-$root/build-e2e/bin} \
    "$go" test -v -count=1 -timeout 60m -run '^TestSchedulerBench$' . 2>/dev/null | grep '^{'
