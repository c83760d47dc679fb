# Makefile -- thin wrapper over CMake: deps, build, run (demo), test (plain + ASan/UBSan),
# bench. SPDX-License-Identifier: MIT
SHELL := /bin/bash
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan
BENCH_BUILD ?= build-bench
SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find scoring simulator extender eviction lotes tests -name '*.[ch]')

FUZZ_BUILD ?= build-fuzz

.PHONY: all deps build run run-score test test-plain test-asan fuzz-smoke format format-check bench bench-smoke clean

all: build

deps:
	bash .ci/deps.sh

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The demo: a replay of the bundled real Google 2011 subset (tests/data, CC-BY 4.0) through
# four placement policies in parallel, the policies side by side, and an HTML report.
DEMO_TRACE = tests/data/clusterdata-2011-2-demo
DEMO_OUT ?= out/demo
run: build
	@echo "== lotus-sim replay: $(DEMO_TRACE) (Google clusterdata-2011-2 subset, CC-BY 4.0) =="
	$(BUILD)/lotus-sim replay --trace $(DEMO_TRACE) --policy bestfit1,sos10,firstfit,randfirstfit \
	    -j $(JOBS) --out $(DEMO_OUT)

# The first demo: every policy places one task on the example cluster snapshot.
run-score: build
	@for p in $$($(BUILD)/lotus-sim score --list-policies); do \
	    printf '%-13s ' "$$p"; \
	    $(BUILD)/lotus-sim score --policy $$p --cluster tests/fixtures/score/cluster.json \
	        --task tests/fixtures/score/task.json | grep '^chosen:' || exit 1; \
	done

format-check:
	clang-format --dry-run --Werror $(SOURCES)

format:
	clang-format -i $(SOURCES)

