package randomize

import (
	"fmt"
	"math"
	"slices"

	"github.com/batchprep/batchprep/corpus"
)

// DefaultWindowChunks is the window size in chunks when Config leaves both
// window sizes at zero (CNTK's default: 4 GB of 32 MB chunks).
const DefaultWindowChunks = 128

// layoutSums holds the per-chunk totals both randomizers need.
type layoutSums struct {
	l            *corpus.Layout
	chunkSamples []uint64 // samples of file chunk c
	chunkLabels  []uint64 // label samples of file chunk c
	total        uint64   // M, the sweep size
	totalLabels  uint64
}

func newLayoutSums(l *corpus.Layout) (*layoutSums, error) {
	if l.NumSequences() > math.MaxInt32 {
		return nil, fmt.Errorf("randomize: %d sequences is more than 2^31-1", l.NumSequences())
	}
	n := l.NumChunks()
	s := &layoutSums{l: l, chunkSamples: make([]uint64, n), chunkLabels: make([]uint64, n)}
	for c := range n {
		s.chunkSamples[c], s.chunkLabels[c] = l.ChunkTotals(c)
		s.total += s.chunkSamples[c]
		s.totalLabels += s.chunkLabels[c]
	}
	return s, nil
}

// windowSizes validates cfg's window fields and returns the chunk window
// (when samples == 0) or the sample window.
func windowSizes(cfg Config) (chunks int, samples uint64, err error) {
	if cfg.WindowChunks < 0 {
		return 0, 0, fmt.Errorf("randomize: window_chunks %d must not be negative", cfg.WindowChunks)
	}
	if cfg.WindowSamples > 0 {
		return 0, cfg.WindowSamples, nil
	}
	if cfg.WindowChunks == 0 {
		return DefaultWindowChunks, 0, nil
	}
	return cfg.WindowChunks, 0, nil
}

// mostChunksWithin returns the largest number of distinct chunks whose
// sample counts add up to at most limit (or to less than limit when strict):
// the smallest chunks taken first. It bounds window spans independently of
// any sweep's chunk order.
func (s *layoutSums) mostChunksWithin(limit uint64, strict bool) int {
	sorted := slices.Clone(s.chunkSamples)
	slices.Sort(sorted)
	var sum uint64
	for i, c := range sorted {
		sum += c
		if sum < c || sum > limit || (strict && sum == limit) { // sum < c: wrapped
			return i
		}
	}
	return len(sorted)
}

// residentBound turns a window span (in chunks) into MaxResidentChunks:
// the span plus the chunk being entered, but never more than there are
// chunks, and at least 1.
func (s *layoutSums) residentBound(span int) int {
	r := min(span+1, s.l.NumChunks())
	return max(r, 1)
}
