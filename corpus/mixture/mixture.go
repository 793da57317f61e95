package mixture

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/mix"
)

// Corpus is one member of a mixture: an open corpus, its weight, and a
// name for messages (a path, as the user wrote it).
type Corpus struct {
	Source corpus.Source
	Weight Weight
	Name   string
}

// Mixture walks the mixture's timeline in minibatches. It is not safe for
// concurrent use.
type Mixture struct {
	cfg     source.Config
	names   []string
	lanes   []*lane
	total   uint64 // A, the sum of the integer weights
	anchor  int    // the corpus whose sweeps are the mixture's (invariant 5)
	streams []corpus.Stream
	fp      map[string]string

	// Committed: where the next minibatch starts.
	pos, labels, step uint64
	err               error

	plan    []planned
	own     []planned // this rank's part of plan, with SplitChunks
	prefix  []uint64
	split   [][3]uint64 // per corpus: samples before, in and after this rank's group
	batches []*source.Minibatch
	cursor  []int // interleave's per-corpus places
	mb      Minibatch

	// seekSteps counts the sequences Seek walked past (for tests).
	seekSteps int
}

// planned is one sequence of the global minibatch being assembled.
type planned struct {
	corpus  int
	ord     int
	samples uint32
}

// ErrNoCorpora is returned by New for an empty list.
var ErrNoCorpora = errors.New("mixture: no corpora")

// New builds a mixture of corpora at position 0. cfg is the setting of the
// whole mixture, read as a Source reads it (schedule, epoch size, sweep
// cuts, workers, prefetch); corpus k's randomizer is cfg.Randomize with the
// seed mix.Seed(cfg.Randomize.Seed, k) (invariant 2). Every corpus must
// declare the same streams as corpus 0.
func New(corpora []Corpus, cfg source.Config) (*Mixture, error) {
	if len(corpora) == 0 {
		return nil, ErrNoCorpora
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mixture: %w", err)
	}
	ws := make([]Weight, len(corpora))
	for i, c := range corpora {
		ws[i] = c.Weight
	}
	ints, err := Integers(ws)
	if err != nil {
		return nil, err
	}
	if err := checkStreams(corpora); err != nil {
		return nil, err
	}
	m := &Mixture{cfg: cfg, streams: corpora[0].Source.Streams(),
		split: make([][3]uint64, len(corpora)), batches: make([]*source.Minibatch, len(corpora)),
		cursor: make([]int, 2*len(corpora))}
	for k, c := range corpora {
		sc := source.Config{Randomize: cfg.Randomize, EpochSize: source.EpochInf,
			Prefetch: cfg.Prefetch, PrefetchChunks: cfg.PrefetchChunks}
		sc.Randomize.Seed = mix.Seed(cfg.Randomize.Seed, uint64(k))
		if m.splitsChunks() {
			// Each corpus's source keeps this rank's chunks of its part of
			// every step; corpus k's chunk 0 is rank k mod W's.
			sc.Workers, sc.Rank, sc.SplitChunks, sc.ChunkShift = cfg.Workers, cfg.Rank, true, k
			sc.AllowNoChunks = true // checked over all corpora below
		} else if max(cfg.Workers, 1) > 1 {
			sc.PrefetchChunks = 0 // a rank loads its own groups' chunks
		}
		s, err := source.New(c.Source, sc)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("mixture: %w", &CorpusError{k, c.Name, err})
		}
		ln, err := newLane(s, c.Source.Layout(), ints[k])
		if err != nil {
			s.Close()
			m.Close()
			return nil, fmt.Errorf("mixture: %w", &CorpusError{k, c.Name, err})
		}
		m.lanes = append(m.lanes, ln)
		m.names = append(m.names, c.Name)
		m.total += ints[k]
	}
	if m.splitsChunks() && !m.ownsChunks(corpora) {
		m.Close()
		return nil, fmt.Errorf("mixture: %w: rank %d of %d, in all %d corpora", source.ErrNoChunks, cfg.Rank, cfg.Workers, len(corpora))
	}
	// The defaults the sources filled in (kind, window), with the
	// mixture's own seed.
	seed := cfg.Randomize.Seed
	m.cfg.Randomize = m.lanes[0].src.Config().Randomize
	m.cfg.Randomize.Seed = seed
	m.anchor = anchorOf(m.lanes)
	m.fp = m.fingerprint(ws)
	if err := m.Seek(0); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// anchorOf returns the anchor of the lanes (anchorIndex).
func anchorOf(lanes []*lane) int {
	sweep, weights := make([]uint64, len(lanes)), make([]uint64, len(lanes))
	for k, ln := range lanes {
		sweep[k], weights[k] = ln.sweepM, ln.weight
	}
	return anchorIndex(sweep, weights)
}

