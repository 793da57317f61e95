package mapped

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestReleaseKeepsTheChunksAhead: chunks released leave the page cache a
// generation after the one they were released in, in runs; the tables of
// a chunk needed and not released, or needed again after its release,
// stay cached through every generation, and every table reads the same.
func TestReleaseKeepsTheChunksAhead(t *testing.T) {
	const n, per = 1 << 18, 1024 // 256 chunks of one page each; a generation is 32 of them
	data := make([]byte, 4*n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "t")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Synced, as an index file is: the page cache drops only clean pages.
	if _, err := f.Write(data); err != nil || f.Sync() != nil || f.Close() != nil {
		t.Fatal("writing the tables failed")
	}
	m, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	starts := make([]int, n/per+1)
	for c := range starts {
		starts[c] = c * per
	}
	tb := &Tables{File: m, Off: []int{0}, ChunkStart: starts}
	read := func(c int) {
		if got := U32s(m.Bytes()[4*per*c:], per); !bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), 4*per), data[4*per*c:4*per*(c+1)]) {
			t.Fatalf("chunk %d reads differently", c)
		}
	}
	cached := func(c int) bool {
		var vec [1]byte
		b := m.Bytes()[4*per*c:]
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), 4*per, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Skipf("mincore: %v", e)
		}
		return vec[0]&1 == 1
	}
	tb.Need(200)
	read(200)
	for c := range 100 {
		tb.Need(c)
		read(c)
		tb.Release(c)
		if c == 10 {
			tb.Need(10) // wanted again: it stays
			read(10)
		}
	}
	for _, c := range []int{200, 10, 99, 70} {
		if !cached(c) {
			t.Errorf("chunk %d left the page cache", c)
		}
	}
	for _, c := range []int{0, 5, 31, 40} {
		if cached(c) {
			t.Errorf("chunk %d, released two generations ago, is still in the page cache", c)
		}
		read(c)
	}
}
