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
