package direct

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/procs"
)

// testFile writes size random bytes to a file in a temporary directory
// and opens it for direct reads with limit bytes read ahead; a file
// system that refuses direct reads skips the test.
func testFile(t *testing.T, size int, limit int64) (*File, []byte) {
	t.Helper()
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, uint64(size)))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	p := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	x, err := Open(f, limit)
	if err != nil {
		f.Close()
		t.Skipf("direct reads refused here (%v): the test needs a file system that takes O_DIRECT", err)
	}
	t.Cleanup(func() { x.Close() })
	return x, data
}

// check reads [off, off+n) and compares it with data, as an os.File's
// ReadAt answers: the bytes up to the end, and io.EOF when short.
func check(t *testing.T, x *File, data []byte, off, n int64) {
	t.Helper()
	p := make([]byte, n)
	k, err := x.ReadAt(p, off)
	want := max(0, min(n, int64(len(data))-off))
	if int64(k) != want {
		t.Fatalf("ReadAt(%d bytes at %d) = %d bytes, want %d (%v)", n, off, k, want, err)
	}
	if want < n && !errors.Is(err, io.EOF) || want == n && err != nil {
		t.Fatalf("ReadAt(%d bytes at %d): error %v", n, off, err)
	}
	if k > 0 && !bytes.Equal(p[:k], data[off:off+int64(k)]) {
		t.Fatalf("ReadAt(%d bytes at %d): other bytes than the file's", n, off)
	}
}

// TestReadAt: unaligned ranges, ranges at and past the end, hinted and
// not, give the file's bytes as an os.File's ReadAt does.
func TestReadAt(t *testing.T) {
	const size = 3<<20 + 12345
	x, data := testFile(t, size, 1<<20)
	for _, r := range [][2]int64{{0, 1}, {0, 4096}, {1, 4095}, {4095, 2}, {123, 1 << 20}, {size - 10, 10},
		{size - 10, 100}, {size - 4096, 8192}, {size, 1}, {size + 5000, 10}, {0, size}, {17, size}} {
		check(t, x, data, r[0], r[1])
		x.Hint(r[0], r[1])
		check(t, x, data, r[0], r[1])
	}
	if _, err := x.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("a negative offset read")
	}
}

// TestBorrow: a borrowed range holds the file's bytes, hinted or not, in a
// buffer no longer than the range; a range past the end is refused.
func TestBorrow(t *testing.T) {
	const size = 3<<20 + 12345
	x, data := testFile(t, size, 1<<20)
	for _, r := range [][2]int64{{0, 1}, {1, 4095}, {123, 1 << 20}, {size - 10, 10}, {17, size - 17}} {
		for _, hint := range []bool{false, true} {
			if hint {
				x.Hint(r[0], r[1])
			}
			b, release, err := x.Borrow(r[0], r[1])
			if err != nil {
				t.Fatalf("Borrow(%d, %d): %v", r[0], r[1], err)
			}
			if int64(len(b)) != r[1] || int64(cap(b)) != r[1] || !bytes.Equal(b, data[r[0]:r[0]+r[1]]) {
				t.Fatalf("Borrow(%d, %d): %d bytes (cap %d), or not the file's", r[0], r[1], len(b), cap(b))
			}
			release()
		}
	}
	if _, _, err := x.Borrow(size-10, 11); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a range past the end: %v", err)
	}
}

// TestHintsReadAhead: hinted ranges are read ahead and serve the reads
// that follow (none is read twice), the bytes held ahead stay within the
// limit, and many goroutines reading at once get the file's bytes.
func TestHintsReadAhead(t *testing.T) {
	const size, piece = 8 << 20, 300_000
	x, data := testFile(t, size, 1<<20)
	var ranges [][2]int64
	for off := int64(0); off < size; off += piece {
		ranges = append(ranges, [2]int64{off, min(piece, size-off)})
	}
	for _, r := range ranges {
		x.Hint(r[0], r[1])
	}
	var wg sync.WaitGroup
	next := make(chan [2]int64)
	for range 3 {
		wg.Go(func() {
			for r := range next {
				p := make([]byte, r[1])
				if k, err := x.ReadAt(p, r[0]); int64(k) != r[1] || err != nil || !bytes.Equal(p, data[r[0]:r[0]+r[1]]) {
					t.Errorf("ReadAt(%d bytes at %d) = %d, %v, or other bytes", r[1], r[0], k, err)
				}
				x.mu.Lock()
				if x.held[0] > x.limit+piece || x.held[1] != 0 {
					t.Errorf("%d bytes held ahead (%d urgent), limit %d", x.held[0], x.held[1], x.limit)
				}
				x.mu.Unlock()
			}
		})
	}
	for _, r := range ranges {
		next <- r
	}
	close(next)
	wg.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.served < int64(len(ranges))/2 {
		t.Errorf("%d of %d hinted reads served by a read ahead", x.served, len(ranges))
	}
	if x.dropped != 0 || len(x.ahead) != 0 || x.held != [2]int64{} {
		t.Errorf("after every hinted range was read: %d dropped, %d left, %v bytes held", x.dropped, len(x.ahead), x.held)
	}
}

