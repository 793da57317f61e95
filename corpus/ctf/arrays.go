package ctf

import "github.com/batchprep/batchprep/corpus"

// The arrays a parse builds, and how they reach the chunk.

// shareView returns the stream arrays of work (the chunk parse built them
// in), except that a sparse stream's row starts of one entry per sample and
// values that are all 1 are corpus.Iota and corpus.Ones: the chunk shares
// those instead of a copy, whether copyOut or corpus.Arrange makes it.
func (p *chunkParser) shareView(work *corpus.Chunk) []corpus.StreamData {
	v := append([]corpus.StreamData(nil), work.Streams...)
	for s := range v {
		d := &v[s]
		if !p.sparse[s] {
			continue
		}
		if corpus.IsIota(d.RowStart) {
			d.RowStart = corpus.Iota(len(d.RowStart))
		}
		if corpus.AllOnes(d.Values) {
			d.Values = corpus.Ones(len(d.Values))
		}
	}
	return v
}

// copyOut copies the stream arrays v (see shareView) into d's own arrays,
// where they are large enough: the shared arrays stay shared and the
// arrays v lacks (a dense stream's CSR, a sparse stream's Dense) stay nil.
// d holds no shared array (parse released them).
func copyOut(d, v *corpus.StreamData) {
	d.SeqStart = copied(d.SeqStart, v.SeqStart)
	d.Dense = copiedOrNil(d.Dense, v.Dense)
	d.Indices = copiedOrNil(d.Indices, v.Indices)
	if corpus.SharedIota(v.RowStart) {
		d.RowStart = v.RowStart
	} else {
		d.RowStart = copiedOrNil(d.RowStart, v.RowStart)
	}
	if corpus.SharedOnes(v.Values) {
		d.Values = v.Values
	} else {
		d.Values = copiedOrNil(d.Values, v.Values)
	}
}

// copiedOrNil is copied, or nil when src is.
func copiedOrNil[T any](dst, src []T) []T {
	if src == nil {
		return nil
	}
	return copied(dst, src)
}

// copied returns src's elements in dst's array when it can hold them (else
// in a new one with 1/8 slack, see reuse).
func copied[T any](dst, src []T) []T {
	dst = reuse(dst, len(src), len(src))
	copy(dst, src)
	return dst
}

// reuse returns a[:n] when a can hold want elements, else a new slice of
// length n and capacity want plus 1/8: chunks of one corpus differ a little
// in size, and the slack lets a recycled array serve the next ones.
func reuse[T any](a []T, n, want int) []T {
	if cap(a) >= want {
		return a[:n]
	}
	return make([]T, n, want+want/8)
}

// storeBack sets *dst to s, a local copy of *dst that appends have
// lengthened. When they did not grow the array it writes only the length:
// storing the array pointer too would, while a collection is marking, cost
// a write barrier for every row parsed, each a pointer the collector then
// looks up (about 37 ms of a window-order read of ATIS x150, 15 in file
// order).
func storeBack[T any](dst *[]T, s []T) {
	if cap(s) == cap(*dst) {
		*dst = (*dst)[:len(s)]
		return
	}
	*dst = s
}
