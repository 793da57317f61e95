package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// serveChild starts `batchprep serve` in dir with args (and no metrics
// endpoint), returns it with the address of its "listening" line; its
// stdin is a pipe, closed to stop it.
func serveChild(t *testing.T, dir string, args ...string) (*serveProc, string) {
	t.Helper()
	c := child(t, dir, append([]string{"serve", "--metrics-listen", "off", "--stop-on-stdin-eof"}, args...)...)
	p := &serveProc{cmd: c}
	c.Stderr = &p.stderr
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	t.Cleanup(func() { stdin.Close(); c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		c.Process.Kill()
		c.Wait()
		t.Fatalf("serve %v: first line %q (%v), stderr %q", args, line, err, p.stderr.String())
	}
	go io.Copy(io.Discard, out)
	return p, addr
}

type serveProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr strings.Builder
}

// wait waits at most d for the server to end and returns its exit code.
func (p *serveProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-done
		t.Fatalf("serve did not stop within %v", d)
		return -1
	}
}

// firstMinibatch asks addr for one minibatch of corpus (a relative or
// absolute path) and returns the call's error.
func firstMinibatch(addr, corpus, token string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "bearer "+token)
	}
	st, err := pb.NewBatchesClient(conn).Sequences(ctx, &pb.SequenceRequest{Files: []string{corpus}, Streams: []string{"x:2"}, MaxMinibatches: 1})
	if err != nil {
		return err
	}
	_, err = st.Recv()
	return err
}

func writeTinyCorpus(t *testing.T, dir string) string {
	p := filepath.Join(dir, "c.ctf")
	if err := os.WriteFile(p, []byte("0 |x 1 2\n0 |x 3 4\n1 |x 5 6\n2 |x 7 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeListenFamilies: an IPv4 literal listens on IPv4 only and an IPv6
// one on IPv6 only (Go's "tcp" on 0.0.0.0 would take both).
func TestServeListenFamilies(t *testing.T) {
	if l, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	} else {
		l.Close()
	}
	dir := t.TempDir()
	writeTinyCorpus(t, dir)
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("a-token-of-24-bytes-long\n"), 0o600)
	for _, c := range []struct {
		listen   string
		ok, fail string // hosts to dial
	}{
		{"0.0.0.0:0", "127.0.0.1", "::1"},
		{"[::]:0", "::1", "127.0.0.1"},
	} {
		p, addr := serveChild(t, dir, "--listen", c.listen, "--token-file", tok)
		_, port, _ := net.SplitHostPort(addr)
		if err := firstMinibatch(net.JoinHostPort(c.ok, port), "c.ctf", "a-token-of-24-bytes-long"); err != nil {
			t.Errorf("--listen %s: dialing %s: %v", c.listen, c.ok, err)
		}
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort(c.fail, port), 2*time.Second); err == nil {
			conn.Close()
			t.Errorf("--listen %s: %s connects; want it refused", c.listen, c.fail)
		}
		p.stdin.Close()
		if code := p.wait(t, 10*time.Second); code != 0 {
			t.Errorf("--listen %s: exit %d, stderr %q", c.listen, code, p.stderr.String())
		}
	}
}

// TestServeUnixSocket: --listen unix:/PATH serves on a Unix socket only its
// owner may use, needs no token, prints an address gRPC dials, and removes
// the socket when it stops.
func TestServeUnixSocket(t *testing.T) {
	dir := t.TempDir()
	writeTinyCorpus(t, dir)
	sock := filepath.Join(dir, "s.sock")
	p, addr := serveChild(t, dir, "--listen", "unix:"+sock)
	if addr != "unix:"+sock {
		t.Fatalf("listening %q, want unix:%s", addr, sock)
	}
	info, err := os.Stat(sock)
	if err != nil || info.Mode()&os.ModeSocket == 0 || info.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v (%v), want a socket of mode 0600", info, err)
	}
	if err := firstMinibatch(addr, "c.ctf", ""); err != nil {
		t.Fatalf("over the socket: %v", err)
	}
	p.stdin.Close()
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, p.stderr.String())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left after the stop (%v)", err)
	}
	code, _, errOut := run(t, "serve", "--listen", "unix:rel.sock")
	if code != 1 || !strings.Contains(errOut, "want unix:/ABSOLUTE/PATH") {
		t.Errorf("a relative socket path: exit %d, %q", code, errOut)
	}
}

// TestServeTokenWarnings: a token file others may read and a short token
// are each warned about; a private file with a long token is not.
func TestServeTokenWarnings(t *testing.T) {
	dir := t.TempDir()
	writeTinyCorpus(t, dir)
	for _, c := range []struct {
		mode  os.FileMode
		token string
		want  []string
	}{
		{0o644, "short", []string{"is readable by other users (mode 0644); chmod 600 it", "is 5 bytes; use 16 or more"}},
		{0o640, "a-token-of-24-bytes-long", []string{"is readable by other users (mode 0640)"}},
		{0o600, "short", []string{"is 5 bytes"}},
		{0o600, "a-token-of-24-bytes-long", nil},
	} {
		tok := filepath.Join(dir, "token")
		os.Remove(tok)
		os.WriteFile(tok, []byte(c.token+"\n"), c.mode)
		os.Chmod(tok, c.mode)
		p, addr := serveChild(t, dir, "--listen", "127.0.0.1:0", "--token-file", tok)
		if err := firstMinibatch(addr, "c.ctf", c.token); err != nil {
			t.Errorf("mode %04o token %q: %v", c.mode, c.token, err)
		}
		p.stdin.Close()
		p.wait(t, 10*time.Second)
		errOut := p.stderr.String()
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("mode %04o token %q: stderr %q lacks %q", c.mode, c.token, errOut, w)
			}
		}
		if c.want == nil && errOut != "" {
			t.Errorf("mode %04o token %q: stderr %q, want nothing", c.mode, c.token, errOut)
		}
	}
}

// TestServeStopsWhateverIsInFlight: serve refuses minibatches past its
// limits naming the limit, and a SIGTERM stops it within its 5 s while a
// client holds a stream of the largest minibatches allowed, endlessly, and
// does not read.
func TestServeStopsWhateverIsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process; skipped with -short")
	}
	dir := t.TempDir()
	writeTinyCorpus(t, dir)
	p, addr := serveChild(t, dir, "--listen", "127.0.0.1:0", "--max-minibatch-samples", "200000")
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewBatchesClient(conn)
	st, err := c.Sequences(context.Background(), &pb.SequenceRequest{Files: []string{"c.ctf"}, Streams: []string{"x:2"},
		Mb: "1000000000000", EpochSize: "inf"})
	if err == nil {
		_, err = st.Recv()
	}
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "limit of 200000 (serve --max-minibatch-samples)") {
		t.Errorf("mb 10^12: %v, want InvalidArgument stating the limit", err)
	}
	st, err = c.Sequences(context.Background(), &pb.SequenceRequest{Files: []string{"c.ctf"}, Streams: []string{"x:2"},
		Mb: "200000", EpochSize: "inf"}, grpc.MaxCallRecvMsgSize(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	// The client stops reading; the server keeps packing until flow control holds it.
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	code := p.wait(t, 30*time.Second)
	d := time.Since(t0)
	if d > 7*time.Second {
		t.Errorf("serve took %v to stop after SIGTERM, promised 5 s", d)
	}
	t.Logf("stopped %v after SIGTERM", d)
	if code != 143 {
		t.Errorf("exit %d, want 143; stderr %q", code, p.stderr.String())
	}
}
