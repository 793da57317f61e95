package randomize

import (
	"sort"

	"github.com/batchprep/batchprep/corpus"
)

// none visits sequences in file order in every sweep.
type none struct {
	l     *corpus.Layout
	start []uint64 // start[i] = sweep offset of sequence i; start[N] = M
}

func newNone(l *corpus.Layout) *none {
	st := make([]uint64, len(l.Samples)+1)
	for i, s := range l.Samples {
		st[i+1] = st[i] + uint64(s)
	}
	return &none{l: l, start: st}
}

func (n *none) Sweep(uint64) Sweep     { return n }
func (n *none) MaxResidentChunks() int { return 2 }

func (n *none) Seek(off uint64) (Cursor, uint64) {
	i := sort.Search(len(n.start)-1, func(i int) bool { return n.start[i] >= off })
	return &seqCursor{next: i, end: len(n.start) - 1}, n.start[i]
}

type seqCursor struct{ next, end int }

func (c *seqCursor) Next() (int, bool) {
	if c.next >= c.end {
		return 0, false
	}
	c.next++
	return c.next - 1, true
}
