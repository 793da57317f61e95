package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// writeLargeCorpus writes a CTF corpus of at least size bytes, one-line
// sequences with the streams largeStreams.
func writeLargeCorpus(t *testing.T, size int) (string, int64) {
	t.Helper()
	b := make([]byte, 0, size+64)
	for i := 0; len(b) < size; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, " |x 0.5 "...)
		b = strconv.AppendInt(b, int64(i%1000), 10)
		b = append(b, " |y "...)
		b = strconv.AppendInt(b, int64(i%50), 10)
		b = append(b, ":1\n"...)
	}
	p := filepath.Join(t.TempDir(), "large.ctf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, int64(len(b))
}

var largeStreams = []string{"x:2", "y:50:sparse"}

// gatedIndexing makes the server's index passes report the bytes they read
// to read and wait at their first block until the returned gate is closed;
// started is closed when a pass reaches its first block.
func gatedIndexing(srv *serve.Server) (read *atomic.Int64, started, gate chan struct{}) {
	read, started, gate = new(atomic.Int64), make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv.SetIndexProgressForTest(func(n int64) {
		read.Add(n)
		once.Do(func() { close(started) })
		<-gate
	})
	return read, started, gate
}

// waitFor polls cond every 5 ms for up to limit and tells whether it held.
func waitFor(limit time.Duration, cond func() bool) bool {
	for t0 := time.Now(); time.Since(t0) < limit; time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestCancelStopsIndexing: invariant 4 while a file is indexed. A call
// cancelled while its 40 MB file is being indexed returns, and the index
// pass, which no other call waits for, stops (within 2 s; one block of
// 1 MiB per goroutine on an idle machine) without finishing the file or
// leaving a reader behind. When the server stops, a pass in progress stops
// the same way. (Before, the pass ran to the end of the file after the
// client had gone, and after SIGTERM.)
func TestCancelStopsIndexing(t *testing.T) {
	file, size := writeLargeCorpus(t, 40<<20)
	req := &pb.SequenceRequest{Files: []string{file}, Streams: largeStreams, Mb: "16"}
	for _, stop := range []bool{false, true} {
		srv, conn, reg := startServer(t, serve.Options{})
		read, started, gate := gatedIndexing(srv)
		ctx, cancel := context.WithCancel(context.Background())
		st, err := pb.NewBatchesClient(conn).Sequences(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		go st.Recv()
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("no index pass started")
		}
		if stop {
			srv.Stop()
		} else {
			cancel()
			if !waitFor(5*time.Second, func() bool { return gauge(t, reg, "batchprep_serve_clients") == 0 }) {
				t.Fatal("the cancelled call did not return")
			}
		}
		close(gate)
		t0 := time.Now()
		if !waitFor(2*time.Second, func() bool { passes, _ := srv.IndexPassesForTest(); return passes == 0 }) {
			t.Fatalf("stop %v: the index pass still ran 2 s after the call left (%d of %d bytes read)", stop, read.Load(), size)
		}
		t.Logf("stop %v: the pass stopped %v after the gate opened, %d of %d bytes read", stop, time.Since(t0), read.Load(), size)
		if got := read.Load(); got >= size {
			t.Errorf("stop %v: the pass read the whole file (%d bytes) for a call that had left", stop, got)
		}
		if n, _ := srv.OpenReadersForTest(); n != 0 {
			t.Errorf("stop %v: %d readers kept from a pass no call waited for", stop, n)
		}
		cancel()
	}
}

// TestIndexingSharedByWaitingCalls: two calls on one file wait for one
// index pass; when one is cancelled, the pass goes on for the other, which
// then streams.
func TestIndexingSharedByWaitingCalls(t *testing.T) {
	file, size := writeLargeCorpus(t, 40<<20)
	req := &pb.SequenceRequest{Files: []string{file}, Streams: largeStreams, Mb: "16"}
	srv, conn, _ := startServer(t, serve.Options{})
	read, started, gate := gatedIndexing(srv)
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	client := pb.NewBatchesClient(conn)
	if _, err := client.Sequences(ctx1, req); err != nil {
		t.Fatal(err)
	}
	st2, err := client.Sequences(ctx2, req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if !waitFor(10*time.Second, func() bool { passes, waiters := srv.IndexPassesForTest(); return passes == 1 && waiters == 2 }) {
		passes, waiters := srv.IndexPassesForTest()
		t.Fatalf("%d passes, %d calls waiting; want one pass for both calls", passes, waiters)
	}
	cancel1()
	if !waitFor(5*time.Second, func() bool { _, waiters := srv.IndexPassesForTest(); return waiters == 1 }) {
		t.Fatal("the cancelled call still waits")
	}
	close(gate)
	m, err := st2.Recv()
	if err != nil {
		t.Fatalf("the call still waiting: %v", err)
	}
	if m.Step != 0 || read.Load() < size {
		t.Errorf("first minibatch step %d, %d of %d bytes indexed", m.Step, read.Load(), size)
	}
}

// TestIndexesTheFileChecked: invariant 10. The file indexed is the one the
// server checked and opened: a file renamed over the path while it is being
// indexed changes nothing for that call, and the next call indexes the new
// file. (Before, the reader opened the path again, and a file replaced
// meanwhile failed the call.)
func TestIndexesTheFileChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.ctf")
	orig, _ := os.ReadFile(writeCorpus(t, 40))
	repl, _ := os.ReadFile(writeCorpus(t, 12))
	os.WriteFile(filepath.Join(dir, "copy.ctf"), orig, 0o644)
	os.WriteFile(path, orig, 0o644)
	os.WriteFile(filepath.Join(dir, "new.ctf"), repl, 0o644)
	srv, conn, _ := startServer(t, serve.Options{})
	want := collect(t, conn, &pb.SequenceRequest{Files: []string{filepath.Join(dir, "copy.ctf")}, Streams: corpusStreams, Mb: "4"})
	var once sync.Once
	srv.SetIndexProgressForTest(func(int64) {
		once.Do(func() {
			if err := os.Rename(filepath.Join(dir, "new.ctf"), path); err != nil {
				t.Error(err)
			}
		})
	})
	got := collect(t, conn, &pb.SequenceRequest{Files: []string{path}, Streams: corpusStreams, Mb: "4"})
	if len(got) != len(want) {
		t.Fatalf("%d minibatches, want the %d of the file checked", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i].Streams[0], want[i].Streams[0]) || string(got[i].Sequences) != string(want[i].Sequences) {
			t.Fatalf("minibatch %d differs from the file checked", i)
		}
	}
	now := collect(t, conn, &pb.SequenceRequest{Files: []string{path}, Streams: corpusStreams, Mb: "4"})
	if len(now) == len(want) {
		t.Errorf("after the rename, %d minibatches: the old file's reader was reused", len(now))
	}
}
