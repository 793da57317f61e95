package corpus

// Arrange returns src's sequences laid out in order: the k-th sequence of
// the result is src's sequence order[k] (order is a permutation of
// 0..src.Len()-1), in every stream, with its id and parse error. A reader
// that visits a chunk's sequences in a known random order reads an
// arranged chunk front to back, so each cache line it loads serves the next
// visits too.
//
// The result has src's First; its IDs and Bad follow order, so it is not
// in ordinal order and sequence order[k] is found at k. It is written into
// dst's arrays where they are large enough (dst may be nil: new arrays),
// never into the shared arrays (Iota, Ones) dst may hold; src is not
// modified, and a one-hot stream whose row starts or values are the shared
// arrays keeps them shared, since the arrangement moves whole samples.
func Arrange(dst, src *Chunk, order []int32) *Chunk {
	if dst == nil {
		dst = &Chunk{}
	}
	n := len(order)
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
	return dst
}

// arrangeStream lays one stream out in order (see Arrange).
func arrangeStream(d, sd *StreamData, order []int32) {
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
	if SharedIota(rs) {
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
	if SharedOnes(sd.Values) {
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
	if SharedOnes(src) {
		return src
	}
	dst = reuse(ownValues(dst), len(src))
	copyRuns(dst, src, ss, order, 1)
	return dst
}

// arrangeDense lays out a dense stream's values in order.
func arrangeDense(d, sd *StreamData, order []int32) {
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
		o = copyRun(dst, src, o, lo, hi)
	}
}

// copyRun copies src[lo:hi] to dst at o and returns where it ends. A run
// of at most 16 items, the common case (a sequence's samples of a one-hot
// stream), is copied as one block of 16 when both arrays have room: the
// items past the run land where the next run will be written, and a copy
// of one fixed size is a few vector moves and no branch on the length,
// which varies from run to run and mispredicts.
func copyRun[T any](dst, src []T, o, lo, hi int) int {
	n := hi - lo
	if n <= 16 && o+16 <= len(dst) && lo+16 <= len(src) {
		// Through a local: an array assigned from one slice to another
		// directly compiles to a call of memmove (the two may overlap).
		block := *(*[16]T)(src[lo : lo+16])
		*(*[16]T)(dst[o : o+16]) = block
	} else {
		copy(dst[o:o+n], src[lo:hi])
	}
	return o + n
}

// ownRows and ownValues return a, or nil when a is a shared array, which
// must not be written.
func ownRows(a []int32) []int32 {
	if SharedIota(a) {
		return nil
	}
	return a
}

func ownValues(a []float32) []float32 {
	if SharedOnes(a) {
		return nil
	}
	return a
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
