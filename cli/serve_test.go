package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// TestServeFlags: serve refuses setups that would expose data, naming the
// flag, before listening.
func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "--token-file is required"},
		{[]string{"--metrics-listen", "0.0.0.0:0"}, "--metrics-listen 0.0.0.0:0 is not a loopback address"},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--token-file", empty}, "the file is empty"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--data-dir", filepath.Join(dir, "none")}, "--data-dir " + filepath.Join(dir, "none") + ": not a directory"},
		{[]string{"--data-dir", empty}, "--data-dir " + empty + ": not a directory"},
		{[]string{"--max-concurrent-calls", "0"}, "--max-concurrent-calls 0: must be positive"},
		{[]string{"--stall-timeout", "0s"}, `--stall-timeout "0s": want a positive duration such as 60s, or off`},
		{[]string{"--max-concurrent-calls", "4", "--max-calls-per-peer", "5"}, "--max-calls-per-peer 5: must be in [0, 4]"},
		{[]string{"--allow-bucket", "Bad_Bucket"}, `--allow-bucket "Bad_Bucket": not a bucket name`},
		{[]string{"--fetch-concurrency", "-1"}, `--fetch-concurrency "-1": must be at least 1`},
	} {
		code, out, errOut := run(t, append([]string{"serve"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("serve %v: code %d, stdout %q, stderr %q, want code 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
}

// writeTLS writes a self-signed certificate for 127.0.0.1 and its key, and
// returns their paths and a pool that trusts the certificate.
func writeTLS(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "batchprep test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS: `batchprep serve` with --tls-cert, --tls-key and
// --token-file serves a client that trusts the certificate and sends the
// token; a plaintext client, a client that trusts another certificate and
// a client without the token are refused; closing stdin stops the server
// (--stop-on-stdin-eof).
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := writeTLS(t, dir)
	_, _, otherPool := writeTLS(t, t.TempDir())
	tokFile := filepath.Join(dir, "token")
	os.WriteFile(tokFile, []byte("tls-token\n"), 0o600)
	corpus := filepath.Join(dir, "c.ctf")
	os.WriteFile(corpus, []byte("0 |x 1 2\n0 |x 3 4\n1 |x 5 6\n2 |x 7 8\n"), 0o644)

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	var errOut strings.Builder
	go func() {
		done <- Main([]string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "off", "--token-file", tokFile,
			"--tls-cert", certFile, "--tls-key", keyFile, "--stop-on-stdin-eof", "--data-dir", dir}, stdinR, stdoutW, &errOut)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v (stderr %q)", err, errOut.String())
	}
	go io.Copy(io.Discard, stdoutR)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	req := &pb.SequenceRequest{Files: []string{corpus}, Streams: []string{"x:2"}, Mb: "2"}
	call := func(creds credentials.TransportCredentials, token string) (int, error) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if token != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		}
		st, err := pb.NewBatchesClient(conn).SequenceGroups(ctx, req)
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			g, err := st.Recv()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n += len(g.Minibatches)
		}
	}
	trusting := credentials.NewTLS(&tls.Config{RootCAs: pool})
	if n, err := call(trusting, "tls-token"); err != nil || n != 2 {
		t.Fatalf("TLS client with the token: %d minibatches, %v", n, err)
	}
	for name, c := range map[string]struct {
		creds credentials.TransportCredentials
		token string
		code  codes.Code
	}{
		"plaintext":           {insecure.NewCredentials(), "tls-token", codes.Unavailable},
		"another certificate": {credentials.NewTLS(&tls.Config{RootCAs: otherPool}), "tls-token", codes.Unavailable},
		"no token":            {trusting, "", codes.Unauthenticated},
	} {
		if n, err := call(c.creds, c.token); n != 0 || status.Code(err) != c.code {
			t.Errorf("%s: %d minibatches, %v, want %v", name, n, err, c.code)
		}
	}
	stdinW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop when stdin closed")
	}
}
