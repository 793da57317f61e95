package randomize

import (
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/mix"
)

// window is batchprep's own randomizer (invariants 7 to 9 in doc.go).
//
// Sweep s: the chunks are put in a uniformly random order by Fisher-Yates
// on mix.Rand(seed, s). That chunk sequence is cut into consecutive windows:
// W chunks each (the last may hold fewer), or, with a sample window W,
// chunks are added to a window until it holds >= W samples (the last window
// holds what is left). The sequences of window i, gathered in placed-chunk
// order and ordinal order inside each chunk, are shuffled by Fisher-Yates
// on mix.Rand(seed, s, i). The sweep visits window 0, then window 1, ...
// Both shuffles run front to back (see fisherYates), and a cursor shuffles
// its window lazily, one step per sequence, so a Seek into a window pays for
// the draws up to its target only; with ShareVisits it reads the window's
// order from the visit orders (visits.go) instead.
//
// A Sweep holds O(chunks) numbers; a cursor holds one window's ordinals.
type window struct {
	*layoutSums
	seed        uint64
	chunkWin    int    // chunks per window, when sampleWin == 0
	sampleWin   uint64 // samples per window, when > 0
	maxResident int

	mu     sync.Mutex
	plans  [2]*windowPlan  // the last two sweeps asked about (planOf)
	visits []*windowVisits // the last windows' visit orders (Visits)
	// share makes cursors take each window's order from visits
	// (ShareVisits); set before any cursor is made.
	share bool
}

// ShareVisits implements SharedVisits.
func (r *window) ShareVisits() { r.share = true }

// windowPlan is one sweep's windows, by file chunk.
type windowPlan struct {
	sweep  uint64
	sw     *windowSweep
	winOf  []int32 // winOf[c]: the window holding file chunk c
	placed []int32 // placed[c]: where file chunk c is in the sweep's chunk order
}

func newWindow(cfg Config, l *corpus.Layout) (Randomizer, error) {
	sums, err := newLayoutSums(l)
	if err != nil {
		return nil, err
	}
	wc, ws, err := windowSizes(cfg)
	if err != nil {
		return nil, err
	}
	r := &window{layoutSums: sums, seed: cfg.Seed, chunkWin: wc, sampleWin: ws}
	span := min(wc, l.NumChunks())
	if ws > 0 {
		// Every chunk of a window but its last adds up to less than ws.
		span = min(l.NumChunks(), sums.mostChunksWithin(ws, true)+1)
	}
	r.maxResident = sums.residentBound(span)
	return r, nil
}

func (r *window) MaxResidentChunks() int { return r.maxResident }

// Windows implements WindowLookahead. It keeps the last sweeps asked about,
// so a reader asking once per minibatch pays O(chunks) once per sweep; it
// is safe for concurrent use.
func (r *window) Windows(s uint64, c int) (cur, next []int32) {
	p := r.planOf(s)
	if c < 0 || c >= len(p.winOf) {
		return nil, nil
	}
	sw, i := p.sw, int(p.winOf[c])
	cur = sw.chunkOrder[sw.winStart[i]:sw.winStart[i+1]]
	if i+1 < sw.numWindows() {
		next = sw.chunkOrder[sw.winStart[i+1]:sw.winStart[i+2]]
	}
	return cur, next
}

// planOf returns sweep s's windows by chunk, from the two sweeps kept (a
// reader near a sweep's end asks about it and the next) or made anew.
func (r *window) planOf(s uint64) *windowPlan {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.plans {
		if p != nil && p.sweep == s {
			return p
		}
	}
	sw := r.Sweep(s).(*windowSweep)
	n := len(sw.chunkOrder)
	p := &windowPlan{sweep: s, sw: sw, winOf: make([]int32, n), placed: make([]int32, n)}
	for i := range sw.numWindows() {
		for k := sw.winStart[i]; k < sw.winStart[i+1]; k++ {
			ch := sw.chunkOrder[k]
			p.winOf[ch], p.placed[ch] = int32(i), k
		}
	}
	r.plans[1], r.plans[0] = r.plans[0], p
	return p
}

