package source

import (
	"math/bits"

	"github.com/batchprep/batchprep/corpus"
)

// chunkFinder maps a sequence ordinal to its chunk in O(1) for evenly sized
// chunks: table[b] is the chunk holding ordinal b<<shift, and the chunk of
// ordinal q is found by stepping forward from table[q>>shift]. The shift is
// chosen so that a bucket is no longer than the average chunk, which keeps
// the table at most twice the number of chunks and the walk short unless
// chunk sizes vary wildly, in which case a binary search inside the bucket's
// chunk range takes over.
type chunkFinder struct {
	start []int   // Layout.ChunkStart
	table []int32 // first chunk of each bucket, plus a sentinel
	shift uint
}

func newChunkFinder(l *corpus.Layout) chunkFinder {
	n, nc := l.NumSequences(), l.NumChunks()
	shift := uint(0)
	if avg := n / nc; avg > 1 {
		shift = uint(bits.Len(uint(avg)) - 1)
	}
	nb := (n-1)>>shift + 1
	f := chunkFinder{start: l.ChunkStart, table: make([]int32, nb+1), shift: shift}
	c := 0
	for b := 0; b < nb; b++ {
		q := b << shift
		for l.ChunkStart[c+1] <= q {
			c++
		}
		f.table[b] = int32(c)
	}
	f.table[nb] = int32(nc - 1)
	return f
}

// find returns the chunk holding ordinal q (0 <= q < number of sequences).
func (f *chunkFinder) find(q int) int {
	c := f.near(q)
	if f.start[c+1] <= q {
		c = f.findFrom(q)
	}
	return c
}

// near returns the first chunk of q's bucket or the one after, the one
// that holds q unless a chunk shorter than a bucket lies between. It takes
// no branch on which: in a random order such a branch is mispredicted for
// many of the sequences of buckets that cross a chunk boundary.
func (f *chunkFinder) near(q int) int {
	c := int(f.table[q>>f.shift])
	// Negative, its shift -1, exactly when chunk c ends past q.
	return c + 1 + (q-f.start[c+1])>>63
}

