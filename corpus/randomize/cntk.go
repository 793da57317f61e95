package randomize

import (
	"sort"
	"sync"

	"github.com/batchprep/batchprep/corpus"
)

// cntk reproduces CNTK's BlockRandomizer (invariants 5 and 6 in doc.go).
//
// Sweep s is computed eagerly and as a whole: the generator is seeded with
// seed+s (CNTK's additive derivation, kept for compatibility: cntk seed 42
// sweep 1 is seed 43 sweep 0) and its stream runs from the start of the
// sweep, so no position can be found without replaying everything before it.
// The last sweep computed is cached; seeking into another sweep costs
// O(sequences of the sweep), the one exception to SPEC A2.2.
type cntk struct {
	*layoutSums
	seed        uint64
	chunkWin    int    // window in chunks, when sampleWin == 0
	sampleWin   uint64 // window in samples, when > 0
	maxResident int

	mu   sync.Mutex
	last *cntkSweep
}

// cntkMarkStride is the spacing, in sweep positions, of the stored sample
// and label offsets that make Seek and LabelsBefore cheap within a sweep.
const cntkMarkStride = 64

// cntkSweep is one computed sweep.
type cntkSweep struct {
	r     *cntk
	sweep uint64
	// chunkOrder[k] is the file chunk placed k-th; window[k] the range
	// [begin, end) of placed chunks that placed chunk k may draw from.
	chunkOrder []int32
	window     []chunkRange
	order      []int32  // order[t] = ordinal of the sequence at position t
	sampleMark []uint64 // sampleMark[i] = sample offset of position i*stride
	labelMark  []uint64 // the same in label samples
}

type chunkRange struct{ begin, end int32 }

func (w chunkRange) has(k int32) bool { return w.begin <= k && k < w.end }

func newCNTK(cfg Config, l *corpus.Layout) (Randomizer, error) {
	sums, err := newLayoutSums(l)
	if err != nil {
		return nil, err
	}
	wc, ws, err := windowSizes(cfg)
	if err != nil {
		return nil, err
	}
	r := &cntk{layoutSums: sums, seed: cfg.Seed, chunkWin: wc, sampleWin: ws}
	n := l.NumChunks()
	span := min(wc, n)
	if ws > 0 {
		// A sample window around placed chunk k spans chunks k-a..k-1 whose
		// samples add up to at most half, and chunks k..k+b-1 whose samples
		// add up to less than half (or chunk k alone).
		half := ws / 2
		span = min(n, sums.mostChunksWithin(half, false)+max(1, sums.mostChunksWithin(half, true)))
	}
	r.maxResident = sums.residentBound(span)
	return r, nil
}

func (r *cntk) MaxResidentChunks() int { return r.maxResident }

// Sweep returns sweep s, computing it unless it is the cached one.
// It is safe for concurrent use.
func (r *cntk) Sweep(s uint64) Sweep {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != nil && r.last.sweep == s {
		return r.last
	}
	r.last = r.compute(s)
	return r.last
}

// compute runs CNTK's three steps for sweep s.
func (r *cntk) compute(s uint64) *cntkSweep {
	l := r.l
	n := l.NumChunks()
	sw := &cntkSweep{r: r, sweep: s}
	g := newMT64(r.seed + s) // wraps at 2^64, as size_t does

	// 1. Chunk order: CNTK's naive shuffle, j = rng() % n for every i.
	sw.chunkOrder = make([]int32, n)
	for i := range sw.chunkOrder {
		sw.chunkOrder[i] = int32(i)
	}
	naiveShuffle(sw.chunkOrder, g)

	// Place the chunks: sequence and sample start of each placed chunk.
	seqStart := make([]int32, n+1)
	sampleStart := make([]uint64, n+1)
	for k, c := range sw.chunkOrder {
		first, end := l.Chunk(int(c))
		seqStart[k+1] = seqStart[k] + int32(end-first)
		sampleStart[k+1] = sampleStart[k] + r.chunkSamples[c]
	}

	// 2. Window of every placed chunk.
	if r.sampleWin > 0 {
		sw.window = sampleWindows(sampleStart, r.sampleWin)
	} else {
		sw.window = chunkWindows(n, r.chunkWin)
	}

	// 3. Sequence swap, with a fresh generator on the same seed.
	N := l.NumSequences()
	sw.order = make([]int32, N)
	home := make([]int32, N) // placed chunk the sequence at position t came from
	for k, c := range sw.chunkOrder {
		first, _ := l.Chunk(int(c))
		for t := seqStart[k]; t < seqStart[k+1]; t++ {
			sw.order[t] = int32(first) + t - seqStart[k]
			home[t] = int32(k)
		}
	}
	g.Seed(r.seed + s)
	k := int32(0) // placed chunk of position t
	for t := int32(0); t < int32(N); t++ {
		for t >= seqStart[k+1] {
			k++
		}
		w := sw.window[k]
		lo, span := seqStart[w.begin], uint64(seqStart[w.end]-seqStart[w.begin])
		for {
			j := lo + int32(g.Uint64()%span)
			if !w.has(home[j]) {
				continue // the sequence at j may not move to t
			}
			if !sw.window[chunkAt(seqStart, j)].has(home[t]) {
				continue // the sequence at t may not move to j
			}
			sw.order[t], sw.order[j] = sw.order[j], sw.order[t]
			home[t], home[j] = home[j], home[t]
			break
		}
	}

	// Offsets every cntkMarkStride positions, and the sweep totals last.
	marks := N/cntkMarkStride + 2
	sw.sampleMark = make([]uint64, 0, marks)
	sw.labelMark = make([]uint64, 0, marks)
	var so, lo uint64
	for t, q := range sw.order {
		if t%cntkMarkStride == 0 {
			sw.sampleMark = append(sw.sampleMark, so)
			sw.labelMark = append(sw.labelMark, lo)
		}
		so += uint64(l.Samples[q])
		lo += uint64(l.LabelCount(int(q)))
	}
	sw.sampleMark = append(sw.sampleMark, so)
	sw.labelMark = append(sw.labelMark, lo)
	return sw
}

