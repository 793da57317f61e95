package ctf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
)

// tinyCorpus writes n one-line sequences of a few bytes each.
func tinyCorpus(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d |a %d |b %d:1\n", i, i%7, i%5)
	}
	return writeTemp(t, b.String())
}

// spilling makes every index pass spill its tables (into a temporary
// directory of the test's, which it checks is left empty), in pieces of
// piece bytes when piece > 0.
func spilling(t *testing.T, piece int64) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	old, oldPiece := spillAbove, indexPiece
	spillAbove = 0
	if piece > 0 {
		indexPiece = piece
	}
	t.Cleanup(func() {
		spillAbove, indexPiece = old, oldPiece
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("the index pass left %d files in %s (first %s)", len(ents), dir, ents[0].Name())
		}
	})
	return dir
}

// TestSpilledIndexEqualsHeapIndex: a pass that spills its tables to disk
// and maps them gives the index a heap pass gives, serially and in
// parallel pieces, with and without labels and the cache, and reads the
// same chunks; the temporary files are gone once it is mapped.
func TestSpilledIndexEqualsHeapIndex(t *testing.T) {
	path := tinyCorpus(t, 5000)
	data, _ := os.ReadFile(path)
	streams := []corpus.Stream{dense("a", 1), sparse("b", 5)}
	for _, cfg := range []Config{
		{Streams: streams, ChunkBytes: 4096},
		{Streams: streams, Label: "b", ChunkSequences: 333},
	} {
		want, err := buildIndexString(string(data), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range []int64{0, int64(len(data)) / 7} {
			for _, cache := range []bool{false, true} {
				func() {
					spilling(t, piece)
					c := cfg
					c.CacheIndex = cache
					c.CacheDir = t.TempDir()
					r, err := Open(path, c)
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					if r.x.m == nil || !sameIndex(r.x, want) {
						t.Fatalf("piece %d, cache %v: mapped %v, same index %v", piece, cache, r.x.m != nil, sameIndex(r.x, want))
					}
					if got, want := r.Layout().Hash(), want.layout().Hash(); got != want {
						t.Fatalf("layout hash %s, want %s", got, want)
					}
					for ch := range r.Layout().NumChunks() {
						if _, err := r.LoadChunk(ch); err != nil {
							t.Fatal(err)
						}
					}
				}()
			}
		}
	}
}

// TestMappedIndexMemory: with the tables mapped, what the index keeps on
// the heap is O(chunks): ten times the sequences in as many chunks take
// the same memory, where a heap index takes ten times as much.
func TestMappedIndexMemory(t *testing.T) {
	spilling(t, 0)
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), sparse("b", 5)}, Label: "b"}
	mem := func(n int, spill bool) int64 {
		if !spill {
			spillAbove = 1 << 62
			defer func() { spillAbove = 0 }()
		}
		c := cfg
		c.ChunkSequences = n / 20 // 20 chunks
		r, err := Open(tinyCorpus(t, n), c)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Layout().NumChunks() != 20 {
			t.Fatalf("%d chunks", r.Layout().NumChunks())
		}
		return r.x.memBytes()
	}
	small, large := mem(2000, true), mem(20000, true)
	if small != large || large > 20*100 {
		t.Errorf("mapped index: %d bytes for 2000 sequences, %d for 20000 (want equal, O(chunks))", small, large)
	}
	if heap := mem(20000, false); heap < 20000*16 {
		t.Errorf("heap index of 20000 sequences: %d bytes, want at least 16 per sequence", heap)
	}
}

// TestCacheCheckedPerChunk: a large cache is checked chunk by chunk as
// chunks are read; a damaged table stops the read of its chunk with an
// error naming the cache, and no other.
func TestCacheCheckedPerChunk(t *testing.T) {
	path := tinyCorpus(t, 3000)
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), sparse("b", 5)}, ChunkSequences: 100, CacheIndex: true}
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer func(v int64) { checkAtOpen = v }(checkAtOpen)
	checkAtOpen = 0
	cp := cachePath(path, &cfg)
	data, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	_, x, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	bad := 17 // a chunk; damage its first sequence's sample count
	off := x.pages.Off[2] + 4*x.chunkStart[bad]
	data[off] ^= 0x40
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []Error
	cfg.Warn = func(e Error) { warns = append(warns, e) }
	r, err = Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.SummaryNoTotals().FromCache || len(warns) > 0 {
		t.Fatalf("open: from cache %v, warnings %v", r.SummaryNoTotals().FromCache, warns)
	}
	for c := range r.Layout().NumChunks() {
		_, err := r.LoadChunk(c)
		if c == bad {
			if err == nil || !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), filepath.Base(cp)) {
				t.Fatalf("damaged chunk %d: %v, want a corrupt-cache error naming %s", c, err, cp)
			}
		} else if err != nil {
			t.Fatalf("chunk %d: %v", c, err)
		}
	}
}

// FuzzCacheChecks: whatever bytes decode, checking them never panics, and
// an index whose every chunk checks is a consistent index.
func FuzzCacheChecks(f *testing.F) {
	x, _ := buildIndexString("1 |a 1\n2 |a 2\n2 |a 3\n3 |a 1\n", Config{Streams: []corpus.Stream{dense("a", 1)}, Label: "a", ChunkSequences: 2})
	f.Add(encodeIndex(cacheKey{size: x.size}, x), uint16(0), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, at uint16, flip byte) {
		if len(data) > 0 {
			data[int(at)%len(data)] ^= flip
		}
		_, x, err := decodeIndex(data)
		if err != nil {
			return
		}
		for c := range x.chunkOff {
			if x.checkChunk(c) != nil {
				return
			}
		}
		if err := x.check(x.size); err != nil {
			t.Fatalf("every chunk checks, the index does not: %v", err)
		}
	})
}

// TestSpillFailsCleanly: a spill directory that cannot be written is an
// error of the open, not a partial index.
func TestSpillFailsCleanly(t *testing.T) {
	path := tinyCorpus(t, 100)
	defer func(v int64) { spillAbove = v }(spillAbove)
	spillAbove = 0
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	_, err := Open(path, Config{Streams: []corpus.Stream{dense("a", 1), sparse("b", 5)}})
	if err == nil || !strings.Contains(err.Error(), "spill") {
		t.Fatalf("Open with an unwritable spill directory: %v", err)
	}
}

// TestIndexPassMemory: the pass over a file whose index spills holds a few
// pieces' sequences and the pending chunk, not the file's: its live heap
// stays far below what the heap index alone takes (12 bytes a sequence).
func TestIndexPassMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 2 M sequences")
	}
	const n = 2_000_000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d |a 1:1\n", i%1000)
	}
	path := writeTemp(t, b.String())
	spilling(t, 256<<10)
	defer func(v int64) { maxPiece = v }(maxPiece)
	maxPiece = 256 << 10 // about 24 K sequences, 0.5 MB of them, a piece
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	base := liveHeap()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var top uint64
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(time.Millisecond):
				top = max(top, liveHeap())
			}
		}
	}()
	r, err := Open(path, Config{Streams: []corpus.Stream{sparse("a", 5)}, ChunkSequences: 5000})
	close(stop)
	top := <-peak
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.x.m == nil || r.Layout().NumSequences() != n {
		t.Fatalf("mapped %v, %d sequences", r.x.m != nil, r.Layout().NumSequences())
	}
	heapIndex := uint64(12 * n)
	if grew := top - min(top, base); grew > heapIndex/3 {
		t.Errorf("the pass's live heap grew by %d bytes at its peak, want at most a third of the %d a heap index takes", grew, heapIndex)
	}
}

// liveHeap is the live heap the last collection measured.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
