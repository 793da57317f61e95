package ctf

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/batchprep/batchprep/corpus"
)

// TestCachedReadsStopTheAdvice: chunk reads that find their bytes in the
// page cache stop Prefetch's WILLNEED advice after cachedRunSkip of them; a
// chunk whose pages were dropped is read from the disk, whole and right,
// and starts the advice again.
func TestCachedReadsStopTheAdvice(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "%d |a %d:1 %d:0.5\n", i, i%10, (i+3)%10)
	}
	cfg := Config{Streams: []corpus.Stream{{Name: "a", Dim: 10, Sparse: true}}, ChunkSequences: 1000}
	r := openString(t, b.String(), cfg, nil)
	defer func(f func(any, int64, int64), off bool) { willNeed, noWillNeed = f, off }(willNeed, noWillNeed)
	noWillNeed = false
	advised := 0
	willNeed = func(any, int64, int64) { advised++ }
	r.Prefetch(0)
	if advised != 1 {
		t.Fatalf("Prefetch before any read advised %d times, want 1", advised)
	}
	want := loadAll(t, r) // the file was just written: every page is cached
	if n := r.cachedRun.Load(); n < cachedRunSkip {
		t.Fatalf("%d cached reads in a row after reading %d chunks of a cached file, want >= %d", n, len(want), cachedRunSkip)
	}
	r.Prefetch(1)
	if advised != 1 {
		t.Errorf("Prefetch after %d cached reads advised the kernel", len(want))
	}

	// Drop the file's pages (written back, they leave the cache on
	// DONTNEED), then read chunk 5's first page back without read-ahead:
	// the chunk's read then finds only its start cached and reads the rest
	// from the disk.
	f, err := os.Open(r.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	fd := int(f.Fd())
	off, n := r.x.span(5)
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 1), off); err != nil {
		t.Fatal(err)
	}
	// mincore tells what is cached without reading (a probing read would
	// start read-ahead of the rest).
	resident, pages := residentPages(t, f, off, n)
	dropped := resident > 0 && resident < pages
	got, err := r.LoadChunk(5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want[5]) {
		t.Errorf("chunk 5 read after its pages were dropped differs from its first read")
	}
	if !dropped {
		t.Logf("%d of chunk 5's %d pages cached: the partly cached read was not checked", resident, pages)
		return
	}
	if n := r.cachedRun.Load(); n != 0 {
		t.Errorf("%d cached reads in a row after a read from the disk, want 0", n)
	}
	if r.Prefetch(6); advised != 2 {
		t.Errorf("Prefetch after a read from the disk advised %d times in all, want 2", advised)
	}
}

// residentPages reports how many of the pages holding [off, off+n) of f are
// in the page cache, and how many pages that is.
func residentPages(t *testing.T, f *os.File, off, n int64) (resident, pages int) {
	t.Helper()
	ps := int64(os.Getpagesize())
	lo := off &^ (ps - 1)
	m, err := unix.Mmap(int(f.Fd()), lo, int(off+n-lo), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (int64(len(m))+ps-1)/ps)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// TestReadCachedWholeRange: readCached returns a cached range whole, and
// nothing for a Blob that is not a file.
func TestReadCachedWholeRange(t *testing.T) {
	content := strings.Repeat("0123456789", 100000)
	f, err := os.Open(writeTemp(t, content))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := make([]byte, 300000)
	if got := readCached(f, p, 12345); got != len(p) || string(p) != content[12345:12345+len(p)] {
		t.Errorf("readCached of a cached range read %d of %d bytes (or other bytes)", got, len(p))
	}
	if got := readCached(struct{ *os.File }{f}, p, 0); got != 0 {
		t.Errorf("readCached through a wrapper read %d bytes, want 0", got)
	}
}
