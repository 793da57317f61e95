package source

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/internal/plural"
)

// Source walks a corpus's nominal timeline in minibatches. It is not safe for
// concurrent use; its only goroutines are chunk prefetches.
type Source struct {
	src     corpus.Source
	cfg     Config
	layout  *corpus.Layout
	streams []corpus.Stream
	rnd     randomize.Randomizer
	sweepM  uint64 // samples per sweep
	sweepL  uint64 // label samples per sweep
	fp      map[string]string
	cache   *chunkCache

	walk

	mb     Minibatch
	global []int    // ordinals of the current global minibatch
	at     []seqAt  // their sweeps and ranks
	own    []int    // this rank's part of global, with SplitChunks
	ownAt  []seqAt  // their sweeps and ranks
	prefix []uint64 // sample-count prefix sums of global
	finder chunkFinder
	gather gather
	need   []int // the chunks loadAhead and prefetchAfter list
	// hinted[c] is 1 + the sweep in which chunk c was last hinted to an
	// AheadHinter (hintAhead); nil until then.
	hinted []uint64
	// The window prefetchWindow last fetched (its sweep and its shared
	// chunk list) and the cache's gen right after.
	fetchedSweep uint64
	fetchedWin   *int32
	fetchedGen   uint64
	fetchedMoves uint64
}

// walk is the mutable timeline state of a Source.
type walk struct {
	// Committed: where the next minibatch starts.
	pos    uint64 // nominal position, always a sequence boundary
	labels uint64 // cumulative label count before pos (kept only when EpochSize counts labels)
	step   uint64

	// The walker: a cursor in sweep curSweep and the sequences already
	// drawn from it but not yet taken, ahead[aheadAt:].
	cur      randomize.Cursor
	curSweep uint64
	ahead    []upcoming
	ords     []int   // drawAhead's scratch
	ranks    []int32 // drawAhead's scratch
	aheadAt  int

	err error // sticky: set when a chunk failed to load
}

// ErrEmptyCorpus is returned by New for a corpus without sequences.
var ErrEmptyCorpus = errors.New("source: corpus has no sequences")

