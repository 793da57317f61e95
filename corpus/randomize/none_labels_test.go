package randomize

import (
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// TestNoneLabelsBefore checks Sweep.LabelsBefore for the none order against a
// direct sum over the sequences before the one Seek returns, at every offset
// including ones inside sequences and the sweep end.
func TestNoneLabelsBefore(t *testing.T) {
	l := &corpus.Layout{
		ChunkStart: []int{0, 2, 4},
		Samples:    []uint32{3, 1, 2, 4},
		Labels:     []uint32{1, 0, 5, 2},
	}
	r, err := New(Config{Kind: "none"}, l)
	if err != nil {
		t.Fatal(err)
	}
	sw := r.Sweep(7)
	for off := uint64(0); off <= l.TotalSamples(); off++ {
		c, _ := sw.Seek(off)
		first, ok := c.Next()
		if !ok {
			first = l.NumSequences()
		}
		var want uint64
		for i := 0; i < first; i++ {
			want += uint64(l.LabelCount(i))
		}
		if got := sw.LabelsBefore(off); got != want {
			t.Errorf("LabelsBefore(%d) = %d, want %d", off, got, want)
		}
	}
}

// ChunkLookahead for none: file order enters chunk c+1 next.
func TestNoneChunkAfter(t *testing.T) {
	l := uniformLayout(5, 3, 1)
	la, ok := mustNew(t, Config{Kind: "none"}, l).(ChunkLookahead)
	if !ok {
		t.Fatal("none does not implement ChunkLookahead")
	}
	for c := range 5 {
		next, ok := la.ChunkAfter(7, c)
		if ok != (c < 4) || (ok && next != c+1) {
			t.Errorf("ChunkAfter(7, %d) = %d, %v", c, next, ok)
		}
	}
	for _, kind := range []string{"window", "cntk"} {
		if _, ok := mustNew(t, Config{Kind: kind}, l).(ChunkLookahead); ok {
			t.Errorf("%s implements ChunkLookahead; the source's prefetch assumes it does not", kind)
		}
	}
}