test-plain:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOTUS_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# libFuzzer on the cluster JSON loader for a few seconds, seeded with the fixtures, then on
# the trace line parsers.
fuzz-smoke:
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DLOTUS_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_cluster_json
	rm -rf $(FUZZ_BUILD)/corpus && mkdir -p $(FUZZ_BUILD)/corpus
	find tests/fixtures/score -name '*.json' | while read -r f; do \
	    cp "$$f" "$(FUZZ_BUILD)/corpus/$$(echo "$$f" | tr / _)"; done
	$(FUZZ_BUILD)/fuzz_cluster_json -max_total_time=10 -max_len=4096 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus > $(FUZZ_BUILD)/fuzz.log 2>&1; rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==ERROR)' $(FUZZ_BUILD)/fuzz.log; \
	    exit $$rc
	# The trace line parsers, seeded with real lines (the first rows and some later ones of
	# each table of the bundled demo subset) plus a few malformed lines.
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_trace_line
	rm -rf $(FUZZ_BUILD)/corpus-trace && mkdir -p $(FUZZ_BUILD)/corpus-trace
	for t in machine_events job_events task_events; do \
	    gzip -dc tests/data/clusterdata-2011-2-demo/$$t/part-00000-*.csv.gz | awk 'NR <= 8 || NR % 4000 == 0' | \
	    awk -v d=$(FUZZ_BUILD)/corpus-trace -v t=$$t '{ f = d "/" t "-" NR; printf "%s", $$0 > f; close(f) }'; \
	done
	printf '0,2,3418309,0,4155527081,0,,3,9,,,,' > $(FUZZ_BUILD)/corpus-trace/missing-info
	printf '18446744073709551615,,9223372036854775807,4294967295,,8,,,11,1e-300,2.861e-06,0,1\r' \
	    > $(FUZZ_BUILD)/corpus-trace/limits-cr
	$(FUZZ_BUILD)/fuzz_trace_line -max_total_time=10 -max_len=512 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-trace > $(FUZZ_BUILD)/fuzz-trace.log 2>&1; rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==ERROR)' $(FUZZ_BUILD)/fuzz-trace.log; \
	    exit $$rc
	# lotus-sim queue's CSV and SWF readers, seeded with the example inputs (first byte: 0 SWF,
	# 1 CSV, 2/3 strict, 4/5 need estimates) and a few malformed lines.
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_qworkload
	rm -rf $(FUZZ_BUILD)/corpus-queue && mkdir -p $(FUZZ_BUILD)/corpus-queue
	{ printf '\000'; cat tests/data/queue/example.swf; } > $(FUZZ_BUILD)/corpus-queue/swf
	{ printf '\006'; cat tests/data/queue/example.swf; } > $(FUZZ_BUILD)/corpus-queue/swf-strict
	{ printf '\001'; cat tests/data/queue/jobs.csv; } > $(FUZZ_BUILD)/corpus-queue/csv
	{ printf '\005'; cat tests/data/queue/jobs.csv; } > $(FUZZ_BUILD)/corpus-queue/csv-est
	printf '\001tasks,runtime_s,arrival_s\r\n1,1e3,0\r\n2,x,1' > $(FUZZ_BUILD)/corpus-queue/csv-bad
	printf '\000; MaxProcs: 12x\n1 0 0 10 -1 -1 -1 4 -1 -1 5 1 1 1 1 1 -1' > $(FUZZ_BUILD)/corpus-queue/swf-bad
	$(FUZZ_BUILD)/fuzz_qworkload -max_total_time=10 -max_len=4096 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-queue > $(FUZZ_BUILD)/fuzz-queue.log 2>&1; rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==ERROR)' $(FUZZ_BUILD)/fuzz-queue.log; \
	    exit $$rc
	# The extender's request decoders and response encoders, seeded with the extender/v1
	# golden strings and the malformed requests of tests/fixtures/extender.
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_extender_json
	rm -rf $(FUZZ_BUILD)/corpus-extender && mkdir -p $(FUZZ_BUILD)/corpus-extender
	find tests/fixtures/extender -type f \( -name '*.json' -o -name input \) | while read -r f; do \
	    cp "$$f" "$(FUZZ_BUILD)/corpus-extender/$$(echo "$$f" | tr / _)"; done
	$(FUZZ_BUILD)/fuzz_extender_json -max_total_time=10 -max_len=4096 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-extender > $(FUZZ_BUILD)/fuzz-extender.log 2>&1; rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==ERROR)' $(FUZZ_BUILD)/fuzz-extender.log; \
	    exit $$rc
	# The extender's config loader (file, flags, validation): CONFIG [NUL ARG]... inputs, seeded
	# with the docs' example, limits, a typo, flags, and --server with --print-config.
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_extender_config
	rm -rf $(FUZZ_BUILD)/corpus-config && mkdir -p $(FUZZ_BUILD)/corpus-config
	printf '{"listen": ":8888", "url_prefix": "/lotus", "policy": "sos10", "eviction": "lrs", "threads": 8, "max_body": "16Mi", "conn_timeout": "10s", "log_level": "info"}' \
	    > $(FUZZ_BUILD)/corpus-config/docs-example
	printf '{"listen":"[::1]:0","url_prefix":"/a/b//","seed":9223372036854775807,"max_body":1048576,"body_budget":"1Mi","request_timeout":"100ms","rebuild_interval":"0ms","assume_ttl":"1h","shutdown_timeout":"0s"}' \
	    > $(FUZZ_BUILD)/corpus-config/limits
	printf '{"polcy":"bestfit1","threads":"4"}' > $(FUZZ_BUILD)/corpus-config/typo
	printf '{}\0--policy\0epvm2\0--listen=127.0.0.1:9\0--seed\0007\0--threads\0002\0--max-body\0001Gi\0--body-budget\0002Gi' \
	    > $(FUZZ_BUILD)/corpus-config/flags
	printf '{"server":"https://10.0.0.1:6443","ca_file":"/nonexistent"}\0--print-config' \
	    > $(FUZZ_BUILD)/corpus-config/server
	$(FUZZ_BUILD)/fuzz_extender_config -max_total_time=10 -max_len=4096 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-config > $(FUZZ_BUILD)/fuzz-config.log 2>&1; rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==ERROR)' $(FUZZ_BUILD)/fuzz-config.log; \
	    exit $$rc

