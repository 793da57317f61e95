package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// TestServeStallTimeout: `batchprep serve --stall-timeout 300ms
// --max-concurrent-calls 1` ends the call of a client that takes no
// message, so that another client, waiting for the only slot, is served;
// the stalled client then reads DeadlineExceeded naming the flag.
func TestServeStallTimeout(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.ctf")
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "%d |x %d %d\n", i, i, i+1)
	}
	os.WriteFile(corpus, []byte(b.String()), 0o644)

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	var errOut strings.Builder
	go func() {
		done <- Main([]string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "off", "--stop-on-stdin-eof",
			"--data-dir", dir, "--max-concurrent-calls", "1", "--stall-timeout", "300ms"}, stdinR, stdoutW, &errOut)
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
	dial := func() *grpc.ClientConn {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stalled, err := pb.NewBatchesClient(dial()).Sequences(ctx, &pb.SequenceRequest{Files: []string{corpus},
		Streams: []string{"x:2"}, Mb: "4000", EpochSize: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.Header(); err != nil {
		t.Fatal(err)
	}
	st, err := pb.NewBatchesClient(dial()).Sequences(ctx, &pb.SequenceRequest{Files: []string{corpus}, Streams: []string{"x:2"}, Mb: "100"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("another client, while one stalls, after %d minibatches: %v", n, err)
		}
		n++
	}
	for {
		if _, err = stalled.Recv(); err != nil {
			break
		}
	}
	const want = "the client took no message for 300ms (serve --stall-timeout)"
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), want) {
		t.Errorf("the stalled stream ends with %v; want DeadlineExceeded with %q", err, want)
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
