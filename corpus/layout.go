package corpus

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync/atomic"
)

// Layout is the index of a corpus as the randomizer and the minibatch source
// see it: no data, only counts.
type Layout struct {
	// ChunkStart has one entry per chunk plus a final sentinel equal to the
	// number of sequences: chunk c holds ordinals [ChunkStart[c], ChunkStart[c+1]).
	ChunkStart []int
	// Samples[i] is sequence i's sample count as minibatch sizes count it
	// (lines, or lines of the defines-mb-size stream).
	Samples []uint32
	// Labels[i] is sequence i's sample count on the label stream, which is
	// what epoch sizes count. Nil means "same as Samples".
	Labels []uint32

	hash atomic.Pointer[string] // Hash's result, computed once
}

// NumSequences is the number of sequences in the corpus.
func (l *Layout) NumSequences() int { return len(l.Samples) }

// NumChunks is the number of chunks.
func (l *Layout) NumChunks() int { return len(l.ChunkStart) - 1 }

// Chunk returns the ordinal range [first, end) of chunk c.
func (l *Layout) Chunk(c int) (first, end int) { return l.ChunkStart[c], l.ChunkStart[c+1] }

// ChunkOf returns the chunk that holds sequence ordinal i (binary search).
func (l *Layout) ChunkOf(i int) int {
	lo, hi := 0, l.NumChunks()
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if l.ChunkStart[m] <= i {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// LabelCount returns sequence i's label sample count.
func (l *Layout) LabelCount(i int) uint32 {
	if l.Labels == nil {
		return l.Samples[i]
	}
	return l.Labels[i]
}

// TotalSamples is the sweep size M: the sum of Samples.
func (l *Layout) TotalSamples() uint64 {
	var t uint64
	for _, s := range l.Samples {
		t += uint64(s)
	}
	return t
}

// TotalLabels is the sum of label counts over one sweep.
func (l *Layout) TotalLabels() uint64 {
	if l.Labels == nil {
		return l.TotalSamples()
	}
	var t uint64
	for _, s := range l.Labels {
		t += uint64(s)
	}
	return t
}

// Validate checks invariants 1 and 2.
func (l *Layout) Validate() error {
	if len(l.ChunkStart) < 1 || l.ChunkStart[0] != 0 {
		return fmt.Errorf("corpus: layout: ChunkStart must start at 0")
	}
	if l.ChunkStart[len(l.ChunkStart)-1] != len(l.Samples) {
		return fmt.Errorf("corpus: layout: last ChunkStart %d != %d sequences", l.ChunkStart[len(l.ChunkStart)-1], len(l.Samples))
	}
	for c := 1; c < len(l.ChunkStart); c++ {
		if l.ChunkStart[c] <= l.ChunkStart[c-1] {
			return fmt.Errorf("corpus: layout: chunk %d is empty or out of order", c-1)
		}
	}
	for i, s := range l.Samples {
		if s == 0 {
			return fmt.Errorf("corpus: layout: sequence %d has no samples", i)
		}
	}
	if l.Labels != nil && len(l.Labels) != len(l.Samples) {
		return fmt.Errorf("corpus: layout: %d label counts for %d sequences", len(l.Labels), len(l.Samples))
	}
	return nil
}

// Hash identifies the layout: an FNV-64a hash, in hex, of the chunk
// boundaries and of every sequence's sample and label counts, which a saved
// position records so that it is not restored on another corpus. It reads
// every count once and keeps the result, so a Layout must not change after
// its first Hash (the corpora in this module build theirs once).
func (l *Layout) Hash() string {
	if h := l.hash.Load(); h != nil {
		return *h
	}
	h := fnv.New64a()
	buf := make([]byte, 0, 4096)
	flush := func() { h.Write(buf); buf = buf[:0] }
	put := func(v uint64) {
		if len(buf)+8 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint64(buf, v)
	}
	put(uint64(len(l.ChunkStart)))
	for _, c := range l.ChunkStart {
		put(uint64(c))
	}
	put(uint64(len(l.Samples)))
	for i, s := range l.Samples {
		put(uint64(s)<<32 | uint64(l.LabelCount(i)))
	}
	flush()
	sum := strconv.FormatUint(h.Sum64(), 16)
	l.hash.Store(&sum)
	return sum
}
