package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/batchprep/batchprep/graph/train"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// For train: SIGINT and SIGTERM stop training
// between batches with exit 130 / 143; the checkpoint left is complete (the
// uninterrupted run's checkpoint of the same number), no temporary file
// stays, and the same command then finishes with the uninterrupted result.
func TestSignalsStopTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
	dir, cfg, ref, last := interruptFixture(t)
	ckpt := filepath.Join(dir, "ckpt")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signalName(sig), func(t *testing.T) {
			os.RemoveAll(ckpt)
			cmd := child(t, dir, "train", "--config", cfg, "--quiet")
			var e bytes.Buffer
			cmd.Stderr = &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the first checkpoint", func() bool {
				_, err := os.Stat(filepath.Join(ckpt, train.ManifestName))
				return err == nil
			})
			cmd.Process.Signal(sig)
			cmd.Wait()
			want := 128 + int(sig)
			if code := cmd.ProcessState.ExitCode(); code != want || !strings.Contains(e.String(), "interrupted by "+signalName(sig)+"; stopped cleanly") ||
				!strings.Contains(e.String(), "is complete: run the same command to continue") {
				t.Fatalf("exit %d (want %d), stderr %q", code, want, e.String())
			}
			seq := checkCheckpoint(t, ckpt, ref)
			if seq <= 0 || seq == last {
				t.Fatalf("checkpoint %d after the signal: want one between 1 and %d", seq, last-1)
			}
			for _, f := range must(os.ReadDir(ckpt)) {
				if strings.HasPrefix(f.Name(), ".") {
					t.Errorf("temporary %s left after the signal", f.Name())
				}
			}
			if code, _, errOut := runChild(t, dir, "train", "--config", cfg, "--quiet"); code != 0 || !strings.Contains(errOut, "resuming") {
				t.Fatalf("resume: exit %d: %s", code, errOut)
			}
			m, err := train.ReadManifest(ckpt)
			if err != nil || !m.Done || !sameDigests(digests(m), ref[last]) {
				t.Errorf("the resumed run ends with another checkpoint than the uninterrupted run (%v)", err)
			}
		})
	}
}

// SIGINT and SIGTERM stop serve and coordinator with exit 130 / 143 like
// every command: serve after letting streams end (its listening port is
// free again), coordinator after closing etcd.
func TestSignalsStopServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
	for _, c := range []struct {
		name  string
		args  []string
		ready string // first stdout line prefix once serving
	}{
		{"serve", []string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "off"}, "listening "},
		{"coordinator", []string{"coordinator", "--data-dir", "etcd", "--listen", "127.0.0.1:0"}, "coordinator: etcd serving on "},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(c.name+"/"+signalName(sig), func(t *testing.T) {
				cmd, out, e := startChild(t, t.TempDir(), c.args...)
				line, err := bufio.NewReader(out).ReadString('\n')
				if !strings.HasPrefix(line, c.ready) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("first line %q (%v), stderr %q", line, err, e.String())
				}
				addr := strings.Fields(strings.TrimPrefix(line, c.ready))[0]
				cmd.Process.Signal(sig)
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					cmd.Process.Kill()
					t.Fatal("the server did not stop")
				}
				want := 128 + int(sig)
				if code := cmd.ProcessState.ExitCode(); code != want || !strings.Contains(e.String(), "interrupted by "+signalName(sig)+"; stopped cleanly") {
					t.Errorf("exit %d (want %d), stderr %q", code, want, e.String())
				}
				if l, err := net.Listen("tcp", addr); err != nil {
					t.Errorf("%s still taken after the stop: %v", addr, err)
				} else {
					l.Close()
				}
			})
		}
	}
}

// A signal while a trainer is streaming: serve lets the stream run for up
// to 5 s, then cuts it and exits 143; the client gets an error (never a
// clean end of stream, which would mean "all delivered") and holds the
// state of the last minibatch it received, to resume from.
func TestSignalStopsServeStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process; skipped with -short")
	}
	f := newBigFixture(t, 60000, 10)
	cmd, out, e := startChild(t, f.dir, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "off")
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	addr := strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := pb.NewBatchesClient(conn).Sequences(context.Background(), &pb.SequenceRequest{
		Files: []string{filepath.Join(f.dir, f.corpus)}, Streams: []string{"x:2"}, Mb: "1", Randomize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var last *pb.SequenceMinibatch
	for range 10 {
		if last, err = stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	// The client stops reading: the stream cannot end by itself.
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 || !strings.Contains(e.String(), "interrupted by SIGTERM; stopped cleanly") {
		t.Errorf("exit %d, stderr %q", code, e.String())
	}
	for {
		_, err := stream.Recv()
		if err == io.EOF {
			t.Fatal("the cut stream ended as if complete")
		}
		if err != nil {
			break
		}
	}
	if last.Step != 9 || len(last.State) == 0 {
		t.Errorf("last minibatch received: step %d, state %q", last.Step, last.State)
	}
}