// checkStreams refuses corpora whose streams differ from corpus 0's, and a
// corpus that can tell it has no sample of a stream another corpus has.
func checkStreams(corpora []Corpus) error {
	first := corpora[0].Source.Streams()
	for k, c := range corpora[1:] {
		k++
		st := c.Source.Streams()
		for i, s := range first {
			if i >= len(st) {
				return fmt.Errorf("mixture: corpus %d (%s) lacks stream %q of corpus 0 (%s)", k, c.Name, s.Name, corpora[0].Name)
			}
			if st[i] != s {
				return fmt.Errorf("mixture: stream %d is %s in corpus 0 (%s) but %s in corpus %d (%s): every corpus must declare the same streams", i, streamString(s), corpora[0].Name, streamString(st[i]), k, c.Name)
			}
		}
		if len(st) > len(first) {
			return fmt.Errorf("mixture: corpus %d (%s) has stream %q, which corpus 0 (%s) lacks", k, c.Name, st[len(first)].Name, corpora[0].Name)
		}
	}
	type counted interface{ StreamSamples() []int64 }
	for i, s := range first {
		has, lacks := -1, -1
		for k, c := range corpora {
			sc, ok := c.Source.(counted)
			if !ok {
				continue
			}
			if n := sc.StreamSamples(); i < len(n) && n[i] > 0 {
				has = k
			} else if i < len(n) {
				lacks = k
			}
		}
		if has >= 0 && lacks >= 0 {
			return fmt.Errorf("mixture: corpus %d (%s) has no sample of stream %q, which corpus %d (%s) has", lacks, corpora[lacks].Name, s.Name, has, corpora[has].Name)
		}
	}
	return nil
}

func streamString(s corpus.Stream) string {
	out := fmt.Sprintf("%s:%d", s.Name, s.Dim)
	if s.Sparse {
		out += ":sparse"
	}
	return out
}

// Close closes every corpus's Source (their chunk prefetches).
func (m *Mixture) Close() error {
	for _, ln := range m.lanes {
		ln.src.Close()
	}
	return nil
}

// Position returns the mixture position where the next minibatch starts:
// samples of all corpora since the start.
func (m *Mixture) Position() uint64 { return m.pos }

// Epoch returns the epoch of the next minibatch.
func (m *Mixture) Epoch() int {
	switch m.cfg.EpochSize {
	case source.EpochFull:
		a := m.lanes[m.anchor]
		return int(a.pos / a.sweepM)
	case source.EpochInf:
		return 0
	}
	return int(m.labels / uint64(m.cfg.EpochSize))
}

// Config returns the mixture's setting, with defaults filled in.
func (m *Mixture) Config() source.Config { return m.cfg }

// Streams returns the streams every corpus declares.
func (m *Mixture) Streams() []corpus.Stream { return m.streams }

// Corpora returns the number of corpora.
func (m *Mixture) Corpora() int { return len(m.lanes) }

// Anchor returns the corpus whose sweeps are the mixture's (invariant 5).
func (m *Mixture) Anchor() int { return m.anchor }

// CorpusPositions returns, per corpus, the samples of it before the
// mixture's position (its own nominal position).
func (m *Mixture) CorpusPositions() []uint64 {
	out := make([]uint64, len(m.lanes))
	for k, ln := range m.lanes {
		out[k] = ln.pos
	}
	return out
}

// Weights returns the integer weights (reduced; w_k is Weights()[k] over
// their sum).
func (m *Mixture) Weights() []uint64 {
	out := make([]uint64, len(m.lanes))
	for k, ln := range m.lanes {
		out[k] = ln.weight
	}
	return out
}

// ChunkLoads returns how many chunk loads the corpora's Sources started.
func (m *Mixture) ChunkLoads() int {
	n := 0
	for _, ln := range m.lanes {
		n += ln.src.ChunkLoads()
	}
	return n
}

// ResidentChunks is the most parsed chunks the mixture keeps alive at once:
// the sum of its Sources' (each corpus has its own window).
func (m *Mixture) ResidentChunks() []int {
	out := make([]int, len(m.lanes))
	for k, ln := range m.lanes {
		out[k] = ln.src.ResidentChunks()
	}
	return out
}

func (m *Mixture) countsLabels() bool {
	return m.cfg.EpochSize != source.EpochFull && m.cfg.EpochSize != source.EpochInf
}

