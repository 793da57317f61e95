package ctf

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/atomicfile"
)

// TestMappedIndexStaysSmall: reading a corpus whose index is mapped (its
// cache) through a sweep in file order and in window order keeps a small
// part of the index resident, not the whole: the reader releases each
// chunk's tables when it evicts the chunk, and the pages the kernel maps
// around a fault are let go of too; a closed source leaves little.
func TestMappedIndexStaysSmall(t *testing.T) {
	defer func(v int64) { keepResident = v }(keepResident)
	keepResident = 0 // page this small index as a large one
	var b strings.Builder
	const n = 200000
	for i := range n {
		fmt.Fprintf(&b, "%d |a %d:1\n", i, i%10)
	}
	path := filepath.Join(t.TempDir(), "tiny.ctf")
	if err := atomicfile.Write(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Streams: []corpus.Stream{{Name: "a", Dim: 10, Sparse: true}}, ChunkSequences: 1000, CacheIndex: true}
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for _, kind := range []string{"none", "window"} {
		r, err := Open(path, cfg) // the index comes from the cache, mapped
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		src, err := source.New(r, source.Config{Randomize: randomize.Config{Kind: kind, WindowChunks: 8}, Prefetch: true})
		if err != nil {
			t.Fatal(err)
		}
		var peak, sum int64
		steps := 0
		for {
			mb, err := src.NextK(500)
			if err != nil {
				t.Fatal(err)
			}
			_, m := r.IndexMemory()
			if m < 0 {
				t.Skip("no /proc/self/smaps")
			}
			peak, sum, steps = max(peak, m), sum+m, steps+1
			if mb.EndOfEpoch {
				break
			}
		}
		src.Close()
		if _, m := r.IndexMemory(); m > int64(r.x.pages.Off[0]) {
			t.Errorf("%s: %d bytes of the index resident after the source's Close, want at most its summary's %d", kind, m, r.x.pages.Off[0])
		}
		// 12 bytes per sequence: 2.4 MB of tables. The reader holds the
		// window and the next (16 chunks, 192 KB of tables), and keeps
		// cached those of the chunks it prefetches, which faults nearby
		// map too (about 2.5 times as much on average, here): every
		// table leaves the resident set after each 64th of them released.
		whole := int64(12 * n)
		if mean := sum / int64(steps); peak > whole/2 || mean > whole/4 {
			t.Errorf("%s: index resident: %d bytes at most, %d on average, of %d", kind, peak, mean, whole)
		}
	}
}

// needSpy records the chunks whose counts a reader says it needs.
type needSpy struct {
	corpus.Pager
	needed []int
}

func (s *needSpy) Need(c int) {
	s.needed = append(s.needed, c)
	s.Pager.Need(c)
}

// TestPrefetchNeedsTheTables: a prefetch of a chunk starts the read of its
// tables in a mapped index as well as of its bytes, so that a parse later
// finds both at hand (the first would otherwise be a read from the disk
// waited for in the middle of it, for a corpus larger than memory).
func TestPrefetchNeedsTheTables(t *testing.T) {
	defer func(v int64) { keepResident = v }(keepResident)
	keepResident = 0
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "%d |a %d:1\n", i, i%10)
	}
	path := filepath.Join(t.TempDir(), "tiny.ctf")
	if err := atomicfile.Write(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Streams: []corpus.Stream{{Name: "a", Dim: 10, Sparse: true}}, ChunkSequences: 1000, CacheIndex: true}
	for range 2 { // the second open maps the cached index
		r, err := Open(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Layout().Pager == nil {
			continue
		}
		spy := &needSpy{Pager: r.Layout().Pager}
		r.Layout().Pager = spy
		r.Prefetch(3)
		if !slices.Equal(spy.needed, []int{3}) {
			t.Fatalf("Prefetch(3) needed the tables of chunks %v, want [3]", spy.needed)
		}
		return
	}
	t.Fatal("the cached index is not paged")
}
