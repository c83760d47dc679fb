// tls_test.go -- the verbs over HTTPS with client certificates, as docs/extender.md "TLS"
// deploys them: kube-scheduler with enableHTTPS and tlsConfig (caFile, certFile, keyFile)
// schedules and binds through lotus; a client without a certificate, or with one that lacks
// the clientAuth extended key usage, or speaking TLS 1.1, gets nothing.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHTTPSWithClientCertificates(t *testing.T) {
	p := cp.pki
	srvCert, srvKey, err := p.issue("extender-serving", "lotus-extender", nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	cliCert, cliKey, err := p.issue("scheduler-client", "lotus-scheduler", nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil)
	if err != nil {
		t.Fatal(err)
	}
	badCert, badKey, err := p.issue("no-client-auth", "not-a-client", nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resetCluster(t)
	createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
	ext := startExtender(t, "--tls-cert="+srvCert, "--tls-key="+srvKey, "--tls-client-ca="+p.caCert)
	https := ext.prefix
	startScheduler(t, schedOpts{extURL: https, ext: map[string]interface{}{
		"enableHTTPS": true,
		"tlsConfig":   map[string]interface{}{"caFile": p.caCert, "certFile": cliCert, "keyFile": cliKey},
	}})
	createPod(t, podSpec{name: "tls", scheduler: "lotus-scheduler", cpu: "1", mem: "1Gi"})
	if got := waitBound(t, "default", "tls", 60*time.Second); got != "n1" {
		t.Fatalf("bound to %q", got)
	}
	if !strings.Contains(ext.p.log(), `"msg":"bound","pod":"tls"`) {
		t.Fatalf("the pod was not bound through lotus over HTTPS:\n%s", ext.p.tail(10))
	}

	pool := p.pool()
	client := func(cert, key string, maxVersion uint16) *http.Client {
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: maxVersion}
		if cert != "" {
			c, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{c}
		}
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	filter := func(c *http.Client) (int, error) {
		body := `{"Pod":{"metadata":{"name":"x","namespace":"default","uid":"u"},"spec":{"containers":[]}},"NodeNames":["n1"]}`
		resp, err := c.Post(https+"/filter", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := filter(client(cliCert, cliKey, 0)); err != nil || code != 200 {
		t.Fatalf("the scheduler's certificate: %d, %v", code, err)
	}
	if code, err := filter(client("", "", 0)); err == nil && code == 200 {
		t.Fatalf("no client certificate: filter answered 200")
	}
	if code, err := filter(client(badCert, badKey, 0)); err == nil && code == 200 {
		t.Fatalf("a certificate without clientAuth: filter answered 200")
	}
	if _, err := filter(client(cliCert, cliKey, tls.VersionTLS11)); err == nil {
		t.Fatalf("TLS 1.1 was accepted")
	}
	// The probes need no client certificate.
	resp, err := client("", "", 0).Get(strings.TrimSuffix(https, "/lotus") + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz over HTTPS without a client certificate: %v", err)
	}
	resp.Body.Close()
}
