// harness_test.go -- the control plane the end-to-end suite runs against: an embedded etcd,
// the real kube-apiserver (built from k8s.io/kubernetes/cmd/kube-apiserver) with RBAC, the
// shipped manifests applied server-side, and helpers that start the real kube-scheduler and
// lotus-extender as processes. Everything listens on 127.0.0.1 only.
//
// Environment (the Makefile's e2e target sets them):
//
//	LOTUS_BUILD    directory with lotus-extender and lotus-sim (default ../../build)
//	LOTUS_E2E_BIN  directory with kube-apiserver and kube-scheduler (default ../../build-e2e/bin)
//	LOTUS_E2E_KEEP set to keep the work directory (logs of every process) after the run
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// controlPlane is the cluster shared by every test of the run. Tests that need a clean cluster
// call resetCluster; each test starts its own kube-scheduler and lotus-extender.
type controlPlane struct {
	dir      string
	etcd     *embed.Etcd
	etcdURL  string
	apiPort  int
	apiURL   string
	apiArgs  []string
	api      *proc
	pki      *pki
	admin    *rest.Config
	cs       *kubernetes.Clientset
	adminKC  string // kubeconfig of the admin (system:masters) client certificate
	lotusBin string
	k8sBin   string
}

var cp *controlPlane

func TestMain(m *testing.M) {
	code, err := runMain(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runMain(m *testing.M) (int, error) {
	here, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(here, "..", ".."))
	c := &controlPlane{
		lotusBin: envOr("LOTUS_BUILD", filepath.Join(root, "build")),
		k8sBin:   envOr("LOTUS_E2E_BIN", filepath.Join(root, "build-e2e", "bin")),
	}
	for _, b := range []string{filepath.Join(c.lotusBin, "lotus-extender"),
		filepath.Join(c.lotusBin, "lotus-sim"), filepath.Join(c.k8sBin, "kube-apiserver"),
		filepath.Join(c.k8sBin, "kube-scheduler")} {
		if _, err := os.Stat(b); err != nil {
			return 1, fmt.Errorf("%s: %v (run `make e2e`, which builds it)", b, err)
		}
	}
	dir, err := os.MkdirTemp("", "lotus-e2e-")
	if err != nil {
		return 1, err
	}
	c.dir = dir
	cp = c
	defer func() {
		c.stop()
		if os.Getenv("LOTUS_E2E_KEEP") != "" {
			fmt.Fprintf(os.Stderr, "e2e: kept %s\n", dir)
		} else {
			os.RemoveAll(dir)
		}
	}()
	t0 := time.Now()
	if err := c.start(); err != nil {
		dumpLogs(dir)
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane up in %.1f s (etcd %s, kube-apiserver %s)\n",
		time.Since(t0).Seconds(), c.etcdURL, c.apiURL)
	code := m.Run()
	if code != 0 {
		dumpLogs(dir)
	}
	return code, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// freePort returns a TCP port on 127.0.0.1 nobody listens on (the kernel's choice).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *controlPlane) start() error {
	var err error
	if c.pki, err = newPKI(filepath.Join(c.dir, "pki")); err != nil {
		return err
	}
	if err := c.startEtcd(); err != nil {
		return err
	}
	if c.apiPort, err = freePort(); err != nil {
		return err
	}
	c.apiURL = fmt.Sprintf("https://127.0.0.1:%d", c.apiPort)
	p := c.pki
	c.apiArgs = []string{
		"--etcd-servers=" + c.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.apiPort),
		"--tls-cert-file=" + p.serverCert,
		"--tls-private-key-file=" + p.serverKey,
		"--client-ca-file=" + p.caCert,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saPub,
		"--service-account-signing-key-file=" + p.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No kube-controller-manager runs, so no namespace gets its "default" ServiceAccount:
		// the ServiceAccount admission plugin would refuse every pod. And no node lifecycle
		// controller lifts the not-ready taint that TaintNodesByCondition puts on a new node.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
		// The endpoint reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--v=1",
	}
	if err := c.startAPIServer(); err != nil {
		return err
	}
	c.adminKC = filepath.Join(c.dir, "admin.kubeconfig")
	if err := writeKubeconfig(c.adminKC, c.apiURL, p.caCert, p.adminCert, p.adminKey, ""); err != nil {
		return err
	}
	c.admin = &rest.Config{
		Host: c.apiURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: p.caCert, CertFile: p.adminCert, KeyFile: p.adminKey,
		},
		QPS: 500, Burst: 1000,
	}
	if c.cs, err = kubernetes.NewForConfig(c.admin); err != nil {
		return err
	}
	// The shipped namespace and RBAC, server-side, as an operator would apply them.
	if err := applyManifests(context.Background(), c.admin, manifestPath("00-namespace.json"),
		manifestPath("10-extender-rbac.json"), manifestPath("30-scheduler-rbac.json")); err != nil {
		return fmt.Errorf("applying manifests: %w", err)
	}
	return nil
}

