package ctf

import "github.com/batchprep/batchprep/corpus"

// The arrays a parse builds, and how they reach the chunk.

// shareView returns a chunk with sc's ids, errors and arrays, except that
// a sparse stream's row starts of one entry per sample and values that are
// all 1 are corpus.Iota and corpus.Ones (as parse's plain copy makes them),
// so that corpus.Arrange keeps them shared.
func (p *chunkParser) shareView(sc *corpus.Chunk) *corpus.Chunk {
	v := *sc
	v.Streams = append([]corpus.StreamData(nil), sc.Streams...)
	for s := range v.Streams {
		d := &v.Streams[s]
		if !p.sparse[s] {
			continue
		}
		if isIota(d.RowStart) {
			d.RowStart = corpus.Iota(len(d.RowStart))
		}
		if allOnes(d.Values) {
			d.Values = corpus.Ones(len(d.Values))
		}
	}
	return &v
}

// copied returns src's elements in dst's array when it can hold them (else
// in a new one with 1/8 slack, see reuse).
func copied[T any](dst, src []T) []T {
	dst = reuse(dst, len(src), len(src))
	copy(dst, src)
	return dst
}

// isIota reports whether a is 0, 1, ..., len(a)-1: every sample has one
// entry, and the chunk can share corpus.Iota instead of a copy.
func isIota(a []int32) bool {
	for i, v := range a {
		if v != int32(i) {
			return false
		}
	}
	return true
}

// allOnes reports whether every value of a is 1: the chunk can share
// corpus.Ones instead of a copy.
func allOnes(a []float32) bool {
	for _, v := range a {
		if v != 1 {
			return false
		}
	}
	return true
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
