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
		if corpus.IsIota(d.RowStart) {
			d.RowStart = corpus.Iota(len(d.RowStart))
		}
		if corpus.AllOnes(d.Values) {
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

// reuse returns a[:n] when a can hold want elements, else a new slice of
// length n and capacity want plus 1/8: chunks of one corpus differ a little
// in size, and the slack lets a recycled array serve the next ones.
func reuse[T any](a []T, n, want int) []T {
	if cap(a) >= want {
		return a[:n]
	}
	return make([]T, n, want+want/8)
}
