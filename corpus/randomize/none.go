package randomize

import (
	"sort"

	"github.com/batchprep/batchprep/corpus"
)

// none visits sequences in file order in every sweep. It keeps prefix sums
// per chunk, not per sequence, so its memory is O(chunks); a seek scans at
// most one chunk's sequences.
type none struct {
	l      *corpus.Layout
	start  []uint64 // start[c] = sweep offset of chunk c; start[C] = M
	labels []uint64 // labels[c] = label count of chunks 0..c-1
}

func newNone(l *corpus.Layout) *none {
	nc := l.NumChunks()
	st := make([]uint64, nc+1)
	lb := make([]uint64, nc+1)
	for c := 0; c < nc; c++ {
		s, lab := l.ChunkTotals(c)
		st[c+1] = st[c] + s
		lb[c+1] = lb[c] + lab
	}
	return &none{l: l, start: st, labels: lb}
}

func (n *none) Sweep(uint64) Sweep     { return n }
func (n *none) MaxResidentChunks() int { return 2 }

// first returns the first sequence starting at sweep offset >= off, its
// offset, and the label count of the sequences before it.
func (n *none) first(off uint64) (seq int, at, labels uint64) {
	nc := len(n.start) - 1
	// The last chunk whose start is <= off.
	c := sort.Search(nc, func(c int) bool { return n.start[c+1] > off })
	if c == nc {
		return n.l.NumSequences(), n.start[nc], n.labels[nc]
	}
	i, end := n.l.Chunk(c)
	at, labels = n.start[c], n.labels[c]
	for ; i < end && at < off; i++ {
		at += uint64(n.l.Samples[i])
		labels += uint64(n.l.LabelCount(i))
	}
	return i, at, labels
}

// ChunkAfter implements ChunkLookahead: file order enters chunk c+1 next,
// in every sweep.
func (n *none) ChunkAfter(_ uint64, c int) (int, bool) {
	return c + 1, c+1 < len(n.start)-1
}

func (n *none) Seek(off uint64) (Cursor, uint64) {
	i, at, _ := n.first(off)
	return &seqCursor{next: i, end: n.l.NumSequences()}, at
}

func (n *none) LabelsBefore(off uint64) uint64 {
	_, _, lab := n.first(off)
	return lab
}

type seqCursor struct{ next, end int }

func (c *seqCursor) Next() (int, bool) {
	if c.next >= c.end {
		return 0, false
	}
	c.next++
	return c.next - 1, true
}

func (c *seqCursor) NextN(dst []int) int {
	n := min(len(dst), c.end-c.next)
	for i := range dst[:n] {
		dst[i] = c.next + i
	}
	c.next += n
	return n
}
