// pki_test.go -- the suite's certificates: one CA, the kube-apiserver's serving certificate,
// an admin client certificate (group system:masters), the ServiceAccount signing key, and
// what lotus-extender's HTTPS scenario needs (a serving certificate and kube-scheduler's client
// certificate, with and without the clientAuth extended key usage).
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

type pki struct {
	dir                   string
	caCert, caKey         string
	serverCert, serverKey string
	adminCert, adminKey   string
	saPub, saKey          string
	ca                    *x509.Certificate
	caPriv                *ecdsa.PrivateKey
	serial                int64
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{dir: dir, serial: 1}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(p.serial),
		Subject:               pkix.Name{CommonName: "lotus-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caPriv = key
	if p.caCert, p.caKey, err = p.write("ca", der, key); err != nil {
		return nil, err
	}
	if p.serverCert, p.serverKey, err = p.issue("apiserver", "kube-apiserver", nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []string{"localhost", "kubernetes"}); err != nil {
		return nil, err
	}
	if p.adminCert, p.adminKey, err = p.issue("admin", "lotus-e2e-admin", []string{"system:masters"},
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil); err != nil {
		return nil, err
	}
	// The ServiceAccount token signing key pair.
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if _, p.saKey, err = p.write("sa", nil, sa); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	p.saPub = filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(p.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// issue signs a certificate for 127.0.0.1 (and dns names) with the CA and writes name.crt and
// name.key.
func (p *pki) issue(name, cn string, orgs []string, eku []x509.ExtKeyUsage, dns []string) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  eku,
		DNSNames:     dns,
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caPriv)
	if err != nil {
		return "", "", err
	}
	return p.write(name, der, key)
}

func (p *pki) write(name string, der []byte, key *ecdsa.PrivateKey) (string, string, error) {
	var certPath string
	if der != nil {
		certPath = filepath.Join(p.dir, name+".crt")
		if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			return "", "", err
		}
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	keyPath := filepath.Join(p.dir, name+".key")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}

// pool is a certificate pool holding the suite's CA.
func (p *pki) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return pool
}

func (p *pki) adminHTTPClient() (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(p.adminCert, p.adminKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert},
		}},
	}, nil
}

// writeKubeconfig writes a kubeconfig for server with either a client certificate or a token.
func writeKubeconfig(path, server, ca, cert, key, tokenFile string) error {
	user := ""
	if tokenFile != "" {
		user = fmt.Sprintf("    tokenFile: %q\n", tokenFile)
	} else {
		user = fmt.Sprintf("    client-certificate: %q\n    client-key: %q\n", cert, key)
	}
	s := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %q
    certificate-authority: %q
users:
- name: e2e
  user:
%scontexts:
- name: e2e
  context:
    cluster: e2e
    user: e2e
current-context: e2e
`, server, ca, user)
	return os.WriteFile(path, []byte(s), 0o600)
}