// windowSweep is one sweep's chunk order and window cuts.
type windowSweep struct {
	r     *window
	sweep uint64
	// chunkOrder[k] is the file chunk placed k-th; sampleStart[k] and
	// labelStart[k] the offsets where it starts (index n: the totals).
	chunkOrder  []int32
	sampleStart []uint64
	labelStart  []uint64
	// winStart[i] is the first placed chunk of window i; winStart[last] = n.
	winStart []int32
}

// Sweep costs O(chunks) whatever s is; it is safe for concurrent use.
func (r *window) Sweep(s uint64) Sweep {
	n := r.l.NumChunks()
	sw := &windowSweep{r: r, sweep: s, chunkOrder: make([]int32, n)}
	for i := range sw.chunkOrder {
		sw.chunkOrder[i] = int32(i)
	}
	fisherYates(sw.chunkOrder, mix.PCG(r.seed, s))
	sw.sampleStart = make([]uint64, n+1)
	sw.labelStart = make([]uint64, n+1)
	for k, c := range sw.chunkOrder {
		sw.sampleStart[k+1] = sw.sampleStart[k] + r.chunkSamples[c]
		sw.labelStart[k+1] = sw.labelStart[k] + r.chunkLabels[c]
	}
	sw.winStart = append(sw.winStart, 0)
	if r.sampleWin > 0 {
		var in uint64 // samples in the open window
		for k, c := range sw.chunkOrder {
			in += r.chunkSamples[c]
			if in >= r.sampleWin && k+1 < n {
				sw.winStart = append(sw.winStart, int32(k+1))
				in = 0
			}
		}
	} else {
		for k := r.chunkWin; k < n; k += r.chunkWin {
			sw.winStart = append(sw.winStart, int32(k))
		}
	}
	if n > 0 {
		sw.winStart = append(sw.winStart, int32(n))
	}
	return sw
}

// numWindows is the number of windows of the sweep.
func (sw *windowSweep) numWindows() int { return len(sw.winStart) - 1 }

// windowOffset returns the sample and label offsets where window i starts.
func (sw *windowSweep) windowOffset(i int) (samples, labels uint64) {
	k := sw.winStart[i]
	return sw.sampleStart[k], sw.labelStart[k]
}

// Seek implements Sweep: O(log chunks) to find the window, then one window
// gathered, shuffled and walked.
func (sw *windowSweep) Seek(off uint64) (Cursor, uint64) {
	c, at, _ := sw.find(off)
	return c, at
}

// LabelsBefore returns the label samples of the sequences before the one
// Seek(off) returns, at the cost of one Seek.
func (sw *windowSweep) LabelsBefore(off uint64) uint64 {
	_, _, labels := sw.find(off)
	return labels
}

func (sw *windowSweep) find(off uint64) (c *windowCursor, at, labels uint64) {
	nw := sw.numWindows()
	c = &windowCursor{sw: sw, win: nw}
	total := sw.sampleStart[len(sw.sampleStart)-1]
	if off >= total {
		return c, total, sw.labelStart[len(sw.labelStart)-1]
	}
	// Last window starting at or before off (window 0 starts at 0).
	i := sort.Search(nw, func(i int) bool { s, _ := sw.windowOffset(i); return s > off }) - 1
	c.load(i)
	at, labels = sw.windowOffset(i)
	l := sw.r.l
	if at < off {
		// The walk reads the sample counts of the window's sequences in
		// their visit order: the counts of all its chunks are asked for at
		// once (a mapped index reads them together), where the walk would
		// fault them in a page at a time.
		for _, ch := range sw.chunkOrder[sw.winStart[i]:sw.winStart[i+1]] {
			l.Need(int(ch))
		}
	}
	for at < off {
		q := c.step()
		at += uint64(l.Samples[q])
		labels += uint64(l.LabelCount(int(q)))
	}
	return c, at, labels
}