// Seek moves to mixture position p, rounded up to the next sequence
// boundary of the mixture's order, and restarts the step count at 0. It
// places every corpus at key t0 = p - (sum of the corpora's longest
// sequences), which lies at or before p (invariant 6), and walks the merged
// order from there: one window of randomizer work per corpus plus at most
// that sum of sequences, whatever p is.
func (m *Mixture) Seek(p uint64) error {
	var margin uint64
	for _, ln := range m.lanes {
		margin = satAdd(margin, ln.maxLen)
	}
	t0 := p - min(p, margin)
	labels := m.countsLabels()
	m.seekSteps = 0
	var total uint64
	for _, ln := range m.lanes {
		if err := ln.seek(ceilShare(t0, ln.weight, m.total), labels); err != nil {
			return err
		}
		total = satAdd(total, ln.pos)
	}
	for total < p {
		u := m.lanes[m.pick()].take(labels)
		total = satAdd(total, uint64(u.samples))
		m.seekSteps++
	}
	if total == 1<<64-1 {
		return fmt.Errorf("mixture: position %d is too far on the timeline", p)
	}
	var lab uint64
	for k, ln := range m.lanes {
		if err := ln.src.Seek(ln.pos); err != nil {
			return fmt.Errorf("mixture: %w", &CorpusError{k, m.names[k], err})
		}
		var c uint64
		if lab, c = bits.Add64(lab, ln.labels, 0); c != 0 {
			return fmt.Errorf("mixture: position %d: label count overflows", p)
		}
	}
	m.pos, m.labels, m.step, m.err = total, lab, 0, nil
	return nil
}

func satAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return 1<<64 - 1
	}
	return s
}

// ErrBadK is returned by NextK for a size below 1.
var ErrBadK = errors.New("mixture: minibatch size must be at least 1")

// Next returns the next minibatch with the schedule's size for the current
// epoch. The result is valid until the next call.
func (m *Mixture) Next() (*Minibatch, error) {
	return m.next(m.cfg.Schedule.At(m.Epoch()))
}

// NextK returns the next minibatch of at most k samples (the first
// sequence is taken even when it alone has more), ignoring the schedule.
func (m *Mixture) NextK(k int) (*Minibatch, error) {
	if k < 1 {
		return nil, ErrBadK
	}
	return m.next(k)
}

func (m *Mixture) next(k int) (*Minibatch, error) {
	if m.err != nil {
		return nil, m.err
	}
	start, labels, epoch := m.pos, m.labels, m.Epoch()
	an := m.lanes[m.anchor]
	anStart := an.pos
	countLabels := m.countsLabels()
	m.plan = m.plan[:0]
	m.prefix = append(m.prefix[:0], 0)
	var total uint64
	endOfEpoch := false
	for {
		i := m.pick()
		ln := m.lanes[i]
		u := ln.peek()
		n := uint64(u.samples)
		if len(m.plan) > 0 && total+n > uint64(k) {
			break
		}
		before := ln.labels
		ln.take(countLabels)
		labels += ln.labels - before
		total += n
		m.plan = append(m.plan, planned{corpus: i, ord: u.ord, samples: u.samples})
		m.prefix = append(m.prefix, total)
		if m.epochEnds(epoch, i, labels) {
			endOfEpoch = true
			break
		}
		if m.cfg.CutAtSweep && i == m.anchor && ln.pos%ln.sweepM == 0 {
			break
		}
	}
	lo, hi := source.SplitRange(m.prefix, max(m.cfg.Workers, 1), m.cfg.Rank)
	if m.splitsChunks() {
		lo, hi = 0, len(m.plan) // the corpora's sources keep this rank's chunks
	}
	mb := &m.mb
	if err := m.fetch(mb, lo, hi); err != nil {
		step := m.step
		m.Seek(start) // the lanes went ahead: put them back
		m.step = step
		m.err = fmt.Errorf("mixture: step %d (position %d): %w", step, start, err)
		return nil, m.err
	}
	mb.Step, mb.Epoch, mb.Sweep = m.step, epoch, anStart/an.sweepM
	mb.Start, mb.End = start, start+total
	mb.EndOfSweep = an.pos/an.sweepM > anStart/an.sweepM
	mb.EndOfEpoch = endOfEpoch
	m.pos, m.labels = start+total, labels
	m.step++
	if endOfEpoch && m.cfg.OnEpochEnd != nil {
		m.cfg.OnEpochEnd(epoch, m.State())
	}
	return mb, nil
}

// epochEnds reports whether a minibatch of epoch e must end after the
// sequence of corpus i just taken, labels label samples in.
func (m *Mixture) epochEnds(e, i int, labels uint64) bool {
	switch m.cfg.EpochSize {
	case source.EpochFull:
		a := m.lanes[m.anchor]
		return i == m.anchor && a.pos%a.sweepM == 0
	case source.EpochInf:
		return false
	}
	return labels/uint64(m.cfg.EpochSize) > uint64(e)
}
