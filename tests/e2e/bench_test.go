// bench_test.go -- pods scheduled per second by the real kube-scheduler, 1,000 pods on 500 and
// on 5,000 nodes: (a) with no extender, (b) with lotus-extender (filter and prioritize,
// nodeCacheCapable: NodeNames), (c) with a trivial extender written here in Go (every node
// passes, every score 0: the floor of what any HTTP extender costs). Prints JSON lines with
// (b)/(c) and (b)/(a); the target is (b)/(c) >= 0.9 at 500 nodes.
//
// A benchmark, not a timed test: it runs only with LOTUS_E2E_BENCH=1 (make bench-scheduler,
// tests/bench/bench_scheduler.sh). TestSchedulerBenchSmoke runs the same code on 20 nodes and
// 50 pods in every e2e run, and checks only that every pod was bound.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// trivialExtender serves extender/v1 filter (every node passes) and prioritize (every node
// 0) on loopback; it decodes only what it must to answer.
type trivialExtender struct {
	srv  *http.Server
	url  string
	reqs sync.Map
}

func startTrivialExtender(t testing.TB) *trivialExtender {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	type args struct {
		Nodes *struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		} `json:"Nodes"`
		NodeNames *[]string `json:"NodeNames"`
	}
	names := func(r *http.Request) ([]string, *args, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, nil, err
		}
		var a args
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, nil, err
		}
		if a.NodeNames != nil {
			return *a.NodeNames, &a, nil
		}
		var out []string
		if a.Nodes != nil {
			for _, n := range a.Nodes.Items {
				out = append(out, n.Metadata.Name)
			}
		}
		return out, &a, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/trivial/filter", func(w http.ResponseWriter, r *http.Request) {
		ns, a, err := names(r)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		res := map[string]interface{}{"NodeNames": ns, "FailedNodes": map[string]string{}, "Error": ""}
		if a.NodeNames == nil {
			res["Nodes"] = a.Nodes
			res["NodeNames"] = nil
		}
		_ = json.NewEncoder(w).Encode(res)
	})
	mux.HandleFunc("/trivial/prioritize", func(w http.ResponseWriter, r *http.Request) {
		ns, _, err := names(r)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		type hp struct {
			Host  string
			Score int64
		}
		out := make([]hp, len(ns))
		for i, n := range ns {
			out[i] = hp{n, 0}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	e := &trivialExtender{srv: &http.Server{Handler: mux}, url: "http://" + l.Addr().String() + "/trivial"}
	go func() { _ = e.srv.Serve(l) }()
	t.Cleanup(func() { _ = e.srv.Close() })
	return e
}

type benchResult struct {
	Bench     string  `json:"bench"`
	Nodes     int     `json:"nodes"`
	Pods      int     `json:"pods"`
	Extender  string  `json:"extender"`
	Mode      string  `json:"mode,omitempty"`
	Seconds   float64 `json:"seconds"`
	PodsPerS  float64 `json:"pods_per_s"`
	FirstToLs float64 `json:"first_to_last_s"`
}

// schedulePods creates n pods as fast as the client allows and returns the time from the
// first create to the last bind, and from the first bind to the last.
func schedulePods(t testing.TB, n int) (total, firstToLast time.Duration) {
	t.Helper()
	ctx := context.Background()
	bound := map[string]time.Time{}
	// watchFrom lists the pods (recording the bound ones not seen yet) and watches from there:
	// the API server may end a watch that falls behind a burst, and then nothing is lost.
	watchFrom := func() watch.Interface {
		l, err := cp.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			p := &l.Items[i]
			if _, seen := bound[p.Name]; !seen && p.Spec.NodeName != "" && strings.HasPrefix(p.Name, "b") {
				bound[p.Name] = time.Now()
			}
		}
		w, err := cp.cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := watchFrom()
	defer func() { w.Stop() }()
	t0 := time.Now()
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < n; i += 8 {
				p := makePod(podSpec{name: fmt.Sprintf("b%05d", i), scheduler: "lotus-scheduler", cpu: "100m", mem: "64Mi"})
				if _, err := cp.cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	deadline := time.After(10 * time.Minute)
	for len(bound) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				w.Stop()
				w = watchFrom()
				continue
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			p := ev.Object.(*corev1.Pod)
			if p.Spec.NodeName != "" && strings.HasPrefix(p.Name, "b") {
				if _, seen := bound[p.Name]; !seen {
					bound[p.Name] = time.Now()
				}
			}
		case err := <-errs:
			t.Fatalf("creating pods: %v", err)
		case <-deadline:
			t.Fatalf("%d of %d pods bound after 10 minutes", len(bound), n)
		}
	}
	wg.Wait()
	var times []time.Time
	for _, at := range bound {
		times = append(times, at)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	return times[len(times)-1].Sub(t0), times[len(times)-1].Sub(times[0])
}

// runThroughput runs the three configurations on nNodes nodes with nPods pods each and
// returns the results (a, b, c).
func runThroughput(t *testing.T, nNodes, nPods int) []benchResult {
	var out []benchResult
	for _, which := range []string{"none", "lotus", "trivial"} {
		resetCluster(t)
		specs := make([]nodeSpec, nNodes)
		for i := range specs {
			specs[i] = nodeSpec{name: fmt.Sprintf("node-%05d", i), cpu: "32", mem: "128Gi", pods: "110"}
		}
		createNodes(t, specs...)
		o := schedOpts{keepScorePct: true}
		var ext *extender
		switch which {
		case "lotus":
			// The shipped defaults (the suite's other tests rebuild every 10 ms).
			ext = startExtender(t, "--policy=bestfit1", "--rebuild-interval=50ms")
			o.extURL = ext.prefix
			o.ext = map[string]interface{}{"bindVerb": nil, "preemptVerb": nil, "nodeCacheCapable": true}
		case "trivial":
			o.extURL = startTrivialExtender(t).url
			o.ext = map[string]interface{}{"bindVerb": nil, "preemptVerb": nil, "nodeCacheCapable": true}
		}
		sched := startScheduler(t, o)
		// kube-scheduler is up once it has placed a canary pod.
		createPod(t, podSpec{name: "canary", scheduler: "lotus-scheduler", cpu: "10m", mem: "1Mi"})
		waitBound(t, "default", "canary", 60*time.Second)
		total, span := schedulePods(t, nPods)
		r := benchResult{Bench: "scheduler_throughput", Nodes: nNodes, Pods: nPods, Extender: which,
			Seconds: total.Seconds(), PodsPerS: float64(nPods) / total.Seconds(), FirstToLs: span.Seconds()}
		if which != "none" {
			r.Mode = "NodeNames"
		}
		out = append(out, r)
		sched.stop(10 * time.Second)
		if ext != nil {
			ext.p.stop(10 * time.Second)
		}
	}
	return out
}

func printJSON(v interface{}) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func TestSchedulerBench(t *testing.T) {
	if os.Getenv("LOTUS_E2E_BENCH") == "" {
		t.Skip("a benchmark: set LOTUS_E2E_BENCH=1 (make bench-scheduler)")
	}
	sizes := []int{500, 5000}
	if s := os.Getenv("LOTUS_E2E_BENCH_NODES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("LOTUS_E2E_BENCH_NODES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		r := runThroughput(t, n, 1000)
		for _, x := range r {
			printJSON(x)
		}
		a, b, c := r[0].PodsPerS, r[1].PodsPerS, r[2].PodsPerS
		ratio := map[string]interface{}{
			"bench": "scheduler_throughput_ratio", "nodes": n, "pods": 1000,
			"lotus_over_trivial": b / c, "lotus_over_none": b / a,
		}
		if n == 500 {
			ratio["target_lotus_over_trivial"] = 0.9
			ratio["met"] = b/c >= 0.9
		}
		printJSON(ratio)
	}
}

// The benchmark's code on a small cluster in every e2e run: every pod bound in all three
// configurations.
func TestSchedulerBenchSmoke(t *testing.T) {
	for _, x := range runThroughput(t, 20, 50) {
		t.Logf("%s: %.1f pods/s (smoke size: not a measurement)", x.Extender, x.PodsPerS)
	}
}
