package randomize

import (
	"sort"

	"github.com/batchprep/batchprep/corpus"
)

// none visits sequences in file order in every sweep.
type none struct {
	l      *corpus.Layout
	start  []uint64 // start[i] = sweep offset of sequence i; start[N] = M
	labels []uint64 // labels[i] = label count of sequences 0..i-1; labels[N] = sweep total
}

func newNone(l *corpus.Layout) *none {
	st := make([]uint64, len(l.Samples)+1)
	lb := make([]uint64, len(l.Samples)+1)
	for i, s := range l.Samples {
		st[i+1] = st[i] + uint64(s)
		lb[i+1] = lb[i] + uint64(l.LabelCount(i))
	}
	return &none{l: l, start: st, labels: lb}
}

func (n *none) Sweep(uint64) Sweep     { return n }
func (n *none) MaxResidentChunks() int { return 2 }

// first returns the index of the first sequence starting at offset >= off.
func (n *none) first(off uint64) int {
	return sort.Search(len(n.start)-1, func(i int) bool { return n.start[i] >= off })
}

func (n *none) Seek(off uint64) (Cursor, uint64) {
	i := n.first(off)
	return &seqCursor{next: i, end: len(n.start) - 1}, n.start[i]
}

func (n *none) LabelsBefore(off uint64) uint64 { return n.labels[n.first(off)] }

type seqCursor struct{ next, end int }

func (c *seqCursor) Next() (int, bool) {
	if c.next >= c.end {
		return 0, false
	}
	c.next++
	return c.next - 1, true
}
