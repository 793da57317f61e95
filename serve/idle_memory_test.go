package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestIdleMemoryReturns: invariant 14. After concurrent calls over a
// corpus of large chunks end, the idle server's live heap comes back to
// within a few MiB of a fresh server's: the server keeps the file's index
// (a few bytes a sequence), not the read buffers, parsed chunks and gRPC
// message buffers the calls used. The corpus is 16 MB in chunks of 4 MiB,
// its lines padded with a comment so that parsing is cheap and the chunks
// large; the calls run in this process over a real socket, and the heap is
// the process's (runtime.ReadMemStats after one collection, as a metrics
// scrape of an idle server would see it once the runtime collects). Before
// the fix, the readers kept each call's buffers and parsed chunks for
// reuse and an idle server never collected: ~20 MiB more here, 967 MB
// after 16 calls of 1M samples.
func TestIdleMemoryReturns(t *testing.T) {
	const lines, pad = 4000, 4000
	var b bytes.Buffer
	filler := bytes.Repeat([]byte{'a'}, pad)
	for i := range lines {
		fmt.Fprintf(&b, "%d |x %d 1 |y %d:1 |# ", i, i, i%7)
		b.Write(filler)
		b.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "padded.ctf")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b = bytes.Buffer{}
	srv, conn, _ := startServer(t, serve.Options{})
	fresh := liveHeap()

	const calls = 8
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for c := range calls {
		wg.Go(func() {
			req := &pb.SequenceRequest{Files: []string{file}, Streams: []string{"x:2", "y:7:sparse"},
				Mb: "64", ChunkBytes: 4 << 20, Seed: uint64(c)}
			st, err := pb.NewBatchesClient(conn).Sequences(context.Background(), req)
			if err != nil {
				errs <- err
				return
			}
			for {
				if _, err := st.Recv(); err != nil {
					if err != io.EOF {
						errs <- err
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, inUse := srv.OpenReadersForTest(); n != 1 || inUse != 0 {
		t.Fatalf("%d readers cached, %d in use; want 1 idle", n, inUse)
	}
	// The server gives memory back a second after its last call ends.
	for deadline := time.Now().Add(10 * time.Second); srv.IdleTrimsForTest() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	// As a scrape of the idle server's metrics sees it, with no collection
	// forced: the heap counted (go_memstats_heap_alloc_bytes) and the heap
	// pages kept from the system (resident).
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	idle := liveHeap()
	const slack, residentSlack = 4 << 20, 16 << 20
	t.Logf("fresh server: %.1f MiB live; idle after %d calls: %.1f MiB counted, %.1f MiB live, %.1f MiB of heap pages resident",
		mib(fresh), calls, mib(m.HeapAlloc), mib(idle), mib(m.HeapSys-m.HeapReleased))
	if idle > fresh+slack {
		t.Errorf("the idle server keeps %.1f MiB of live heap, %.1f MiB more than a fresh one; want at most %.0f MiB more",
			mib(idle), mib(idle-fresh), mib(slack))
	}
	if m.HeapAlloc > fresh+slack {
		t.Errorf("the idle server counts %.1f MiB of heap, %.1f MiB more than a fresh one's live heap: it has not collected since its calls ended",
			mib(m.HeapAlloc), mib(m.HeapAlloc-fresh))
	}
	if r := m.HeapSys - m.HeapReleased; r > fresh+residentSlack {
		t.Errorf("the idle server keeps %.1f MiB of heap pages from the system; want at most %.0f MiB more than a fresh one's live heap",
			mib(r), mib(residentSlack))
	}
}

// liveHeap is the process's heap after one collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