// findFrom is find where near misses.
func (f *chunkFinder) findFrom(q int) int {
	b := q >> f.shift
	lo, hi := int(f.table[b]), int(f.table[b+1])
	if hi-lo > 4 {
		for hi-lo > 0 { // first chunk in [lo, hi] whose end is past q
			m := int(uint(lo+hi) >> 1)
			if f.start[m+1] <= q {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	for f.start[lo+1] <= q {
		lo++
	}
	return lo
}

// gather assembles a rank's sequences into a Minibatch in three passes over
// a segment of the timeline instead of one sequence at a time: resolve every
// ordinal to a pinned chunk and a chunk-relative index, lay out the output
// offsets per stream, then copy. The loops carry no dependency from one
// sequence to the next and take no lock or map lookup per sequence, so the
// processor overlaps the cache misses of a randomized order (the rows of a
// window are scattered over several chunks) instead of paying them one after
// the other.
type gather struct {
	slot   []int32  // per chunk: its index in pins, or -1
	seen   []uint32 // per chunk: stamp when loadAhead last listed it
	stamp  uint32
	chunks []int32     // scratch: each sequence's chunk (Source.assemble)
	pins   []pin       // the chunks the segment uses, in first-use order
	refs   []ref       // the segment's delivered sequences, in timeline order
	ords   []int       // their ordinals
	unit   uint64      // bit s: every pin has one sample per sequence in stream s
	single uint64      // bit s: every pin has one entry per sample in sparse stream s
	ones   uint64      // bit s: every value of sparse stream s is 1 in every pin
	lo     []int32     // scratch: each ref's first sample in its chunk's stream
	rows   [][]float32 // scratch: each pin's dense values of the stream at hand
	sink   float32     // keeps touchDense's loads alive

	// copySparse's scratch: each pin's CSR arrays of the stream at hand,
	// and each ref's first and end entry in its chunk.
	rowStart, indices [][]int32
	values            [][]float32
	from, to          []int32

	// wanted[c] is chunk c's cache entry as loadAhead's want set it
	// for this assembly, at the cache's gen wantGen (chunkCache.getWanted);
	// nil for chunks it did not want. Cleared after the assembly, so that
	// no evicted chunk stays reachable from here.
	wanted  []*cacheEntry
	wantGen uint64

	maxPins int // most chunks pinned at once so far (for tests)
	ranked  int // sequences read at their rank in an arranged chunk (for tests)
}

// pin is a chunk a segment reads, with what the reader needs of it per
// sequence kept here, in the few lines of the pins array, rather than read
// from the chunk and its arrangement, a miss each in a large window.
type pin struct {
	c      int
	ch     *corpus.Chunk
	first  int // ch.First
	hasBad bool
	arr    *arrangement // how the chunk is arranged (nil: file layout)
	sweep  uint64       // the sweep arr follows (cacheEntry.sweep)
}

type ref struct {
	p int32 // index in pins
	i int32 // index of the sequence in its chunk's layout (see arrange.go)
}

func newGather(numChunks int) gather {
	g := gather{slot: make([]int32, numChunks), seen: make([]uint32, numChunks), wanted: make([]*cacheEntry, numChunks)}
	for i := range g.slot {
		g.slot[i] = -1
	}
	return g
}

// unpin forgets the segment's chunks, so that the cache alone decides what
// stays in memory.
func (g *gather) unpin() {
	for k := range g.pins {
		g.slot[g.pins[k].c] = -1
		g.pins[k] = pin{}
	}
	g.pins = g.pins[:0]
	g.refs = g.refs[:0]
	g.ords = g.ords[:0]
}

// flush appends the segment's sequences to m and unpins its chunks.
func (g *gather) flush(m *Minibatch) {
	if len(g.refs) == 0 {
		g.unpin()
		return
	}
	pins, refs := g.pins, g.refs
	n0 := len(m.Sequences)
	m.Sequences = grow(m.Sequences, len(refs))
	m.IDs = grow(m.IDs, len(refs))
	seqs, ids := m.Sequences[n0:], m.IDs[n0:]
	sd := g.firstUnitDense(m)
	if sd >= 0 {
		// The ids and the rows of one dense stream with one sample per
		// sequence, copied in the same loop: both memory accesses of a
		// sequence are in flight together, and the loop carries no
		// dependency from one sequence to the next.
		b := &m.Streams[sd]
		dim := b.Dim
		d0 := len(b.Dense)
		b.Dense = grow(b.Dense, len(refs)*dim)
		out := b.Dense[d0:]
		g.pinRows(sd)
		rows := g.rows
		copy(seqs, g.ords)
		for j, r := range refs {
			ch := pins[r.p].ch
			ids[j] = ch.IDs[r.i]
			lo := int(r.i) * dim
			copy(out[j*dim:(j+1)*dim], rows[r.p][lo:lo+dim])
		}
	} else {
		copy(seqs, g.ords)
		for j, r := range refs {
			ids[j] = pins[r.p].ch.IDs[r.i]
		}
	}
	if cap(g.lo) < len(refs) {
		g.lo = make([]int32, len(refs))
	}
	los := g.lo[:len(refs)]
	for s := range m.Streams {
		b := &m.Streams[s]
		base := len(b.SeqStart)
		b.SeqStart = grow(b.SeqStart, len(refs))
		ss := b.SeqStart[base-1:]
		at := ss[0]
		if s < 64 && g.unit&(1<<s) != 0 {
			// One sample per sequence in every pinned chunk: the offsets
			// are the indices themselves.
			if s == sd { // copied above
				for j := range refs {
					ss[j+1] = at + int32(j) + 1
				}
				continue
			}
			for j, r := range refs {
				los[j] = r.i
				ss[j+1] = at + int32(j) + 1
			}
			if !b.Sparse {
				g.touchDense(b, s)
				g.copyDenseUnit(b)
				continue
			}
		} else {
			// Output sequence starts and where each sequence's samples
			// begin in its chunk.
			for j, r := range refs {
				d := &pins[r.p].ch.Streams[s]
				lo := d.SeqStart[r.i]
				los[j] = lo
				at += d.SeqStart[r.i+1] - lo
				ss[j+1] = at
			}
		}
		if b.Sparse {
			g.copySparse(b, s, ss)
		} else {
			g.touchDense(b, s)
			g.copyDense(b, ss)
		}
	}
	g.unpin()
}

// touchDense loads the first value of every ref's rows of stream s. The
// loop is a few instructions per sequence with no dependency between
// iterations, so many cache misses are in flight at once; the copy that
// follows then finds the rows in cache. It is a software prefetch.
func (g *gather) touchDense(b *StreamBatch, s int) {
	dim := int32(b.Dim)
	g.pinRows(s)
	rows, los := g.rows, g.lo
	var sum float32
	for j, r := range g.refs {
		d := rows[r.p]
		if k := los[j] * dim; int(k) < len(d) {
			sum += d[k]
		}
	}
	g.sink = sum
}

// pinRows sets g.rows to each pin's dense values of stream s.
func (g *gather) pinRows(s int) {
	g.rows = g.rows[:0]
	for k := range g.pins {
		g.rows = append(g.rows, g.pins[k].ch.Streams[s].Dense)
	}
}

// firstUnitDense returns the first dense stream with one sample per
// sequence in every pin, or -1.
func (g *gather) firstUnitDense(m *Minibatch) int {
	for s := range min(len(m.Streams), 64) {
		if !m.Streams[s].Sparse && g.unit&(1<<s) != 0 {
			return s
		}
	}
	return -1
}

// copyDense copies the rows of every ref of stream s (touchDense has filled
// g.rows); ss are the output sequence starts of the segment (ss[0] is where
// it begins).
func (g *gather) copyDense(b *StreamBatch, ss []int32) {
	dim := int32(b.Dim)
	n0 := len(b.Dense)
	b.Dense = grow(b.Dense, int(ss[len(ss)-1]-ss[0])*b.Dim)
	out := b.Dense[n0:]
	rows, los := g.rows, g.lo
	for j, r := range g.refs {
		src := rows[r.p]
		w := (ss[j+1] - ss[j]) * dim
		o := (ss[j] - ss[0]) * dim
		lo := los[j] * dim
		if w <= 16 {
			dst, src := out[o:o+w], src[lo:lo+w]
			for k := range dst {
				dst[k] = src[k]
			}
		} else {
			copy(out[o:o+w], src[lo:lo+w])
		}
	}
}

// copyDenseUnit is copyDense for a stream with one sample per sequence.
func (g *gather) copyDenseUnit(b *StreamBatch) {
	dim := b.Dim
	n0 := len(b.Dense)
	b.Dense = grow(b.Dense, len(g.refs)*dim)
	out := b.Dense[n0:]
	rows, los := g.rows, g.lo
	for j, r := range g.refs {
		lo := int(los[j]) * dim
		copy(out[j*dim:(j+1)*dim], rows[r.p][lo:lo+dim])
	}
}

// grow extends s by n elements (their values are to be overwritten).
func grow[T any](s []T, n int) []T {
	if need := len(s) + n; need > cap(s) {
		t := make([]T, need, max(need, 2*cap(s)))
		copy(t, s)
		return t
	}
	return s[:len(s)+n]
}
