// faults_test.go -- what happens when a piece goes away: the extender down (ignorable or not),
// the extender restarted while pods arrive, the kube-apiserver restarted with etcd compacted
// meanwhile (the watches resume through 410 Gone and a relist), the kube-apiserver hung, and
// the extender's token revoked. Each asserts where pods land, what kube-scheduler recorded, or
// what lotus-extender reports in /readyz and its log.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// noFit turns kube-scheduler's own resource fit off, so that lotus's filter alone decides
// (and its reasons reach the events).
var noFit = map[string]interface{}{"multiPoint": map[string]interface{}{
	"disabled": []interface{}{map[string]interface{}{"name": "NodeResourcesFit"}}}}

func TestExtenderDown(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	down := fmt.Sprintf("http://127.0.0.1:%d/lotus", port) // nobody listens
	t.Run("ignorable", func(t *testing.T) {
		resetCluster(t)
		createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
		// With bindVerb kube-scheduler would still ask the extender to bind; an ignorable
		// extender that binds is not what an operator runs, so this one only filters.
		startScheduler(t, schedOpts{extURL: down, ext: map[string]interface{}{
			"ignorable": true, "bindVerb": nil, "preemptVerb": nil}})
		createPod(t, podSpec{name: "p", scheduler: "lotus-scheduler", cpu: "1", mem: "1Gi"})
		if got := waitBound(t, "default", "p", 60*time.Second); got != "n1" {
			t.Fatalf("bound to %q", got)
		}
	})
	t.Run("not ignorable", func(t *testing.T) {
		resetCluster(t)
		createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
		startScheduler(t, schedOpts{extURL: down, ext: map[string]interface{}{"ignorable": false}})
		createPod(t, podSpec{name: "p", scheduler: "lotus-scheduler", cpu: "1", mem: "1Gi"})
		msg := waitEvent(t, "default", "p", "FailedScheduling", 60*time.Second, "connection refused")
		t.Logf("FailedScheduling: %s", msg)
		p, err := cp.cs.CoreV1().Pods("default").Get(context.Background(), "p", metav1.GetOptions{})
		if err != nil || p.Spec.NodeName != "" {
			t.Fatalf("pod bound (%q) or gone (%v) with the extender down", p.Spec.NodeName, err)
		}
	})
}

// fillAndCheck binds n pods of 200m to node n1 (4 cpu: 20 fill it) through the scheduler and
// extender, calling mid() after the first half; then one more pod must fail with lotus's
// "free 0m": every pod counted once, none twice.
func fillAndCheck(t *testing.T, n int, mid func()) {
	t.Helper()
	for i := 0; i < n; i++ {
		if i == n/2 && mid != nil {
			mid()
		}
		name := fmt.Sprintf("f%02d", i)
		createPod(t, podSpec{name: name, scheduler: "lotus-scheduler", cpu: "200m", mem: "64Mi"})
		if got := waitBound(t, "default", name, 90*time.Second); got != "n1" {
			t.Fatalf("%s bound to %q", name, got)
		}
	}
	createPod(t, podSpec{name: "extra", scheduler: "lotus-scheduler", cpu: "200m", mem: "64Mi"})
	waitEvent(t, "default", "extra", "FailedScheduling", 60*time.Second,
		"Insufficient cpu: requested 200m, free 0m")
}

func TestExtenderRestartedMidRun(t *testing.T) {
	resetCluster(t)
	createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
	ext := startExtender(t)
	startScheduler(t, schedOpts{extURL: ext.prefix, plugins: noFit})
	fillAndCheck(t, 20, func() {
		if err := ext.p.stop(10 * time.Second); err != nil {
			t.Fatalf("lotus-extender did not stop cleanly: %v", err)
		}
		ext.start(t) // same port, same flags: kube-scheduler's next call reaches it
	})
}

// metricValue reads one unlabelled metric from /metrics.
func metricValue(t testing.TB, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in /metrics", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAPIServerRestartedAndCompacted(t *testing.T) {
	resetCluster(t)
	createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
	ext := startExtender(t)
	startScheduler(t, schedOpts{extURL: ext.prefix, plugins: noFit})
	relists := metricValue(t, ext.base, "lotus_extender_relists_total")
	fillAndCheck(t, 20, func() {
		cp.api.stop(30 * time.Second)
		// Write twice past everything lotus has seen, then compact etcd at the last revision:
		// a watch resuming from lotus's resource version r starts at r + 1, now below the
		// compaction, which the restarted server answers with 410 Gone. (Compacting at the
		// revision lotus last saw let a watch that had caught up resume without one: it
		// starts at r + 1, which compaction at r keeps.)
		for i := 0; i < 2; i++ {
			if _, err := cp.etcd.Server.Put(context.Background(), &pb.PutRequest{Key: []byte("/lotus-e2e/bump"), Value: []byte{byte('0' + i)}}); err != nil {
				t.Fatalf("etcd put: %v", err)
			}
		}
		rev := cp.etcd.Server.KV().Rev()
		if _, err := cp.etcd.Server.Compact(context.Background(), &pb.CompactionRequest{Revision: rev, Physical: true}); err != nil {
			t.Fatalf("etcd compaction: %v", err)
		}
		if err := cp.startAPIServer(); err != nil {
			t.Fatal(err)
		}
	})
	// The pods above are bound through lotus, so its view is right before its watches are
	// back: a watch that failed while the server was down retries after its backoff (up to
	// 30 s, doubling), which may come after the 21st pod. Wait for it.
	waitFor(t, 45*time.Second, "a relist after 410 Gone", func() (bool, string) {
		after := metricValue(t, ext.base, "lotus_extender_relists_total")
		return after > relists, fmt.Sprintf("relists %v -> %v: the watches did not go through 410 Gone", relists, after)
	})
	if !strings.Contains(ext.p.log(), "API server feed error") {
		t.Fatalf("nothing logged while the API server was down:\n%s", ext.p.tail(20))
	}
}

