package source

import (
	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/kern"
)

// copySparse copies the CSR rows of every ref of stream s in four passes:
// each sequence's first and end entry (sparseBounds), a prefetch of its
// entries and of those its chunk's next visit reads (prefetchSparse, when
// the segment spans more than two chunks), the row starts (copyRowStarts),
// then the entries (copyEntries). When every pin has one entry per sample
// in stream s (g.single), a sequence's entries are its sample range and the
// chunks' row starts are not read; when every value is 1 in every pin
// (g.ones), the values are written, not read.
func (g *gather) copySparse(b *StreamBatch, s int, ss []int32) {
	g.pinSparse(s)
	single := s < 64 && g.single&(1<<s) != 0
	ones := s < 64 && g.ones&(1<<s) != 0
	total := g.sparseBounds(ss, single)
	if len(g.pins) > 2 {
		// A segment of one or two chunks (file order) reads each in
		// order, which the processor's own prefetcher follows.
		g.prefetchSparse(ones)
	}
	r0 := len(b.RowStart)
	b.RowStart = grow(b.RowStart, int(ss[len(ss)-1]-ss[0]))
	e0 := len(b.Indices)
	b.Indices = grow(b.Indices, total)
	b.Values = grow(b.Values, total)
	g.copyRowStarts(b.RowStart[r0:], int32(e0), ss, single)
	g.copyEntries(b.Indices[e0:], b.Values[e0:], ones)
}

// sparseBounds sets g.from and g.to to each ref's first and end entry in
// its chunk (ss: the segment's output sequence starts) and returns the
// segment's number of entries.
func (g *gather) sparseBounds(ss []int32, single bool) int {
	refs, los := g.refs, g.lo
	if cap(g.from) < len(refs) {
		g.from = make([]int32, len(refs))
		g.to = make([]int32, len(refs))
	}
	g.from, g.to = g.from[:len(refs)], g.to[:len(refs)]
	from, to := g.from, g.to
	if single {
		// One entry per sample: the entries are the samples' range, and
		// the row starts need not be read.
		for j := range refs {
			from[j], to[j] = los[j], los[j]+ss[j+1]-ss[j]
		}
		return int(ss[len(ss)-1] - ss[0])
	}
	total := 0
	rowStart := g.rowStart
	for j, r := range refs {
		rs := rowStart[r.p]
		lo, hi := los[j], los[j]+ss[j+1]-ss[j]
		f, e := rs[lo], rs[hi]
		from[j], to[j] = f, e
		total += int(e - f)
	}
	return total
}

// prefetchSparse prefetches every ref's entries (indices, and values
// unless ones) and the 32 entries after them. In a randomized order the
// rows of a segment are scattered over a window of parsed chunks, and a
// chunk is visited again a minibatch or so later, on average; when it is
// arranged (arrange.go), that visit reads the entries right after these,
// so their lines arrive long before they are needed, where a load would
// have waited for them during the copy. Prefetches, unlike loads, do not
// hold the loop up while they are in flight.
func (g *gather) prefetchSparse(ones bool) {
	from, to, indices, values := g.from, g.to, g.indices, g.values
	for j, r := range g.refs {
		if f, e := int(from[j]), int(to[j]); f < e {
			ix := indices[r.p]
			kern.Prefetch(ix[f:min(e+32, len(ix))])
			if !ones {
				v := values[r.p]
				kern.Prefetch(v[f:min(e+32, len(v))])
			}
		}
	}
}

// copyRowStarts writes the segment's output row starts into rows; its
// entries begin at output entry e0.
func (g *gather) copyRowStarts(rows []int32, e0 int32, ss []int32, single bool) {
	if single {
		for k := range rows {
			rows[k] = e0 + int32(k) + 1
		}
		return
	}
	los, from, to, rowStart := g.lo, g.from, g.to, g.rowStart
	o, at := e0, 0 // o: output entry where the ref's entries go
	for j, r := range g.refs {
		rs := rowStart[r.p]
		lo, hi := los[j], los[j]+ss[j+1]-ss[j]
		off := o - from[j]
		for _, v := range rs[lo+1 : hi+1] {
			rows[at] = v + off
			at++
		}
		o += to[j] - from[j]
	}
}

// copyEntries copies every ref's indices and values into outI and outV
// (values of 1 written without reading them when ones).
func (g *gather) copyEntries(outI []int32, outV []float32, ones bool) {
	if ones {
		copy(outV, corpus.Ones(len(outV))) // a vector copy, not a store per value
	}
	from, to, indices, values := g.from, g.to, g.indices, g.values
	o := int32(0)
	for j, r := range g.refs {
		f, e := int(from[j]), int(to[j])
		copyRun(outI, indices[r.p], int(o), f, e)
		if !ones {
			copyRun(outV, values[r.p], int(o), f, e)
		}
		o += int32(e - f)
	}
}

// pinSparse sets g.rowStart, g.indices and g.values to each pin's CSR
// arrays of stream s.
func (g *gather) pinSparse(s int) {
	g.rowStart, g.indices, g.values = g.rowStart[:0], g.indices[:0], g.values[:0]
	for k := range g.pins {
		d := &g.pins[k].ch.Streams[s]
		g.rowStart = append(g.rowStart, d.RowStart)
		g.indices = append(g.indices, d.Indices)
		g.values = append(g.values, d.Values)
	}
}

// copyRun copies src[lo:hi] to dst at o. A run of at most 16 items, the
// common case, is copied as one block of 16 when both arrays have room:
// the items past the run land where the next run will be written, and a
// copy of one fixed size is a few vector moves and no branch on the
// length, which varies from run to run and mispredicts.
func copyRun[T any](dst, src []T, o, lo, hi int) {
	n := hi - lo
	if n <= 16 && o+16 <= len(dst) && lo+16 <= len(src) {
		block := *(*[16]T)(src[lo : lo+16]) // vector moves, not memmove (corpus.copyRun)
		*(*[16]T)(dst[o : o+16]) = block
	} else {
		copy(dst[o:o+n], src[lo:hi])
	}
}
