package corpus

import "fmt"

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
