// components_test.go -- the two processes each scenario starts: lotus-extender, online
// against the suite's kube-apiserver with a TokenRequest token of the lotus-extender
// ServiceAccount of manifests/10-extender-rbac.json, and the real kube-scheduler, whose
// KubeSchedulerConfiguration is manifests/31-scheduler-config.json's with the extender's URL
// pointed at loopback and the scenario's changes, run as the lotus-scheduler ServiceAccount of
// manifests/30-scheduler-rbac.json.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type extender struct {
	p         *proc
	port      int
	base      string // http://127.0.0.1:PORT
	prefix    string // base + /lotus
	args      []string
	tokenFile string
}

// startExtender starts lotus-extender online with extra flags and waits for /readyz.
func startExtender(t testing.TB, extra ...string) *extender {
	t.Helper()
	e := newExtender(t, extra...)
	e.start(t)
	return e
}

// newExtender prepares lotus-extender online (a TokenRequest token of its ServiceAccount, a
// free port, the suite's API server and CA; a later --ca-file in extra wins) and starts
// nothing; launch or start it. It is stopped when the test ends.
func newExtender(t testing.TB, extra ...string) *extender {
	t.Helper()
	tok, _, err := cp.saToken(context.Background(), "lotus-system", "lotus-extender", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	e := &extender{port: port, tokenFile: tok}
	e.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	e.prefix = e.base + "/lotus"
	e.args = append([]string{
		"--server=" + cp.apiURL, "--ca-file=" + cp.pki.caCert, "--token-file=" + tok,
		fmt.Sprintf("--listen=127.0.0.1:%d", port), "--rebuild-interval=10ms",
	}, extra...)
	for _, a := range extra {
		if strings.HasPrefix(a, "--tls-cert=") { // the probes too are served over HTTPS
			e.base = strings.Replace(e.base, "http://", "https://", 1)
			e.prefix = strings.Replace(e.prefix, "http://", "https://", 1)
		}
	}
	t.Cleanup(func() {
		if e.p != nil {
			e.p.stop(10 * time.Second)
		}
	})
	return e
}

// launch starts the process without waiting for it.
func (e *extender) launch(t testing.TB) {
	t.Helper()
	p, err := startProc(cp.dir, "lotus-extender", filepath.Join(cp.lotusBin, "lotus-extender"), e.args...)
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
}

// start launches the process and waits for /readyz 200.
func (e *extender) start(t testing.TB) {
	t.Helper()
	e.launch(t)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: cp.pki.pool()}}}
	if err := waitHTTP(hc, e.base+"/readyz", 30*time.Second, e.p); err != nil {
		t.Fatalf("lotus-extender: %v\n%s", err, e.p.tail(20))
	}
}

type schedOpts struct {
	name       string                 // schedulerName of the profile (default lotus-scheduler)
	extURL     string                 // the extender's urlPrefix ("" = no extender)
	ext        map[string]interface{} // changes to the extender entry (nodeCacheCapable, ...)
	plugins    map[string]interface{} // the profile's plugins
	pluginConf []interface{}          // the profile's pluginConfig
	// keepScorePct leaves percentageOfNodesToScore as shipped (kube-scheduler's adaptive
	// default); otherwise every feasible node is scored, so that the extender sees them all.
	keepScorePct bool
}

// startScheduler runs kube-scheduler with the shipped configuration, changed as o says.
func startScheduler(t testing.TB, o schedOpts) *proc {
	t.Helper()
	ctx := context.Background()
	objs, err := readManifest(manifestPath("31-scheduler-config.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := objs[0].Object["data"].(map[string]interface{})
	text, _ := data["scheduler-config.json"].(string)
	var cfg map[string]interface{}
	if err := json.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("31-scheduler-config.json: scheduler-config.json: %v", err)
	}
	tok, _, err := cp.saToken(ctx, "lotus-system", "lotus-scheduler", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(cp.dir, fmt.Sprintf("scheduler-%d.kubeconfig", time.Now().UnixNano()))
	if err := writeKubeconfig(kc, cp.apiURL, cp.pki.caCert, "", "", tok); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]interface{}{"kubeconfig": kc, "qps": 500, "burst": 1000}
	// One scheduler per scenario, started and stopped by the test: no lease to wait for.
	cfg["leaderElection"] = map[string]interface{}{"leaderElect": false}
	if !o.keepScorePct {
		cfg["percentageOfNodesToScore"] = 100
	}
	name := o.name
	if name == "" {
		name = "lotus-scheduler"
	}
	prof := map[string]interface{}{"schedulerName": name}
	if o.plugins != nil {
		prof["plugins"] = o.plugins
	}
	if o.pluginConf != nil {
		prof["pluginConfig"] = o.pluginConf
	}
	cfg["profiles"] = []interface{}{prof}
	exts, _ := cfg["extenders"].([]interface{})
	if len(exts) != 1 {
		t.Fatalf("31-scheduler-config.json: want one extender, got %d", len(exts))
	}
	if o.extURL == "" {
		delete(cfg, "extenders")
	} else {
		ext := exts[0].(map[string]interface{})
		ext["urlPrefix"] = o.extURL
		for k, v := range o.ext {
			if v == nil {
				delete(ext, k)
			} else {
				ext[k] = v
			}
		}
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	path := filepath.Join(cp.dir, fmt.Sprintf("scheduler-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := startProc(cp.dir, "kube-scheduler", filepath.Join(cp.k8sBin, "kube-scheduler"),
		"--config="+path, "--secure-port=0", "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	time.Sleep(300 * time.Millisecond)
	if p.exited() {
		t.Fatalf("kube-scheduler exited at start:\n%s", p.tail(30))
	}
	return p
}
