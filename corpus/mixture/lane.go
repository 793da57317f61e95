package mixture

import (
	"fmt"
	"math/bits"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
)

// lane is one corpus of the mixture: its own nominal timeline (its
// Source's randomizer, hence the same order, whose windows are shuffled
// once for both) walked ahead of the data so that the mixture can plan a
// minibatch before asking the Source for it.
type lane struct {
	src    *source.Source
	layout *corpus.Layout
	weight uint64 // integer weight a_k (the mixture's weights sum to A)
	sweepM uint64 // samples per sweep
	sweepL uint64 // label samples per sweep
	maxLen uint64 // an upper bound of the longest sequence (seek's margin)

	pos    uint64 // own nominal position: samples of this corpus taken
	labels uint64 // label samples before pos

	cur      randomize.Cursor
	curSweep uint64
	ahead    []next
	ords     []int
	aheadAt  int
}

// next is a sequence drawn from a lane's cursor and not yet taken.
type next struct {
	ord     int
	samples uint32
}

func newLane(src *source.Source, l *corpus.Layout, weight uint64) (*lane, error) {
	ln := &lane{src: src, layout: l, weight: weight,
		sweepM: l.TotalSamples(), sweepL: l.TotalLabels(), maxLen: longest(l)}
	if err := ln.seek(0, false); err != nil {
		return nil, err
	}
	return ln, nil
}

// longest bounds a layout's longest sequence: the largest per-chunk sample
// sum when the corpus keeps those (its counts may be paged out of memory,
// and a sequence never spans chunks), else the largest count.
func longest(l *corpus.Layout) uint64 {
	var m uint64
	if l.ChunkSamples != nil {
		for _, s := range l.ChunkSamples {
			m = max(m, s)
		}
		return m
	}
	for _, s := range l.Samples {
		m = max(m, uint64(s))
	}
	return m
}

// seek places the lane at the first sequence boundary at or after own
// position q, counting the labels before it when labels is set. It costs
// one window of the randomizer's work, as Source.Seek does.
func (ln *lane) seek(q uint64, labels bool) error {
	M := ln.sweepM
	sw, off := q/M, q%M
	if sw >= (1<<64-1)/M-1 {
		return fmt.Errorf("mixture: own position %d is too far on the corpus's timeline (sweep %d of %d samples)", q, sw, M)
	}
	sweep := ln.src.Randomizer().Sweep(sw)
	cur, so := sweep.Seek(off)
	var lb uint64
	if so >= M {
		sw++
		cur, so = ln.src.Randomizer().Sweep(sw).Seek(0)
	} else if labels {
		lb = sweep.LabelsBefore(off)
	}
	hi, swL := bits.Mul64(sw, ln.sweepL)
	if hi != 0 || swL+lb < swL {
		return fmt.Errorf("mixture: own position %d: label count overflows", q)
	}
	ln.pos, ln.labels = sw*M+so, swL+lb
	ln.cur, ln.curSweep = cur, sw
	ln.ahead, ln.aheadAt = ln.ahead[:0], 0
	return nil
}

// peek returns the lane's next sequence, drawing a batch of them from the
// cursor (into the next sweep when this one ends) when none is pending.
func (ln *lane) peek() next {
	if ln.aheadAt == len(ln.ahead) {
		ln.draw(256)
	}
	return ln.ahead[ln.aheadAt]
}

func (ln *lane) draw(n int) {
	if cap(ln.ords) < n {
		ln.ords = make([]int, n)
	}
	q := ln.ahead[:0]
	for len(q) < n {
		ords := ln.ords[:n-len(q)]
		got := ln.cur.NextN(ords)
		for _, ord := range ords[:got] {
			q = append(q, next{ord: ord, samples: ln.layout.Samples[ord]})
		}
		if got < len(ords) {
			ln.curSweep++
			ln.cur, _ = ln.src.Randomizer().Sweep(ln.curSweep).Seek(0)
		}
	}
	ln.ahead, ln.aheadAt = q, 0
}

// take moves past the next sequence and returns it.
func (ln *lane) take(labels bool) next {
	u := ln.peek()
	ln.aheadAt++
	ln.pos += uint64(u.samples)
	if labels {
		ln.labels += uint64(ln.layout.LabelCount(u.ord))
	}
	return u
}