func (c *controlPlane) startEtcd() error {
	cfg := embed.NewConfig()
	cfg.Name = "lotus-e2e"
	cfg.Dir = filepath.Join(c.dir, "etcd")
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(c.dir, "etcd.log")}
	cfg.UnsafeNoFsync = true
	var urls [2]url.URL
	for i := range urls {
		port, err := freePort()
		if err != nil {
			return err
		}
		u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", port))
		urls[i] = *u
	}
	cfg.ListenClientUrls = []url.URL{urls[0]}
	cfg.AdvertiseClientUrls = []url.URL{urls[0]}
	cfg.ListenPeerUrls = []url.URL{urls[1]}
	cfg.AdvertisePeerUrls = []url.URL{urls[1]}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return fmt.Errorf("etcd: not ready after 60 s")
	}
	c.etcd = e
	c.etcdURL = urls[0].String()
	return nil
}

// startAPIServer starts kube-apiserver with c.apiArgs and waits for /readyz.
func (c *controlPlane) startAPIServer() error {
	p, err := startProc(c.dir, "kube-apiserver", filepath.Join(c.k8sBin, "kube-apiserver"), c.apiArgs...)
	if err != nil {
		return err
	}
	c.api = p
	hc, err := c.pki.adminHTTPClient()
	if err != nil {
		return err
	}
	return waitHTTP(hc, c.apiURL+"/readyz", 120*time.Second, p)
}

// restartAPIServer stops kube-apiserver (SIGTERM) and starts it again on the same port, etcd
// and certificates.
func (c *controlPlane) restartAPIServer(down time.Duration) error {
	c.api.stop(30 * time.Second)
	time.Sleep(down)
	return c.startAPIServer()
}

func (c *controlPlane) stop() {
	if c.api != nil {
		c.api.stop(20 * time.Second)
	}
	if c.etcd != nil {
		c.etcd.Close()
	}
}

// waitHTTP polls url until it answers 200, the process p exits, or the timeout passes.
func waitHTTP(hc *http.Client, u string, timeout time.Duration, p *proc) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited while waiting for %s: %s", p.name, u, p.tail(20))
		}
		resp, err := hc.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %s", u, timeout, last)
}

// saToken issues a token for a ServiceAccount through the TokenRequest API, as the kubelet
// does for a projected token, and writes it to a file.
func (c *controlPlane) saToken(ctx context.Context, ns, name string, ttl time.Duration) (string, string, error) {
	secs := int64(ttl / time.Second)
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}},
		metav1.CreateOptions{})
	if err != nil {
		return "", "", fmt.Errorf("TokenRequest %s/%s: %w", ns, name, err)
	}
	f, err := os.CreateTemp(c.dir, "token-"+name+"-")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	if _, err := f.WriteString(tr.Status.Token); err != nil {
		return "", "", err
	}
	return f.Name(), tr.Status.Token, nil
}

func manifestPath(name string) string {
	return filepath.Join("..", "..", "manifests", name)
}

func dumpLogs(dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 30 {
			lines = lines[len(lines)-30:]
		}
		fmt.Fprintf(os.Stderr, "==== last lines of %s\n%s\n", l, strings.Join(lines, "\n"))
	}
}