// windowCursor walks a sweep window by window, holding one window.
type windowCursor struct {
	sw   *windowSweep
	win  int     // current window; numWindows when exhausted
	seqs []int32 // the current window's ordinals; seqs[:next] are shuffled
	// shuffled says seqs is the window's whole visit order, computed
	// ahead for VisitOrder (windowVisits.order, read-only): the cursor
	// reads it instead of shuffling.
	shuffled bool
	ranks    []int32   // with shuffled, each sequence's rank (windowVisits.rank)
	own      []int32   // the cursor's own array, which seqs is when !shuffled
	next     int       // index in seqs of the next sequence
	g        *rand.PCG // the window's stream, positioned at step next
}

// load makes window i current: its visit order when VisitOrder computed it
// already (the same permutation: the same draws on the same starting
// order, see Visits), else its ordinals gathered in placed-chunk order,
// ready to be shuffled step by step.
func (c *windowCursor) load(i int) {
	sw := c.sw
	c.win, c.next = i, 0
	if sw.r.share {
		v, _ := sw.r.visitsOf(sw.sweep, i)
		v.once.Do(func() { v.compute(sw, i) })
		c.seqs, c.ranks, c.shuffled, c.g = v.order, v.rank, true, nil
		return
	}
	if order, rank := sw.r.computedOrder(sw.sweep, i); order != nil {
		c.seqs, c.ranks, c.shuffled, c.g = order, rank, true, nil
		return
	}
	l := sw.r.l
	chunks := sw.chunkOrder[sw.winStart[i]:sw.winStart[i+1]]
	size := 0
	for _, ch := range chunks {
		first, end := l.Chunk(int(ch))
		size += end - first
	}
	if cap(c.own) < size {
		c.own = make([]int32, 0, size)
	}
	c.seqs, c.ranks, c.shuffled = c.own[:0], nil, false
	for _, ch := range chunks {
		first, end := l.Chunk(int(ch))
		for q := first; q < end; q++ {
			c.seqs = append(c.seqs, int32(q))
		}
	}
	c.own = c.seqs
	c.g = mix.PCG(sw.r.seed, sw.sweep, uint64(i))
}

// step fixes and returns the sequence at position next of the window.
// The caller makes sure next < len(seqs).
func (c *windowCursor) step() int32 {
	if !c.shuffled {
		fisherYatesStep(c.seqs, c.next, c.g)
	}
	c.next++
	return c.seqs[c.next-1]
}

func (c *windowCursor) Next() (int, bool) {
	for c.next >= len(c.seqs) {
		if c.win+1 >= c.sw.numWindows() {
			c.win = c.sw.numWindows()
			return 0, false
		}
		c.load(c.win + 1)
	}
	return int(c.step()), true
}

func (c *windowCursor) NextN(dst []int) int { return c.NextRanked(dst, nil) }

// NextRanked implements RankedCursor: a window whose visit order was
// computed ahead (VisitOrder) has its ranks at hand; one the cursor
// shuffles itself has none (-1).
func (c *windowCursor) NextRanked(dst []int, ranks []int32) int {
	n := 0
	for n < len(dst) {
		if c.next >= len(c.seqs) {
			if c.win+1 >= c.sw.numWindows() {
				c.win = c.sw.numWindows()
				break
			}
			c.load(c.win + 1)
			continue
		}
		// The rest of the window, or of dst, in one tight loop: the
		// Fisher-Yates steps of fisherYatesStep inlined.
		seqs, g := c.seqs, c.g
		k := min(len(dst)-n, len(seqs)-c.next)
		if c.shuffled {
			for i, q := range seqs[c.next : c.next+k] {
				dst[n+i] = int(q)
			}
			if ranks != nil {
				copy(ranks[n:n+k], c.ranks[c.next:c.next+k])
			}
			n += k
			c.next += k
			continue
		}
		if ranks != nil {
			for i := n; i < n+k; i++ {
				ranks[i] = -1
			}
		}
		for i := c.next; i < c.next+k; i++ {
			j := i + int(uniform(g, uint64(len(seqs)-i)))
			seqs[i], seqs[j] = seqs[j], seqs[i]
			dst[n] = int(seqs[i])
			n++
		}
		c.next += k
	}
	return n
}
