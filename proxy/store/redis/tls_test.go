package redis

import (
	"context"
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
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// TestTLS runs redis-server with TLS only, its certificate signed by a CA
// made for the test: with that CA in Options.RootCAs a rediss:// store
// works; without it, the certificate is refused and the store reports it.
func TestTLS(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		startServer(t) // skips, or fails under COMPACT_REQUIRE_REDIS
	}
	dir := t.TempDir()
	ca, caKey := newCert(t, nil, nil, "compact test CA")
	srvCert, srvKey := newCert(t, ca, caKey, "127.0.0.1")
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.Raw)
	writePEM(t, filepath.Join(dir, "server.pem"), "CERTIFICATE", srvCert.Raw)
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "server.key"), "EC PRIVATE KEY", keyDER)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "server.pem"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no",
		"--save", "", "--appendonly", "no", "--dir", dir)
	out, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	url := fmt.Sprintf("rediss://127.0.0.1:%d/0", port)
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server with TLS did not start: %v\n%s", err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}

	st, err := Open(ctx, url, Options{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("ping over TLS with the CA: %v", err)
	}
	want := &store.Record{Checkpoints: []store.Checkpoint{{Covered: 4, Chain: "ab", Summary: "over TLS"}}}
	if err := st.Put(ctx, "c:tls", want); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "c:tls")
	if err != nil || len(got.Checkpoints) != 1 || got.Checkpoints[0].Summary != "over TLS" {
		t.Fatalf("round trip over TLS: %+v, %v", got, err)
	}

	// Without the CA the server's certificate is not trusted.
	untrusted, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer untrusted.Close()
	err = untrusted.Ping(ctx)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("ping over TLS without the CA: %v, want a certificate error", err)
	}
}

// newCert makes a certificate for name, signed by parent (self-signed, a
// CA, when parent is nil).
func newCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP(name)}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// writePEM writes one PEM block.
func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