// readyz returns /readyz's status code and body.
func readyz(base string) (int, string) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(base + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitReadyz(t *testing.T, e *extender, code int, within time.Duration) string {
	t.Helper()
	var body string
	waitFor(t, within, fmt.Sprintf("/readyz %d", code), func() (bool, string) {
		var got int
		got, body = readyz(e.base)
		return got == code, fmt.Sprintf("/readyz %d %q", got, body)
	})
	return body
}

func waitLog(t *testing.T, e *extender, within time.Duration, want string) {
	t.Helper()
	waitFor(t, within, "log line "+want, func() (bool, string) {
		return strings.Contains(e.p.log(), want), e.p.tail(5)
	})
}

// A hung API server (SIGSTOP: connections stay open, nothing answers): the probe notices,
// the log says so, /readyz fails once the feed is older than --max-feed-age, and all comes
// back when the server does.
func TestAPIServerHung(t *testing.T) {
	resetCluster(t)
	createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
	ext := startExtender(t, "--feed-probe-interval=1s", "--max-feed-age=4s")
	waitReadyz(t, ext, 200, 10*time.Second)
	if err := cp.api.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = cp.api.signal(syscall.SIGCONT)
		}
	}()
	t0 := time.Now()
	body := waitReadyz(t, ext, 503, 15*time.Second)
	t.Logf("hung API server: /readyz 503 after %.1f s: %s", time.Since(t0).Seconds(), strings.TrimSpace(body))
	waitLog(t, ext, 5*time.Second, `"msg":"API server probe failed"`)
	if err := cp.api.signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	t1 := time.Now()
	waitReadyz(t, ext, 200, 30*time.Second)
	t.Logf("API server back: /readyz 200 after %.1f s", time.Since(t1).Seconds())
	waitLog(t, ext, 5*time.Second, `"msg":"API server probe succeeds again"`)
}

// The extender's token stops being valid (its ServiceAccount deleted and created again): the
// 401s are logged and /readyz fails; a new token in the token file brings it back (the client
// re-reads the file after a 401).
func TestTokenRevoked(t *testing.T) {
	resetCluster(t)
	createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
	ext := startExtender(t, "--feed-probe-interval=1s", "--max-feed-age=4s")
	waitReadyz(t, ext, 200, 10*time.Second)
	ctx := context.Background()
	sas := cp.cs.CoreV1().ServiceAccounts("lotus-system")
	if err := sas.Delete(ctx, "lotus-extender", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "ServiceAccount gone", func() (bool, string) {
		_, err := sas.Get(ctx, "lotus-extender", metav1.GetOptions{})
		return isNotFound(err), "still there"
	})
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: "lotus-extender", Namespace: "lotus-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	body := waitReadyz(t, ext, 503, 20*time.Second)
	t.Logf("revoked token: /readyz 503: %s", strings.TrimSpace(body))
	waitLog(t, ext, 5*time.Second, "HTTP 401")
	_, tok, err := cp.saToken(ctx, "lotus-system", "lotus-extender", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext.tokenFile, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, ext, 200, 30*time.Second)
}

// A CA that did not sign the API server's certificate: TLS fails, the log says why, and the
// extender never becomes ready (it says how long it has tried).
func TestAPIServerWrongCA(t *testing.T) {
	e := newExtender(t, "--ca-file="+cp.pki.adminCert, "--feed-probe-interval=1s")
	e.launch(t)
	waitLog(t, e, 15*time.Second, `"msg":"API server probe failed"`)
	waitLog(t, e, 5*time.Second, "certificate")
	if code, body := readyz(e.base); code != 503 {
		t.Fatalf("/readyz %d %q with a wrong CA", code, body)
	}
	if age := metricValue(t, e.base, "lotus_extender_feed_age_seconds"); age < 1 {
		t.Fatalf("feed_age_seconds %v before any data: want the time since start", age)
	}
}
