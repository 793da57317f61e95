package ctf

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/batchprep/batchprep/corpus"
)

// TestCachedReadsStopTheAdvice: chunk reads that find their bytes in the
// page cache stop Prefetch's WILLNEED advice after noWaitRunSkip of them; a
// read cut short (the rest not cached) gets the rest from the file, whole
// and right, advises the chunks Prefetch skipped but the one read, once,
// and starts the advice again.
func TestCachedReadsStopTheAdvice(t *testing.T) {
	r := openString(t, droppableCorpus(), droppableConfig, nil)
	defer func(f func(any, int64, int64), off bool) { willNeed, noWillNeed = f, off }(willNeed, noWillNeed)
	noWillNeed = false
	var advised []int64 // offsets
	willNeed = func(_ any, off, _ int64) { advised = append(advised, off) }
	r.Prefetch(0)
	if len(advised) != 1 {
		t.Fatalf("Prefetch before any read advised %d times, want 1", len(advised))
	}
	want := loadAll(t, r) // the file was just written: every page is cached
	if n := r.noWaitRun.Load(); n < noWaitRunSkip {
		t.Fatalf("%d cached reads in a row after reading %d chunks of a cached file, want >= %d", n, len(want), noWaitRunSkip)
	}
	for _, c := range []int{1, 5, 2, 3} {
		r.Prefetch(c)
	}
	if len(advised) != 1 {
		t.Errorf("Prefetch after %d cached reads advised the kernel", len(want))
	}

	// A read that finds only part of its range cached. (On a virtual disk
	// the host caches, the read-ahead a real short read starts can bring
	// the rest before the read returns, so the kernel cannot be made to
	// cut one short reliably: see TestReadDroppedChunk.)
	defer func(f func(any, []byte, int64) int) { readNoWait = f }(readNoWait)
	cut := 0
	readNoWait = func(f any, p []byte, off int64) int {
		cut = preadNoWait(f, p[:len(p)/3], off)
		return cut
	}
	got, err := r.LoadChunk(5)
	if err != nil {
		t.Fatal(err)
	}
	if cut == 0 {
		t.Fatal("the cut read read nothing")
	}
	if !reflect.DeepEqual(got, want[5]) {
		t.Errorf("chunk 5 read in two parts differs from its first read")
	}
	if n := r.noWaitRun.Load(); n != 0 {
		t.Errorf("%d cached reads in a row after a read cut short, want 0", n)
	}
	var skipped []int64
	for _, c := range []int{1, 2, 3} {
		off, _ := r.x.span(c)
		skipped = append(skipped, off)
	}
	if !reflect.DeepEqual(advised[1:], skipped) {
		t.Errorf("a read of chunk 5 cut short advised %v, want the chunks skipped but 5, at %v", advised[1:], skipped)
	}
	if _, err := r.LoadChunk(5); err != nil {
		t.Fatal(err)
	}
	if len(advised) != 4 {
		t.Errorf("a second read cut short advised %v again", advised[4:])
	}
	if r.Prefetch(6); len(advised) != 5 {
		t.Errorf("Prefetch after a read cut short advised %d times in all, want 5", len(advised))
	}
}

// TestReadDroppedChunk: a chunk whose pages left the page cache (written
// back, then dropped with DONTNEED, its first page read back) reads the
// same as before, whatever part of it the kernel has at hand.
func TestReadDroppedChunk(t *testing.T) {
	r := openString(t, droppableCorpus(), droppableConfig, nil)
	want := loadAll(t, r)
	f, err := os.Open(r.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	fd := int(f.Fd())
	for _, advice := range []int{unix.FADV_DONTNEED, unix.FADV_RANDOM} {
		if err := unix.Fadvise(fd, 0, 0, advice); err != nil {
			t.Fatal(err)
		}
	}
	off, _ := r.x.span(5)
	if _, err := f.ReadAt(make([]byte, 1), off); err != nil {
		t.Fatal(err)
	}
	got, err := r.LoadChunk(5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want[5]) {
		t.Errorf("chunk 5 read after its pages were dropped differs from its first read")
	}
}

// droppableCorpus has 20 chunks of 18 KB: chunks span whole pages.
func droppableCorpus() string {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "%d |a %d:1 %d:0.5\n", i, i%10, (i+3)%10)
	}
	return b.String()
}

var droppableConfig = Config{Streams: []corpus.Stream{{Name: "a", Dim: 10, Sparse: true}}, ChunkSequences: 1000}

// TestPreadNoWaitWholeRange: preadNoWait returns a cached range whole, and
// nothing for a Blob that is not a file.
func TestPreadNoWaitWholeRange(t *testing.T) {
	content := strings.Repeat("0123456789", 100000)
	f, err := os.Open(writeTemp(t, content))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := make([]byte, 300000)
	if got := preadNoWait(f, p, 12345); got != len(p) || string(p) != content[12345:12345+len(p)] {
		t.Errorf("preadNoWait of a cached range read %d of %d bytes (or other bytes)", got, len(p))
	}
	if got := preadNoWait(struct{ *os.File }{f}, p, 0); got != 0 {
		t.Errorf("preadNoWait through a wrapper read %d bytes, want 0", got)
	}
}

// unadvised keeps the latest chunks added, at most maxUnadvised, and take
// empties it.
func TestUnadvisedKeepsTheLatest(t *testing.T) {
	var u unadvised
	for c := range 3 * maxUnadvised {
		u.add(c)
	}
	got := u.take()
	if n := len(got); n > maxUnadvised || n < maxUnadvised/2 || got[n-1] != 3*maxUnadvised-1 {
		t.Fatalf("kept %d chunks ending with %d, want at most %d ending with the last", n, got[n-1], maxUnadvised)
	}
	for k := 1; k < len(got); k++ {
		if got[k] != got[k-1]+1 {
			t.Fatalf("kept %v, not the latest in order", got)
		}
	}
	if again := u.take(); again != nil {
		t.Errorf("take after take returned %v", again)
	}
}
