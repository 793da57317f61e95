package source

import "github.com/batchprep/batchprep/corpus"

// Arranged chunks.
//
// A window order delivers each minibatch from dozens of chunks, a few
// sequences from each, and a chunk's sequences in a random order: read in
// the layout the parser wrote, every sequence of every stream is a cache
// miss of its own (about eight per ATIS sequence), in chunks too many to
// stay in the processor's cache. When the randomizer can tell in advance in
// which order a sweep visits each chunk's sequences (randomize.VisitOrder),
// the cache lays a chunk out in that order as it loads it (on the loading
// goroutine, while the chunk is still in cache from its parse): the
// sequences the reader takes from a chunk one after the other are then
// side by side, and each cache line it loads serves the next visits to
// that chunk too.
//
// The arrangement changes where a sequence's data is, never what it is:
// arranged sequence k is the chunk's sequence order[k], and pos[i] says
// where sequence i went, so an assembly finds any sequence whichever sweep
// the arrangement was made for (a chunk resident across a sweep boundary
// is read in the next sweep's order from the previous sweep's layout: it
// is slower, never wrong). Chunks of more than warmLimit bytes keep their
// file layout, for memory (chunkCache.arrange).

// arrangement is how a chunk is laid out: its k-th sequence is sequence
// order[k] of the file's chunk, and sequence i is at pos[i].
type arrangement struct {
	order, pos []int32
	// next is where the sequence after the last one found is: the next
	// one the sweep visits, when the reader follows the order it was
	// arranged for. Only the reader's goroutine uses it.
	next int32
	// slow counts the sequences found through pos (for tests).
	slow int32
}

// find returns where sequence i (chunk-relative, file order) is. When the
// reader follows the order the chunk was arranged for, i is at next, and
// find reads order[next], the line it read for the previous visit, instead
// of pos[i], a random place of pos: a cache miss per sequence saved. Any
// other visit (another sweep's order, a rank's share, a seek) finds i
// through pos.
func (a *arrangement) find(i int) int {
	k := int(a.next)
	if k >= len(a.order) || int(a.order[k]) != i {
		k = int(a.pos[i])
		a.slow++
	}
	a.next = int32(k + 1)
	return k
}

// arrange returns src's sequences laid out so that its k-th sequence is
// src's sequence order[k] (a permutation of 0..src.Len()-1), and pos, the
// inverse: pos[order[k]] = k. It writes into dst's and pos's arrays when
// they are large enough (dst may be nil) and never into corpus's shared
// arrays; src is not modified, and the shared arrays of a one-hot stream
// (corpus.Iota row starts, corpus.Ones values) stay shared, as the
// arrangement keeps each sample's entries.
func arrange(dst, src *corpus.Chunk, order, pos []int32) (*corpus.Chunk, []int32) {
	if dst == nil {
		dst = &corpus.Chunk{}
	}
	n := len(order)
	pos = reuse(pos, n)
	for k, i := range order {
		pos[i] = int32(k)
	}
	dst.First = src.First
	dst.IDs = reuse(dst.IDs, n)
	for k, i := range order {
		dst.IDs[k] = src.IDs[i]
	}
	if src.Bad == nil {
		dst.Bad = nil
	} else {
		dst.Bad = reuse(dst.Bad, n)
		for k, i := range order {
			dst.Bad[k] = src.Bad[i]
		}
	}
	dst.Streams = reuse(dst.Streams, len(src.Streams))
	for s := range src.Streams {
		arrangeStream(&dst.Streams[s], &src.Streams[s], order)
	}
	return dst, pos
}

// arrangeStream lays one stream out in order (see arrange).
func arrangeStream(d, sd *corpus.StreamData, order []int32) {
	ss := sd.SeqStart
	d.SeqStart = reuse(d.SeqStart, len(ss))
	if len(ss) > 0 {
		d.SeqStart[0] = 0
	}
	at := int32(0)
	for k, i := range order {
		at += ss[i+1] - ss[i]
		d.SeqStart[k+1] = at
	}
	if sd.RowStart == nil {
		arrangeDense(d, sd, order)
		return
	}
	d.Dense = nil
	rs := sd.RowStart
	entries := len(sd.Indices)
	d.Indices = reuse(d.Indices, entries)
	if corpus.SharedIota(rs) {
		// One entry per sample: the entries follow the samples.
		d.RowStart = rs
		copyRuns(d.Indices, sd.Indices, ss, order, 1)
		d.Values = arrangeValues(d.Values, sd.Values, ss, order)
		return
	}
	d.RowStart = reuse(ownRows(d.RowStart), len(rs))
	if len(rs) > 0 {
		d.RowStart[0] = 0
	}
	o, e := 0, int32(0) // the next arranged sample, and its first entry
	for _, i := range order {
		lo, hi := ss[i], ss[i+1]
		base := rs[lo]
		off := e - base
		for j := lo + 1; j <= hi; j++ {
			o++
			d.RowStart[o] = rs[j] + off
		}
		end := rs[hi]
		copy(d.Indices[e:], sd.Indices[base:end])
		e += end - base
	}
	if corpus.SharedOnes(sd.Values) {
		d.Values = sd.Values
		return
	}
	d.Values = reuse(ownValues(d.Values), len(sd.Values))
	for k := range order {
		i := order[k]
		lo, hi := rs[ss[i]], rs[ss[i+1]]
		to := d.RowStart[d.SeqStart[k]]
		copy(d.Values[to:], sd.Values[lo:hi])
	}
}

// arrangeValues returns the values of a stream with one entry per sample
// in order: the shared ones themselves, or a copy into dst.
func arrangeValues(dst, src []float32, ss, order []int32) []float32 {
	if corpus.SharedOnes(src) {
		return src
	}
	dst = reuse(ownValues(dst), len(src))
	copyRuns(dst, src, ss, order, 1)
	return dst
}

// arrangeDense lays out a dense stream's values in order.
func arrangeDense(d, sd *corpus.StreamData, order []int32) {
	d.RowStart, d.Indices, d.Values = nil, nil, nil
	if sd.Dense == nil {
		d.Dense = nil
		return
	}
	ss := sd.SeqStart
	d.Dense = reuse(d.Dense, len(sd.Dense))
	if len(ss) == 0 || ss[len(ss)-1] == 0 {
		return
	}
	samples := int(ss[len(ss)-1])
	copyRuns(d.Dense, sd.Dense, ss, order, len(sd.Dense)/samples)
}

// copyRuns copies, for each k, the width-element items of sequence
// order[k] (samples ss[i] to ss[i+1]) from src, one after the other into
// dst.
func copyRuns[T any](dst, src []T, ss, order []int32, width int) {
	o := 0
	for _, i := range order {
		lo, hi := int(ss[i])*width, int(ss[i+1])*width
		n := hi - lo
		if n <= 16 {
			d, s := dst[o:o+n], src[lo:hi]
			for k := range d {
				d[k] = s[k]
			}
		} else {
			copy(dst[o:o+n], src[lo:hi])
		}
		o += n
	}
}

// reuse returns a's first n elements, or a new array when a is too short,
// with room for an eighth more: chunks differ in size, and a slightly
// larger one later would otherwise find every array too short.
func reuse[T any](a []T, n int) []T {
	if cap(a) >= n {
		return a[:n]
	}
	return make([]T, n, n+n/8)
}