// TestRehintedRangesReadFirst: a range hinted again before its read
// started is read ahead before the ranges hinted once, in the order of
// the second hints, even while ranges read ahead fill the limit; each is
// then served by its read ahead, and the bytes of each queue stay within
// the limit.
func TestRehintedRangesReadFirst(t *testing.T) {
	const size, piece = 4 << 20, 256 << 10
	x, data := testFile(t, size, 512<<10)
	for off := int64(0); off < size; off += piece {
		x.Hint(off, piece) // the first two fill the limit
	}
	late := []int64{12 * piece, 9 * piece, 14 * piece}
	for _, off := range late {
		x.Hint(off, piece)
	}
	started := func(off int64) bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		p := x.ahead[off]
		return p != nil && p.started
	}
	for deadline := time.Now().Add(10 * time.Second); !started(late[0]) || !started(late[1]); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ranges hinted again not read ahead while the first ones hold the limit")
		}
	}
	x.mu.Lock()
	if x.held[0] > x.limit || x.held[1] > x.limit {
		t.Errorf("%v bytes held ahead, limit %d per queue", x.held, x.limit)
	}
	if p := x.ahead[late[2]]; p.started || x.queue[1][0] != p {
		t.Errorf("the third range hinted again started before the first two were taken, or is not next")
	}
	x.mu.Unlock()
	for _, off := range late {
		check(t, x, data, off, piece)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.served != int64(len(late)) {
		t.Errorf("%d of the %d ranges hinted again served by reads ahead", x.served, len(late))
	}
}

// TestPassedOverHintsDropped: ranges hinted and never read (a seek) do
// not hold the read-ahead forever: once reads without hints go on, they
// are dropped and later hints are read ahead again.
func TestPassedOverHintsDropped(t *testing.T) {
	const size, piece = 4 << 20, 256 << 10
	x, data := testFile(t, size, 512<<10)
	for off := int64(0); off < size; off += piece {
		x.Hint(off, piece) // only the first two fit the limit
	}
	for i := range 100 {
		check(t, x, data, int64(i*997+1), 1000)
	}
	x.mu.Lock()
	dropped := x.dropped
	x.mu.Unlock()
	if dropped == 0 {
		t.Fatal("no passed-over range dropped")
	}
	x.mu.Lock()
	served := x.served
	x.mu.Unlock()
	for off := int64(0); off < size; off += piece {
		check(t, x, data, off, piece)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.served == served {
		t.Error("after the drops, the ranges hinted later were not read ahead")
	}
}

// TestPassedOverUrgentRangesDropped: ranges hinted twice and never read
// do not hold the urgent queue's limit forever either, when no range
// waits in the other queue.
func TestPassedOverUrgentRangesDropped(t *testing.T) {
	const size, piece = 4 << 20, 256 << 10
	x, data := testFile(t, size, 512<<10)
	for off := int64(0); off < size; off += piece {
		x.Hint(off, piece) // the first two fill the limit
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			x.mu.Lock()
			done := ok()
			x.mu.Unlock()
			if done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	waitFor("the first two ranges were not read ahead", func() bool { return x.held[0] == x.limit })
	for off := int64(2 * piece); off < size; off += piece {
		x.Hint(off, piece) // the others move to the urgent queue
	}
	waitFor("the first urgent ranges were not read ahead", func() bool {
		return len(x.queue[0]) == 0 && len(x.queue[1]) == 12 && x.held[1] == x.limit
	})
	for i := 0; i < 200; i++ {
		check(t, x, data, int64(i*997+1), 1000)
	}
	x.mu.Lock()
	dropped, urgent := x.dropped, len(x.queue[1])
	x.mu.Unlock()
	if dropped == 0 || urgent == 12 {
		t.Fatalf("after reads without hints: %d ranges dropped, %d urgent still queued", dropped, urgent)
	}
}

// TestCloseWhileReadingAhead: Close with hints queued and reads ahead
// running returns, and reads after it fail.
func TestCloseWhileReadingAhead(t *testing.T) {
	x, _ := testFile(t, 4<<20, 4<<20)
	for off := int64(0); off < 4<<20; off += 100_000 {
		x.Hint(off, 100_000)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := x.ReadAt(make([]byte, 10), 0); err == nil {
		t.Error("a read after Close")
	}
	x.Hint(0, 10) // no effect, no panic
}

// TestNewReader: the index pass's reader gives the file from any offset.
func TestNewReader(t *testing.T) {
	x, data := testFile(t, 1<<20+77, 0)
	for _, off := range []int64{0, 4097, 1<<20 + 77} {
		r := x.NewReader(off)
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data[off:]) {
			t.Errorf("from %d: %d bytes, %v", off, len(got), err)
		}
	}
}

// TestOpenReservesProcessors: an open File has processors of its own for
// its readers, so that the computing goroutines keep theirs
// (internal/procs).
func TestOpenReservesProcessors(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: Open leaves the user's setting as it is")
	}
	before := runtime.GOMAXPROCS(0)
	testFile(t, 10000, 1<<20)
	testFile(t, 10000, 1<<20)
	if got := runtime.GOMAXPROCS(0) - procs.Compute(); got != Readers {
		t.Fatalf("GOMAXPROCS %d, computing goroutines %d: %d processors reserved, want Readers (%d)",
			runtime.GOMAXPROCS(0), procs.Compute(), got, Readers)
	}
	if procs.Compute() > before {
		t.Fatalf("computing goroutines %d, more than the %d processors before Open", procs.Compute(), before)
	}
}