// New makes a Source at position 0 of src's timeline.
func New(src corpus.Source, cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := src.Layout()
	if l == nil || l.NumSequences() == 0 {
		return nil, ErrEmptyCorpus
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if cfg.Randomize.Kind == "" {
		cfg.Randomize.Kind = "window"
	}
	if cfg.Randomize.WindowChunks == 0 && cfg.Randomize.WindowSamples == 0 {
		cfg.Randomize.WindowChunks = 128
	}
	if !cfg.AllowNoChunks && !cfg.OwnsChunks(l.NumChunks()) {
		return nil, fmt.Errorf("%w: rank %d of %d, %s", ErrNoChunks, cfg.Rank, cfg.workers(), plural.Count(l.NumChunks(), "chunk"))
	}
	rnd, err := randomize.New(cfg.Randomize, l)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	s := &Source{
		src: src, cfg: cfg, layout: l, streams: src.Streams(), rnd: rnd,
		sweepM: l.TotalSamples(), sweepL: l.TotalLabels(),
	}
	s.fp = fingerprint(src, &cfg)
	s.cache = newChunkCache(src, rnd.MaxResidentChunks()+1+s.windowPrefetch()+s.parseAhead())
	s.cache.ordered = s.windowPrefetch() > 0
	if vo, ok := rnd.(randomize.VisitOrder); ok && !cfg.fileLayout {
		s.cache.visits, s.cache.waitVisits = vo, cfg.waitVisits
		if sv, ok := vo.(randomize.SharedVisits); ok {
			sv.ShareVisits()
		}
	}
	s.finder = newChunkFinder(l)
	s.gather = newGather(l.NumChunks())
	if err := s.Seek(0); err != nil {
		return nil, err
	}
	return s, nil
}

// Close drops the chunk prefetches that have not started and waits for
// those in flight, so nothing parses for a Source no longer read. The
// Source stays usable: a dropped chunk is loaded when it is needed.
func (s *Source) Close() error {
	s.cache.stopPrefetch()
	s.cache.releaseCounts()
	return nil
}

// Position returns the nominal position where the next minibatch starts.
func (s *Source) Position() uint64 { return s.pos }

// Epoch returns the epoch of the next minibatch.
func (s *Source) Epoch() int { return s.epochAt(s.pos, s.labels) }

// SweepSize returns M, the number of samples in one sweep.
func (s *Source) SweepSize() uint64 { return s.sweepM }

// Config returns the configuration in use, with defaults filled in.
func (s *Source) Config() Config { return s.cfg }

// Randomizer returns the randomizer whose orders the Source follows. A
// caller that walks the same timeline ahead of the Source (a mixture
// planning its minibatches) makes its cursors from it: a window's order
// is then computed once for both (randomize.SharedVisits), not shuffled
// again. Use it on the goroutine that reads the Source.
func (s *Source) Randomizer() randomize.Randomizer { return s.rnd }

// ChunkLoads returns how many chunk loads this Source started so far.
func (s *Source) ChunkLoads() int {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	return s.cache.loads
}

// ResidentChunks is the most parsed chunks the Source keeps alive at once:
// its cache's capacity (Randomizer.MaxResidentChunks()+1, plus
// PrefetchChunks when the next window is prefetched, or ParseAhead in file
// order from a corpus read around the page cache; invariant 9). A
// prefetch takes one of these places; the chunks an assembly pins never
// number more. Times the corpus's chunk size, it is the window's memory.
func (s *Source) ResidentChunks() int { return s.cache.cap }

// epochAt is the epoch of a minibatch starting at pos with labels label
// samples before it (invariant 4).
func (s *Source) epochAt(pos, labels uint64) int {
	switch s.cfg.EpochSize {
	case EpochFull:
		return int(pos / s.sweepM)
	case EpochInf:
		return 0
	}
	return int(labels / uint64(s.cfg.EpochSize))
}

// Seek moves to nominal position pos, rounded up to the next sequence
// boundary, and restarts the step count at 0 (the --start behaviour). It
// costs at most one window of the randomizer's work, whatever the sweep.
func (s *Source) Seek(pos uint64) error {
	M := s.sweepM
	sw, off := pos/M, pos%M
	if sw >= (1<<64-1)/M-1 {
		return fmt.Errorf("source: position %d is too far on the timeline (sweep %d of %d samples)", pos, sw, M)
	}
	sweep := s.rnd.Sweep(sw)
	cur, so := sweep.Seek(off)
	var lb uint64
	if so >= M { // off was inside the sweep's last sequence
		sw++
		sweep = s.rnd.Sweep(sw)
		cur, so = sweep.Seek(0)
	} else if s.countsLabels() {
		lb = sweep.LabelsBefore(off)
	}
	hi, swL := bits.Mul64(sw, s.sweepL)
	if hi != 0 || swL+lb < swL {
		return fmt.Errorf("source: position %d: label count overflows", pos)
	}
	s.pos, s.labels, s.step = sw*M+so, swL+lb, 0
	s.cur, s.curSweep = cur, sw
	s.ahead, s.aheadAt = s.ahead[:0], 0
	s.err = nil
	return nil
}

// upcoming is a sequence drawn from the cursor and not yet taken.
type upcoming struct {
	ord     int
	samples uint32
	seqAt
}

// seqAt is the sweep of a sequence on the timeline and its rank in its
// chunk's visit order (randomize.RankedCursor; -1: not known). A chunk
// arranged for that sweep (arrange.go) holds the sequence at its rank.
type seqAt struct {
	sweep uint64
	rank  int32
}

// peek returns the next sequence on the timeline, drawing a batch from the
// cursor (moving into the next sweep when this one is exhausted) when none
// is pending. Drawing in batches keeps the cursor calls and the sample-count
// lookups in tight loops whose cache misses overlap; reading ahead of the
// position does not change the order, which is a pure function of the
// sweep.
func (s *Source) peek(k int) *upcoming {
	if s.aheadAt == len(s.ahead) {
		s.drawAhead(k)
	}
	return &s.ahead[s.aheadAt]
}

// drawAhead draws about k sequences (at least 64, at most 1024).
func (s *Source) drawAhead(k int) {
	n := min(max(k, 64), 1024)
	if cap(s.ords) < n {
		s.ords = make([]int, n)
		s.ranks = make([]int32, n)
	}
	q := s.ahead[:0]
	for len(q) < n {
		ords := s.ords[:n-len(q)]
		var got int
		if rc, ok := s.cur.(randomize.RankedCursor); ok {
			ranks := s.ranks[:len(ords)]
			got = rc.NextRanked(ords, ranks)
			for i, ord := range ords[:got] {
				q = append(q, upcoming{ord: ord, seqAt: seqAt{sweep: s.curSweep, rank: ranks[i]}})
			}
		} else {
			got = s.cur.NextN(ords)
			for _, ord := range ords[:got] {
				q = append(q, upcoming{ord: ord, seqAt: seqAt{sweep: s.curSweep, rank: -1}})
			}
		}
		if got < len(ords) {
			s.curSweep++
			s.cur, _ = s.rnd.Sweep(s.curSweep).Seek(0)
		}
	}
	samples := s.layout.Samples
	for i := range q {
		q[i].samples = samples[q[i].ord]
	}
	s.ahead, s.aheadAt = q, 0
}

// ErrBadK is returned by NextK for a size below 1.
var ErrBadK = errors.New("source: minibatch size must be at least 1")

// Next returns the next minibatch with the schedule's size for the current
// epoch. The result is valid until the next call (see Minibatch).
func (s *Source) Next() (*Minibatch, error) {
	return s.next(s.cfg.Schedule.At(s.Epoch()))
}

// NextK returns the next minibatch of at most k samples (the first sequence
// is taken even when it alone has more), ignoring the schedule.
func (s *Source) NextK(k int) (*Minibatch, error) {
	if k < 1 {
		return nil, ErrBadK
	}
	return s.next(k)
}

func (s *Source) next(k int) (*Minibatch, error) {
	if s.err != nil {
		return nil, s.err
	}
	start, labels := s.pos, s.labels
	epoch := s.epochAt(start, labels)
	M := s.sweepM
	s.global, s.at = s.global[:0], s.at[:0]
	s.prefix = append(s.prefix[:0], 0)
	var total uint64
	pos := start
	endOfEpoch := false
	// Label counts matter only to epochs sized in label samples.
	countLabels := s.countsLabels()
	firstSweep := s.peek(k).sweep
	lastSweep := firstSweep
	for {
		u := s.peek(k)
		n := uint64(u.samples)
		if len(s.global) > 0 && total+n > uint64(k) {
			break
		}
		s.global = append(s.global, u.ord)
		s.at = append(s.at, u.seqAt)
		lastSweep = u.sweep
		s.aheadAt++
		total += n
		pos += n
		if countLabels {
			labels += uint64(s.layout.LabelCount(u.ord))
		}
		s.prefix = append(s.prefix, total)
		if s.epochEnds(epoch, pos, labels) {
			endOfEpoch = true
			break
		}
		if s.cfg.CutAtSweep && pos%M == 0 {
			break
		}
	}

	mb := &s.mb
	mb.reset(s.streams)
	// Chunks loaded from here on are arranged for the sweep the minibatch
	// ends in: those of an earlier sweep are resident already.
	s.cache.sweep = lastSweep
	ords, at := s.mine()
	if err := s.assemble(mb, ords, at); err != nil {
		s.err = fmt.Errorf("source: step %d (position %d): %w", s.step, start, err)
		return nil, s.err
	}
	mb.Step, mb.Epoch, mb.Sweep = s.step, epoch, firstSweep
	mb.Start, mb.End = start, pos
	mb.EndOfSweep = pos/M > start/M
	mb.EndOfEpoch = endOfEpoch
	s.pos, s.labels = pos, labels
	s.step++

	if s.cfg.Prefetch {
		s.prefetchAfter(k)
	}
	if endOfEpoch && s.cfg.OnEpochEnd != nil {
		s.cfg.OnEpochEnd(epoch, s.State())
	}
	return mb, nil
}

// mine returns this rank's sequences of the global minibatch: a contiguous
// group (invariant 6), or with SplitChunks those of the chunks it owns, in
// timeline order.
func (s *Source) mine() ([]int, []seqAt) {
	if !s.cfg.SplitsChunks() {
		lo, hi := splitRange(s.prefix, s.cfg.workers(), s.cfg.Rank)
		return s.global[lo:hi], s.at[lo:hi]
	}
	own, ownAt := s.own[:0], s.ownAt[:0]
	for j, ord := range s.global {
		if s.cfg.owns(s.finder.find(ord)) {
			own = append(own, ord)
			ownAt = append(ownAt, s.at[j])
		}
	}
	s.own, s.ownAt = own, ownAt
	return own, ownAt
}

// assemble appends the sequences ords (file ordinals, in timeline order;
// at: their sweeps and ranks) to mb. It works in segments that pin at most as many chunks as the cache
// holds, so a minibatch larger than the window never keeps more parsed
// chunks alive than the cache would.
func (s *Source) assemble(mb *Minibatch, ords []int, at []seqAt) error {
	g := &s.gather
	var chunks []int32
	if s.cfg.Prefetch {
		// Each sequence's chunk, looked up once for the load-ahead and the
		// copy. Without prefetch the copy looks them up as it goes, which
		// saves this pass.
		chunks = g.chunks[:0]
		for _, ord := range ords {
			chunks = append(chunks, int32(s.finder.find(ord)))
		}
		g.chunks = chunks
		s.loadAhead(chunks)
		defer s.forgetWanted()
	}
	limit := s.cache.cap
	for j, ord := range ords {
		var c int
		if chunks != nil {
			c = int(chunks[j])
		} else {
			c = s.finder.find(ord)
		}
		p := g.slot[c]
		if p < 0 {
			if len(g.pins) == limit {
				g.flush(mb)
			}
			var e *cacheEntry
			if s.cache.gen == g.wantGen {
				e = g.wanted[c]
			}
			ch, fl, err := s.cache.getWanted(c, e)
			if err != nil {
				g.unpin()
				return fmt.Errorf("chunk %d: %w", c, err)
			}
			p = int32(len(g.pins))
			if len(g.pins) == 0 {
				g.unit, g.single, g.ones = fl.unit, fl.single, fl.ones
			}
			g.unit &= fl.unit
			g.single &= fl.single
			g.ones &= fl.ones
			g.pins = append(g.pins, pin{c: c, ch: ch, first: ch.First, hasBad: fl.hasBad, arr: fl.arr, sweep: fl.sweep})
			g.slot[c] = p
			g.maxPins = max(g.maxPins, len(g.pins))
		}
		pn := &g.pins[p]
		var i int
		if a := at[j]; pn.arr != nil && a.rank >= 0 && a.sweep == pn.sweep {
			i = int(a.rank) // arranged in the order the cursor follows
			g.ranked++
		} else {
			i = ord - pn.first
			if pn.arr != nil {
				i = pn.arr.find(i)
			}
		}
		if pn.hasBad && pn.ch.Bad[i] != nil { // hasBad: Bad is not nil
			// Listed in timeline order among themselves (invariant 10).
			mb.Skipped = append(mb.Skipped, Skipped{Sequence: ord, Err: pn.ch.Bad[i]})
			continue
		}
		g.refs = append(g.refs, ref{p: p, i: int32(i)})
		g.ords = append(g.ords, ord)
	}
	g.flush(mb)
	return nil
}

// prefetchAfter starts loading, in goroutines, the chunk of the next
// sequence (rank 0 only: the next sequence is rarely another rank's) and,
// when the randomizer knows its chunk order (randomize.ChunkLookahead, file
// order), the chunks after it, as many as the cache holds besides it: file
// order then parses chunks c+1 and c+2 on both cores while the caller works
// through chunk c, instead of waiting for each at its boundary. These
// chunks become the cache's newest, so only chunks before c, not needed
// again in this sweep, make room for them.
func (s *Source) prefetchAfter(k int) {
	u := s.peek(k)
	s.cache.sweep = u.sweep
	c := s.finder.find(u.ord)
	la, ok := s.rnd.(randomize.ChunkLookahead)
	if !ok {
		if s.prefetchWindow(u.sweep, c) {
			return // c's window is resident or loading
		}
		if s.cfg.SplitsChunks() {
			if s.cfg.owns(c) {
				s.cache.prefetch(c)
			}
		} else if s.cfg.Rank == 0 {
			s.cache.prefetch(c)
		}
		return
	}
	list := append(s.need[:0], c)
	for len(list) < s.cache.cap {
		next, ok := la.ChunkAfter(u.sweep, list[len(list)-1])
		if !ok {
			break
		}
		list = append(list, next)
	}
	s.need = list
	s.cache.prefetch(list...)
	if h, ok := s.src.(corpus.AheadHinter); ok {
		s.hintAhead(h, la, u.sweep, list[len(list)-1])
	}
}

// hintAhead tells h, which reads ahead only what it is told of, of the
// chunks after c in sweep sw that its read-ahead holds, each once per
// sweep (file order's chunks beyond the cache's few).
func (s *Source) hintAhead(h corpus.AheadHinter, la randomize.ChunkLookahead, sw uint64, c int) {
	if s.hinted == nil {
		s.hinted = make([]uint64, len(s.gather.seen))
	}
	for range h.HintAhead() {
		next, ok := la.ChunkAfter(sw, c)
		if !ok {
			return
		}
		c = next
		if s.hinted[c] != sw+1 {
			s.hinted[c] = sw + 1
			h.Prefetch(c)
		}
	}
}

// ParseAhead is how many more chunks file order keeps parsed ahead of the
// one being read from a corpus that reads ahead only what it is told of
// (corpus.AheadHinter: a file read around the page cache): its reads wait
// for the disk now and then, where the page cache's readahead has the
// bytes at hand, and two chunks more take up the wait. A direct read of
// ATIS x150 in file order took 0.41-0.44 s with them against 0.47-0.50 s
// (the cached read: the same with and without; docs/performance-read.md).
const ParseAhead = 2

// parseAhead is the cache places for ParseAhead: with prefetching, a
// randomizer that knows its chunk order (file order) and a corpus that
// reads ahead only what it is told of; else 0.
func (s *Source) parseAhead() int {
	if _, ok := s.rnd.(randomize.ChunkLookahead); !ok || !s.cfg.Prefetch {
		return 0
	}
	if h, ok := s.src.(corpus.AheadHinter); !ok || h.HintAhead() == 0 {
		return 0
	}
	return ParseAhead
}

// windowPrefetch is the number of cache places kept for the next window's
// chunks: PrefetchChunks when the randomizer names its windows
// (randomize.WindowLookahead) and there is one worker or ranks split by
// chunks (a rank of a balanced split loads only the chunks of its own
// groups, invariant 6, which the window does not tell), else 0; and never more than
// a window can hold (MaxResidentChunks): places beyond would only keep
// older windows' chunks, which a small window with the default 64 would
// multiply.
func (s *Source) windowPrefetch() int {
	if _, ok := s.rnd.(randomize.WindowLookahead); !ok || !s.cfg.Prefetch || (s.cfg.workers() > 1 && !s.cfg.SplitChunks) {
		return 0
	}
	return min(s.cfg.PrefetchChunks, s.rnd.MaxResidentChunks())
}

// prefetchWindow starts loading, in the background, the first
// PrefetchChunks chunks of the window after chunk c's in sweep sw: they
// parse on the cores the caller leaves idle while it copies the current
// window's sequences, which would otherwise wait for the whole next window
// to parse when they get there. It runs after every minibatch and makes the
// current window's chunks, then these, the cache's newest (chunkCache.fetch,
// which also loads the current window's chunks not resident yet), so the
// chunks evicted to make room are older windows' ones, never these nor the
// current window's: with the places kept for them, a chunk is loaded once
// per sweep (TestLoadAheadKeepsWhatItNeeds). It reports whether it did,
// so that every chunk of c's window (that the rank owns) is resident or
// loading; the caller then need not prefetch c, which would only move it in
// the ring and make the next call move the next window's chunks again.
func (s *Source) prefetchWindow(sw uint64, c int) bool {
	n := s.windowPrefetch()
	if n == 0 {
		return false
	}
	cur, next := s.rnd.(randomize.WindowLookahead).Windows(sw, c)
	if next == nil {
		return false
	}
	same := sw == s.fetchedSweep && &cur[0] == s.fetchedWin && s.cache.gen == s.fetchedGen
	if same && s.cache.moves == s.fetchedMoves {
		// The ring is as this window's last fetch left it: another
		// would move the same chunks to the same places. The common case:
		// a want of an assembly's chunks, all resident, moves none
		// (chunkCache.ordered).
		return true
	}
	list := s.need[:0]
	// When nothing entered or left the cache since this window's last
	// fetch (gen), the moves since then (the reader's gets) were of this
	// window's chunks: with the next window's first ones, they are still
	// the newest, and only the latter need to be put back in front, so
	// that entering the next window evicts this one's chunks, not those.
	if !same {
		for _, ch := range cur {
			if !s.cfg.SplitsChunks() || s.cfg.owns(int(ch)) {
				list = append(list, int(ch))
			}
		}
	}
	for i, taken := 0, 0; i < len(next) && taken < n; i++ {
		if ch := int(next[i]); !s.cfg.SplitsChunks() || s.cfg.owns(ch) {
			list = append(list, ch)
			taken++
		}
	}
	s.need = list
	s.cache.prefetch(list...)
	s.fetchedSweep, s.fetchedWin, s.fetchedGen, s.fetchedMoves = sw, &cur[0], s.cache.gen, s.cache.moves
	return true
}

// loadAhead loads the first chunks of a minibatch (chunks: each sequence's
// chunk, in timeline order), as many distinct ones as the cache holds, in
// parallel (chunkCache.want).
func (s *Source) loadAhead(chunks []int32) {
	g := &s.gather
	g.stamp++
	if g.stamp == 0 { // wrapped: forget every old mark
		clear(g.seen)
		g.stamp = 1
	}
	need := s.need[:0]
	whole := true
	for _, c := range chunks {
		if g.seen[c] == g.stamp {
			continue
		}
		if len(need) == s.cache.cap {
			whole = false
			break
		}
		g.seen[c] = g.stamp
		need = append(need, int(c))
	}
	s.need = need
	s.cache.want(need, g.wanted, whole)
	g.wantGen = s.cache.gen
}

// forgetWanted clears what loadAhead noted for the assembly that ends.
func (s *Source) forgetWanted() {
	for _, c := range s.need {
		s.gather.wanted[c] = nil
	}
}

// countsLabels tells whether epochs are sized in label samples, the only
// case where the cumulative label count is needed.
func (s *Source) countsLabels() bool {
	return s.cfg.EpochSize != EpochFull && s.cfg.EpochSize != EpochInf
}

// epochEnds reports whether a minibatch of epoch e that has reached pos
// (labels label samples) must end there (SPEC A3.4).
func (s *Source) epochEnds(e int, pos, labels uint64) bool {
	switch s.cfg.EpochSize {
	case EpochFull:
		return pos%s.sweepM == 0
	case EpochInf:
		return false
	}
	return labels/uint64(s.cfg.EpochSize) > uint64(e)
}
