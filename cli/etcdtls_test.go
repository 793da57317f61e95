package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// testPKI writes, into dir, a CA (ca.pem), a server certificate for
// 127.0.0.1 (server.pem, server-key.pem) and a client certificate
// (client.pem, client-key.pem), both signed by the CA; and a second CA's
// client certificate (other.pem, other-key.pem).
func testPKI(t *testing.T, dir string) {
	t.Helper()
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		return cert, key
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	issue := func(ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, serial int64, usage x509.ExtKeyUsage, ips ...net.IP) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		write(name+".pem", "CERTIFICATE", der)
		kb, _ := x509.MarshalECPrivateKey(key)
		write(name+"-key.pem", "EC PRIVATE KEY", kb)
	}
	ca, caKey := newCA("batchprep test CA")
	write("ca.pem", "CERTIFICATE", ca.Raw)
	issue(ca, caKey, "server", 2, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	issue(ca, caKey, "client", 3, x509.ExtKeyUsageClientAuth)
	other, otherKey := newCA("another CA")
	issue(other, otherKey, "other", 4, x509.ExtKeyUsageClientAuth)
}

// `coordinator --cert --key --client-ca` serves etcd over TLS and admits
// only clients with a certificate of its CA: `coordinator runs` and a
// `plan --etcd` rank with --etcd-cacert, --etcd-cert and --etcd-key work
// over loopback; without a client certificate, or with one of another CA,
// they are refused (exit 1).
func TestCoordinatorTLS(t *testing.T) {
	pki := t.TempDir()
	testPKI(t, pki)
	f := func(name string) string { return filepath.Join(pki, name) }
	ctx, cancel := context.WithCancel(context.Background())
	var o, e lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runCoordinator(&Env{Ctx: ctx, Stdout: &o, Stderr: &e}, []string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--no-fsync",
			"--cert", f("server.pem"), "--key", f("server-key.pem"), "--client-ca", f("ca.pem")})
	}()
	defer func() { cancel(); <-done }()
	var endpoint string
	for endpoint == "" {
		select {
		case err := <-done:
			t.Fatalf("coordinator ended: %v\n%s", err, e.String())
		default:
		}
		time.Sleep(10 * time.Millisecond)
		if s := o.String(); strings.Contains(s, "serving on ") {
			if !strings.Contains(s, "TLS, client certificates required") {
				t.Errorf("coordinator: %s", s)
			}
			endpoint = strings.Fields(strings.SplitAfter(s, "serving on ")[1])[0]
		}
	}
	tlsArgs := []string{"--etcd-cacert", f("ca.pem"), "--etcd-cert", f("client.pem"), "--etcd-key", f("client-key.pem")}
	if code, out, errOut := run(t, append([]string{"coordinator", "runs", "--etcd", endpoint}, tlsArgs...)...); code != 0 || !strings.Contains(out, "no runs") {
		t.Fatalf("coordinator runs over TLS: exit %d\n%s%s", code, out, errOut)
	}
	cfg := distFixture(t, "affinity")
	code, out, errOut := run(t, append([]string{"plan", "--config", cfg, "--etcd", endpoint, "--world", "1", "--run", "tls", "--format", "jsonl"}, tlsArgs...)...)
	if code != 0 || strings.Count(out, `"kind":"bucket"`) != 2*2*9 {
		t.Fatalf("plan over TLS: exit %d, %d bucket lines: %s", code, strings.Count(out, `"kind":"bucket"`), errOut)
	}
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"no client certificate", "requires a client certificate signed by its CA", []string{"--etcd-cacert", f("ca.pem")}},
		{"another CA's client certificate", "requires a client certificate signed by its CA",
			[]string{"--etcd-cacert", f("ca.pem"), "--etcd-cert", f("other.pem"), "--etcd-key", f("other-key.pem")}},
		{"another CA trusted", "not signed by a CA of --etcd-cacert", []string{"--etcd-cacert", f("other.pem"), "--etcd-cert", f("client.pem"), "--etcd-key", f("client-key.pem")}},
		{"plaintext", "serves TLS: give --etcd-cacert", nil},
	} {
		// A refusal is not transient: it is said at once, not after the
		// 30 s of --etcd-timeout. (Before: every refusal waited the timeout.)
		start := time.Now()
		code, out, errOut := run(t, append([]string{"coordinator", "runs", "--etcd", endpoint, "--etcd-timeout", "30s"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, want 1 and %q\n%s%s", c.name, code, c.want, out, errOut)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: refused after %v, want at once (well within --etcd-timeout 30s)", c.name, took)
		}
	}
	if code, _, errOut := run(t, "coordinator", "runs", "--etcd", endpoint, "--etcd-cert", f("client.pem")); code != 2 || !strings.Contains(errOut, "--etcd-key") {
		t.Errorf("--etcd-cert without --etcd-key: exit %d, %s", code, errOut)
	}
}

// etcd with authentication on: --etcd-user with the password from
// --etcd-password-file is admitted; no user, or a wrong password, is
// refused with what to do.
func TestEtcdUserPassword(t *testing.T) {
	srv := startEtcd(t)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bg := context.Background()
	if _, err := c.UserAdd(bg, "root", "s3cret pass"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UserGrantRole(bg, "root", "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AuthEnable(bg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "pw"), filepath.Join(dir, "wrong")
	os.WriteFile(good, []byte("s3cret pass\n"), 0o600)
	os.WriteFile(bad, []byte("guess\n"), 0o600)
	base := []string{"coordinator", "runs", "--etcd", srv.Endpoint(), "--etcd-timeout", "30s"}
	if code, out, errOut := run(t, append(base, "--etcd-user", "root", "--etcd-password-file", good)...); code != 0 || !strings.Contains(out, "no runs") {
		t.Errorf("with the password: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, append(base, "--etcd-user", "root", "--etcd-password-file", bad)...); code != 1 || !strings.Contains(errOut, `refused user "root"`) {
		t.Errorf("a wrong password: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run(t, base...); code != 1 || !strings.Contains(errOut, "requires authentication") {
		t.Errorf("no user: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run(t, append(base, "--etcd-user", "root")...); code != 2 || !strings.Contains(errOut, "--etcd-password-file") {
		t.Errorf("--etcd-user without a password file: exit %d, %s", code, errOut)
	}
}