# The end-to-end suite (tests/e2e, a Go module): the real etcd, kube-apiserver and
# kube-scheduler of k8s.io/kubernetes (tests/e2e/go.mod pins the version), built here from Go
# modules, with lotus-extender registered as the shipped manifests register it
# (docs/extender.md, "Tested against"). E2E_RUN selects tests by name (go test -run).
E2E_BIN ?= build-e2e/bin
E2E_RUN ?= .
E2E_TIMEOUT ?= 40m
.PHONY: e2e e2e-build
e2e-build:
	@GO=$$(bash tests/e2e/find-go) && cd tests/e2e && \
	    echo "== building kube-apiserver and kube-scheduler with $$($$GO version | cut -d' ' -f3)" && \
	    start=$$(date +%s) && \
	    $$GO build -o $(CURDIR)/$(E2E_BIN)/ k8s.io/kubernetes/cmd/kube-apiserver \
	        k8s.io/kubernetes/cmd/kube-scheduler && \
	    echo "== built in $$(( $$(date +%s) - start )) s"

e2e: build e2e-build
	@GO=$$(bash tests/e2e/find-go) && bad=$$($${GO%/go}/gofmt -l tests/e2e) && \
	    if [ -n "$$bad" ]; then echo "gofmt: not formatted: $$bad" >&2; exit 1; fi
	@GO=$$(bash tests/e2e/find-go) && cd tests/e2e && \
	    LOTUS_BUILD=$(CURDIR)/$(BUILD) LOTUS_E2E_BIN=$(CURDIR)/$(E2E_BIN) \
	    $$GO test -count=1 -timeout $(E2E_TIMEOUT) -run '$(E2E_RUN)' -v . 2>&1 | \
	    grep -v -E '^=== (RUN|PAUSE|CONT)'; exit $${PIPESTATUS[0]}

# Every test, in the plain build and in the ASan+UBSan build, a short fuzz run, and the
# end-to-end suite on a real control plane.
test: format-check test-plain test-asan fuzz-smoke e2e
	@echo "make test: format, plain and ASan+UBSan suites, fuzz smokes and e2e passed"

# The Kubernetes API client's test under ThreadSanitizer: watcher threads, the fake API
# server's connection threads and the test thread (docs/extender-kube.md).
TSAN_BUILD ?= build-tsan
.PHONY: test-tsan-kube
test-tsan-kube:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
	    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_kube
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_BUILD)/test_kube

bench:
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DLOTUS_BENCH=ON >/dev/null
	cmake --build $(BENCH_BUILD) -j $(JOBS) --target bench_choose bench_replay bench_extender \
	    bench_slots bench_lotes bench_queue bench_whatif
	$(BENCH_BUILD)/bench_choose
	$(BENCH_BUILD)/bench_replay
	$(BENCH_BUILD)/bench_extender
	$(BENCH_BUILD)/bench_slots
	$(BENCH_BUILD)/bench_lotes
	$(BENCH_BUILD)/bench_queue
	$(BENCH_BUILD)/bench_whatif

# The real kube-scheduler's throughput with and without extenders (tests/e2e/bench_test.go).
.PHONY: bench-scheduler
bench-scheduler: build e2e-build
	tests/bench/bench_scheduler.sh

bench-smoke: build
	$(BUILD)/bench_choose --smoke
	$(BUILD)/bench_replay --smoke
	$(BUILD)/bench_extender --smoke
	$(BUILD)/bench_slots --smoke
	$(BUILD)/bench_lotes --smoke
	$(BUILD)/bench_queue --smoke
	$(BUILD)/bench_whatif --smoke

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BENCH_BUILD) $(FUZZ_BUILD) build-e2e

# lotus-extender offline on the 4-node test cluster, on 127.0.0.1:8888 (docs/extender.md
# "Running it"); stop it with Ctrl-C.
.PHONY: run-extender
run-extender: build
	$(BUILD)/lotus-extender --cluster-file tests/fixtures/extender/cluster/small.json \
	    --listen 127.0.0.1:8888