// naiveShuffle is CNTK's RandomShuffleMT: for every i, swap element i with
// element rng() % n. It is biased (n^n outcomes cannot spread evenly over
// n! orders); it is kept only because cntk must reproduce CNTK.
func naiveShuffle(a []int32, g *mt64) {
	n := uint64(len(a))
	for i := range a {
		j := g.Uint64() % n
		a[i], a[j] = a[j], a[i]
	}
}

// chunkAt returns the placed chunk holding position t (binary search over
// the placed chunks' sequence starts; there are few chunks).
func chunkAt(seqStart []int32, t int32) int32 {
	lo, hi := 0, len(seqStart)-1 // seqStart[lo] <= t < seqStart[hi]
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if seqStart[m] <= t {
			lo = m
		} else {
			hi = m
		}
	}
	return int32(lo)
}

// chunkWindows is CNTK's chunk-based window of w chunks: centred on k
// (half = w/2 before it), shifted left to fit at the end of the sweep.
func chunkWindows(n, w int) []chunkRange {
	size := max(w, 1)
	half := w / 2
	out := make([]chunkRange, n)
	for k := range out {
		b := 0
		if k > half {
			b = k - half
		}
		e := b + size
		if e > n {
			e = n
			b = max(n-size, 0)
		}
		out[k] = chunkRange{int32(b), int32(e)}
	}
	return out
}

// sampleWindows is CNTK's sample-based window of w samples. Each placed
// chunk starts from its left neighbour's window; the start moves right
// while it lies more than w/2 samples before the chunk's own start; the
// window then grows to the right while the next chunk ends less than w/2
// samples after the chunk's start. start[k] is the sample offset of placed
// chunk k, start[n] the sweep size.
func sampleWindows(start []uint64, w uint64) []chunkRange {
	n := len(start) - 1
	half := w / 2
	out := make([]chunkRange, n)
	b, e := 0, 1
	for k := range out {
		for start[k]-start[b] > half {
			b++
		}
		b = min(b, k)
		e = max(e, k+1)
		for e < n && start[e+1]-start[k] < half {
			e++
		}
		out[k] = chunkRange{int32(b), int32(e)}
	}
	return out
}

// Seek implements Sweep.
func (sw *cntkSweep) Seek(off uint64) (Cursor, uint64) {
	t, at, _ := sw.find(off)
	return &orderCursor{order: sw.order, next: t}, at
}

// LabelsBefore returns the label samples of the sequences before the one
// Seek(off) returns.
func (sw *cntkSweep) LabelsBefore(off uint64) uint64 {
	_, _, labels := sw.find(off)
	return labels
}

// find returns the first position t whose sequence starts at sweep offset
// >= off, that offset, and the label samples before t.
func (sw *cntkSweep) find(off uint64) (t int, at, labels uint64) {
	N := len(sw.order)
	if off >= sw.sampleMark[len(sw.sampleMark)-1] {
		return N, sw.sampleMark[len(sw.sampleMark)-1], sw.labelMark[len(sw.labelMark)-1]
	}
	// Last mark at or before off; the final mark (the sweep size) is > off.
	i := sort.Search(len(sw.sampleMark), func(i int) bool { return sw.sampleMark[i] > off }) - 1
	t, at, labels = i*cntkMarkStride, sw.sampleMark[i], sw.labelMark[i]
	l := sw.r.l
	for at < off {
		q := int(sw.order[t])
		at += uint64(l.Samples[q])
		labels += uint64(l.LabelCount(q))
		t++
	}
	return t, at, labels
}

// orderCursor walks a materialized order.
type orderCursor struct {
	order []int32
	next  int
}

func (c *orderCursor) Next() (int, bool) {
	if c.next >= len(c.order) {
		return 0, false
	}
	c.next++
	return int(c.order[c.next-1]), true
}

func (c *orderCursor) NextN(dst []int) int {
	n := min(len(dst), len(c.order)-c.next)
	for i, q := range c.order[c.next : c.next+n] {
		dst[i] = int(q)
	}
	c.next += n
	return n
}
